package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/untrusted"
)

// ImagePullDNS finds image pulls that fail because the registry host does not resolve.
var ImagePullDNS = &analyze.Rule{
	ID:       "image-pull-dns",
	Stage:    analyze.StageImage,
	Title:    "image registry host name does not resolve",
	Doc:      imagePullDNSDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullDNS,
}

const imagePullDNSDoc = `The container runtime could not pull the image because the node could not resolve the
registry's host name: the pull error ends in "dial tcp: lookup HOST on RESOLVER: no such
host" (or "server misbehaving"). The container waits in ErrImagePull, then
ImagePullBackOff. This is not "image not found" (the registry answered 404) nor
"unauthorized" (the registry answered 401/403): here no registry was reached at all.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- nslookup REGISTRY_HOST

## Fix

Correct the registry host in the image reference if it is a typo. Otherwise make the
host resolvable from the nodes: the resolver in the node's /etc/resolv.conf must know
it (a private zone, a split-horizon DNS record), or configure a registry mirror in the
container runtime.
`

func imagePullDNS(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range v.PullAttempts() {
		if a.Kind == analyze.PullErrorDNS {
			out = append(out, dnsFinding(v, a))
		}
	}
	return out
}

// dnsFinding reports a pull whose error, joined from the container status, the pod's
// event and the kubelet journal, is a failed lookup; the status alone may only say
// "Back-off pulling image".
func dnsFinding(v *analyze.View, a analyze.PullAttempt) analyze.Finding {
	p, c, image, all := a.Pod, a.Container, a.Image, a.Text
	const needle = "lookup "
	evidence := a.Evidence(needle)
	host, resolver := analyze.RegistryHost(image), ""
	if m := analyze.PullLookupPattern.FindStringSubmatch(all); m != nil {
		host, resolver = m[1], m[2]
	}
	lookup := "lookup " + host + ": no such host"
	if m := analyze.PullLookupPattern.FindString(all); m != "" {
		lookup = m
	}
	node := p.Obj.Spec.NodeName
	cause := fmt.Sprintf("image %q cannot be pulled for container %s: node %s cannot resolve the registry host %q (%s)",
		image, c.Name, node, host, lookup)
	subjects := []analyze.ObjectRef{p.Ref(), analyze.NodeRef(node)}
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
	}
	check := "nslookup " + untrusted.ShellArg(host)
	if resolver != "" {
		check += " " + untrusted.ShellArg(strings.TrimSuffix(resolver, ":53"))
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Check the registry host %q in the image reference for a typo; if it is right, make it resolvable "+
			"from the nodes (the DNS server in the node's /etc/resolv.conf%s) or configure a registry mirror.", host, resolverNote(resolver)),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].state.waiting.message}'", p.Obj.Namespace, p.Obj.Name, c.Name),
			analyze.Command("kubectl debug node/%s -it --image=busybox -- %s", node, analyze.Literal(check)),
		},
		GroupKey: image + "\x00" + host + "\x00" + node,
	}
}

func resolverNote(resolver string) string {
	if resolver == "" {
		return ""
	}
	return ", here " + resolver
}
