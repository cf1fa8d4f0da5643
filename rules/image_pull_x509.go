package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ImagePullX509 finds image pulls that fail because the node does not trust the
// registry's TLS certificate.
var ImagePullX509 = &analyze.Rule{
	ID:       "image-pull-x509",
	Stage:    analyze.StageImage,
	Title:    "registry TLS certificate not trusted by the node",
	Doc:      imagePullX509Doc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullX509,
}

const imagePullX509Doc = `The container runtime reached the registry but refused its TLS certificate, so the pull
ended in the handshake: the pull error ends in Go's x509 verdict, "x509: certificate
signed by unknown authority" (a private CA the node does not trust, or a proxy that
intercepts TLS), "x509: certificate has expired or is not yet valid" (an expired
certificate, or a node clock far off), or "x509: certificate is valid for A, not B"
(the certificate does not name the registry host). Since Go 1.20 the verdict is prefixed
"tls: failed to verify certificate:". The container waits in ErrImagePull, then
ImagePullBackOff. No credentials were sent and nothing is known about the image.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl pull IMAGE
    openssl s_client -connect REGISTRY_HOST:PORT -showcerts </dev/null

## Fix

For a registry with a private CA, make the nodes trust it: for containerd, set the CRI
plugin's registry config_path and put the CA in /etc/containerd/certs.d/HOST:PORT/ca.crt
(or name it with ca = in that directory's hosts.toml); for CRI-O,
/etc/containers/certs.d/HOST:PORT/ca.crt; or the node's system trust store. Renew an
expired certificate (and check the node's clock); reissue a certificate whose names do
not include the host in the image reference, or pull by a name it does include.
`

func imagePullX509(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range v.PullAttemptsOf(analyze.PullErrorX509) {
		out = append(out, x509Finding(v, a))
	}
	return out
}

// x509Problem says in words what Go's x509 verdict means for the registry's certificate.
func x509Problem(verdict, host string) string {
	switch {
	case strings.Contains(verdict, "unknown authority"):
		return "its certificate is signed by a certificate authority the node does not trust"
	case strings.Contains(verdict, "expired or is not yet valid"):
		return "its certificate has expired or is not yet valid (or the node's clock is wrong)"
	case x509NameMismatch(verdict):
		return fmt.Sprintf("its certificate does not name %s", strings.Split(host, ":")[0])
	}
	return "the node cannot verify its certificate"
}

// x509NameMismatch recognizes crypto/x509's HostnameError (verify.go): the certificate
// is valid, but not for the host the image reference names.
func x509NameMismatch(verdict string) bool {
	for _, s := range []string{"is valid for", "not valid for any names", "doesn't contain any IP SANs", "legacy Common Name field"} {
		if strings.Contains(verdict, s) {
			return true
		}
	}
	return false
}

func x509Finding(v *analyze.View, a analyze.PullAttempt) analyze.Finding {
	pod := a.Pod.Obj
	host := analyze.RegistryHost(a.Image)
	verdict := strings.TrimSpace(analyze.PullX509Pattern.FindString(a.Text))
	needle := verdict
	if i := strings.Index(verdict, "x509: "); i >= 0 {
		needle = verdict[i:]
	}
	node := pod.Spec.NodeName
	on := ""
	if node != "" {
		on = " on node " + node
	}
	cause := fmt.Sprintf("image %q of container %s cannot be pulled%s: the TLS handshake with registry %s failed because %s (%s)",
		a.Image, a.Container.Name, on, host, x509Problem(verdict, host), verdict)
	fix := fmt.Sprintf("Make the nodes trust the CA that signed %s's certificate (containerd, with the CRI plugin's registry "+
		"config_path set: /etc/containerd/certs.d/%s/ca.crt, or ca = in that directory's hosts.toml; CRI-O: "+
		"/etc/containers/certs.d/%s/ca.crt), or serve the registry with a certificate from a CA the nodes already trust.", host, host, host)
	switch {
	case strings.Contains(verdict, "expired"):
		fix = fmt.Sprintf("Renew the TLS certificate of %s and check the node's clock.", host)
	case x509NameMismatch(verdict):
		fix = fmt.Sprintf("Reissue the certificate of %s with %s among its names (an IP address needs an IP SAN), "+
			"or change the image reference to a name the certificate holds.", host, strings.Split(host, ":")[0])
	}
	subjects := a.Subjects(v)
	if node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
	}
	confirm := a.Confirm()
	confirm = append(confirm, fmt.Sprintf("openssl s_client -connect %s -showcerts </dev/null", hostWithPort(host)))
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    a.Evidence(needle),
		Remediation: fix,
		Confirm:     confirm,
		GroupKey:    host + "\x00" + verdict,
	}
}

// hostWithPort adds HTTPS's port to a registry host that names none.
func hostWithPort(host string) string {
	if strings.Contains(host, ":") {
		return host
	}
	return host + ":443"
}
