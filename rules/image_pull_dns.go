package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

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

var (
	// DNS failures as Go's resolver words them inside the CRI pull error:
	// "dial tcp: lookup registry.invalid on 10.96.0.10:53: no such host".
	reLookup = regexp.MustCompile(`lookup ([^\s:]+)(?: on ([^\s]+))?: (no such host|server misbehaving|Temporary failure in name resolution|i/o timeout)`)
)

// pullFailure classifies a pull error: dns, x509, rate-limited, not-found, unauthorized
// or other. DNS is checked first: a name that does not resolve reaches no registry to say
// anything else; a TLS failure ends the conversation before the registry answers.
func pullFailure(msg string) string {
	switch {
	case reLookup.MatchString(msg) || strings.Contains(msg, "dial tcp: lookup"):
		return "dns"
	case reX509.MatchString(msg):
		return "x509"
	case reRateLimited.MatchString(msg):
		return "rate-limited"
	case strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden") ||
		strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authorization failed"):
		return "unauthorized"
	case strings.Contains(msg, "not found") || strings.Contains(msg, "manifest unknown"):
		return "not-found"
	}
	return "other"
}

// registryHost is the registry part of an image reference (docker.io when there is none).
func registryHost(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

func imagePullDNS(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	pulls := &pullLines{byNode: map[string]map[string]*analyze.JournalEntry{}}
	for _, p := range v.Pods() {
		for _, c := range analyze.Containers(p) {
			st := c.Status
			if st == nil || st.State.Waiting == nil {
				continue
			}
			w := st.State.Waiting
			if w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff" {
				continue
			}
			f, ok := dnsFinding(v, pulls, p, c, w.Reason, w.Message)
			if ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// dnsFinding gathers the pull error from the container status, the pod's events and the
// kubelet journal; the status alone may only say "Back-off pulling image".
func dnsFinding(v *analyze.View, pulls *pullLines, p *analyze.Pod, c analyze.ContainerInfo, reason, msg string) (analyze.Finding, bool) {
	image := c.Spec.Image
	texts := []string{msg}
	event := latestPullFailure(v.EventsFor(p.Ref()), c.Name)
	if event != nil {
		texts = append(texts, event.Message)
	}
	line := pulls.failure(v, p, image)
	if line != nil {
		err, _ := line.Field("err")
		texts = append(texts, err)
	}
	all := strings.Join(texts, "\n")
	if pullFailure(all) != "dns" {
		return analyze.Finding{}, false
	}
	const needle = "lookup "
	evidence := []analyze.Evidence{c.StatusLoc.At("state", "waiting").EvidenceAround(reason+": "+msg, needle, time.Time{})}
	if event != nil {
		evidence = append(evidence, event.EvidenceAround(needle))
	}
	if line != nil {
		evidence = append(evidence, line.EvidenceAround(needle))
	}
	host, resolver := registryHost(image), ""
	if m := reLookup.FindStringSubmatch(all); m != nil {
		host, resolver = m[1], m[2]
	}
	lookup := "lookup " + host + ": no such host"
	if m := reLookup.FindString(all); m != "" {
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
	}, true
}

func resolverNote(resolver string) string {
	if resolver == "" {
		return ""
	}
	return ", here " + resolver
}

// latestPullFailure is the most recent "Failed to pull image" event of a container, or
// of any container of the pod when container is "".
func latestPullFailure(events []*analyze.Event, container string) *analyze.Event {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Failed" && (container == "" || e.Container() == container) && strings.HasPrefix(e.Message, "Failed to pull image") {
			return e
		}
	}
	return nil
}

// pullLines indexes each node's "PullImage from image service failed" lines by image,
// one pass per node, so many failing pods cost one scan of the journal.
type pullLines struct {
	byNode map[string]map[string]*analyze.JournalEntry
}

// failure finds the kubelet's own record of the failed pull: the pod's "Error syncing
// pod" line, or else the image service's "PullImage from image service failed" line,
// which names only the image (k8s.io/cri-client pkg/remote_image.go).
func (pl *pullLines) failure(v *analyze.View, p *analyze.Pod, image string) *analyze.JournalEntry {
	entries := v.JournalFor(p)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if err, ok := e.Field("err"); ok && e.Severity == 'E' && strings.Contains(err, image) && pullFailure(err) != "other" {
			return e
		}
	}
	node := p.Obj.Spec.NodeName
	if node == "" {
		return nil
	}
	byImage, ok := pl.byNode[node]
	if !ok {
		byImage = map[string]*analyze.JournalEntry{}
		for _, e := range v.Journal(node) {
			if e.Severity != 'E' || e.Message != "PullImage from image service failed" {
				continue
			}
			if img, ok := e.Field("image"); ok {
				byImage[img] = e
			}
		}
		pl.byNode[node] = byImage
	}
	return byImage[image]
}
