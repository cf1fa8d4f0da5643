package rules

import (
	"strings"
	"testing"
)

// kube-proxy's iptables-restore failure names the kernel release the ticket shows
// (uname -r's output, "kernel 5.15.168" in a sentence): the command's error depends on
// the kernel's netfilter, and kube-proxy does not print it. With two releases in the
// evidence, none is named.
func TestKubeProxyIptablesFailureNamesTheKernel(t *testing.T) {
	const line = `E1113 16:15:07.931291       1 proxier.go:1481] "Failed to execute iptables-restore" err="exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option \"--xor-mark\""`
	for _, tc := range []struct{ text, want string }{
		{"$ uname -r\n6.8.0-57-generic\n", "on kernel 6.8.0-57-generic"},
		{"The nodes run Bottlerocket 1.26.2 (linux kernel 5.15.168).\n", "on kernel 5.15.168"},
		{"It broke after the update to kernel 6.8.0-57-generic.\n$ uname -a\nLinux n1 6.8.0-57-generic #59-Ubuntu SMP x86_64 GNU/Linux\n", "on kernel 6.8.0-57-generic"},
	} {
		rs := catalogRoots(t, map[string]string{"ticket.txt": tc.text, "kube-proxy.log": line + "\n"})
		wantOneRoot(t, rs, "service-kube-proxy-iptables-failed", tc.want)
	}
	rs := catalogRoots(t, map[string]string{"ticket.txt": "node a: 6.8.0-57-generic, node b: 6.8.0-60-generic\n", "kube-proxy.log": line + "\n"})
	for _, f := range rs {
		if strings.Contains(f.Cause, "on kernel") {
			t.Errorf("two kernels, one named: %s", f.Cause)
		}
	}
}

// An exec credential plugin's refused API version names the kubectl that refused it, as
// `kubectl version` in the same ticket prints it (the 1.28 line or an older release's Go
// value); with two client versions, none is named.
func TestExecPluginVersionNamesTheClient(t *testing.T) {
	const refusal = "error: exec plugin: invalid apiVersion \"client.authentication.k8s.io/v1beta1\"\n"
	for _, tc := range []struct{ version, want string }{
		{"Client Version: v1.28.2\nKustomize Version: v5.0.4\n", "(kubectl v1.28.2)"},
		{`Client Version: version.Info{Major:"1", Minor:"10", GitVersion:"v1.10.11", GitCommit:"637c7e2", GitTreeState:"clean", Platform:"darwin/amd64"}` + "\n", "(kubectl v1.10.11)"},
	} {
		rs := catalogRoots(t, map[string]string{"version.txt": tc.version, "kubectl.txt": refusal})
		wantOneRoot(t, rs, "request-exec-plugin-api-version", tc.want)
	}
	rs := catalogRoots(t, map[string]string{"version.txt": "Client Version: v1.28.2\nClient Version: v1.30.1\n", "kubectl.txt": refusal})
	for _, f := range rs {
		if strings.Contains(f.Cause, "(kubectl v1.") {
			t.Errorf("two client versions, one named: %s", f.Cause)
		}
	}
}

// A refusal quoted once more, its quotes escaped (a Go %q, a JSON string, a structured
// log's err="…"), is read as the component printed it.
func TestEscapedQuotesReadAsPrinted(t *testing.T) {
	const line = ` Message: "pods \"padder-6757\" is forbidden: violates PodSecurity \"restricted:v1.24\": allowPrivilegeEscalation != false (container \"padder-6757-cnt\" must set securityContext.allowPrivilegeEscalation=false)",` + "\n"
	rs := catalogRoots(t, map[string]string{"error.txt": line})
	wantOneRoot(t, rs, "admission-pod-security", "restricted:v1.24", "allowPrivilegeEscalation")
}
