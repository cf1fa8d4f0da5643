package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
)

// ImagePullNotFound finds image pulls that fail because the registry has no such image.
var ImagePullNotFound = &analyze.Rule{
	ID:       "image-pull-not-found",
	Stage:    analyze.StageImage,
	Title:    "image reference does not exist in the registry",
	Doc:      imagePullNotFoundDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullNotFound,
}

const imagePullNotFoundDoc = `The registry answered the pull, but it has no image under that reference: containerd
reports "failed to resolve reference "IMAGE": IMAGE: not found", CRI-O and registries
speaking the distribution API say "manifest unknown" (the tag or digest does not exist)
or "name unknown" (the repository does not exist). The container waits in ErrImagePull,
then ImagePullBackOff. This is neither a DNS failure (no registry was reached) nor
"unauthorized" (the registry refused the credentials).

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl pull IMAGE

## Fix

Correct the image reference: a typo in the repository or the tag, a tag that was never
pushed (the CI build failed or pushed elsewhere), or a tag deleted by a retention
policy. Pin images by a tag or digest that exists, and push it before rolling out.
`

var (
	// containerd's resolver (remotes/docker/resolver.go) wraps ErrNotFound with the
	// reference: "…: failed to resolve reference "R": R: not found".
	reRefNotFound = regexp.MustCompile(`[^\s"]+: not found`)
	// The distribution API's error codes, as CRI-O (containers/image) prints them:
	// "reading manifest 1.2 in quay.io/shop/api: manifest unknown".
	reManifestUnknown = regexp.MustCompile(`(?:reading manifest [^\s"]+ in [^\s"]+: )?(?:manifest|name) unknown(?:: [^"\n]+)?`)
)

// Markers of a registry that refused the pull: HTTP 401/403 from the resolver, Docker
// Hub's "pull access denied", the credential helpers' "no basic auth credentials".
var unauthorizedMarkers = []string{
	"401 unauthorized", "403 forbidden", "unauthorized", "authorization failed", "failed to authorize",
	"pull access denied", "no basic auth credentials", "requested access to the resource is denied",
	"authentication required",
}

// pullErrorKind classifies a pull error: "dns", "x509", "rate-limited", "unauthorized",
// "not-found" or "other". DNS comes first (no registry was reached to say anything
// else), then TLS (the registry was reached but not spoken to), then a rate limit and a
// refusal: a registry that refuses the request says nothing about whether the image exists.
func pullErrorKind(msg string) string {
	switch k := pullFailure(msg); k {
	case "dns", "x509", "rate-limited":
		return k
	}
	lower := strings.ToLower(msg)
	for _, m := range unauthorizedMarkers {
		if strings.Contains(lower, m) {
			return "unauthorized"
		}
	}
	if reRefNotFound.MatchString(msg) || reManifestUnknown.MatchString(msg) {
		return "not-found"
	}
	return "other"
}

// pullAttempt is what a bundle says about one container's failing pull: its waiting
// status, the latest "Failed to pull image" event and the kubelet's journal line. The
// status alone may only say "Back-off pulling image"; the reason is in the others.
type pullAttempt struct {
	pod       *analyze.Pod
	container analyze.ContainerInfo
	image     string
	reason    string
	message   string
	event     *analyze.Event
	line      *analyze.JournalEntry
	// text joins every message, for classification.
	text string
}

// failedPull gathers a container's pull failure, or reports false when the container
// is not waiting on a pull.
func failedPull(v *analyze.View, pulls *pullLines, p *analyze.Pod, c analyze.ContainerInfo) (pullAttempt, bool) {
	st := c.Status
	if st == nil || st.State.Waiting == nil {
		return pullAttempt{}, false
	}
	w := st.State.Waiting
	if w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff" {
		return pullAttempt{}, false
	}
	a := pullAttempt{pod: p, container: c, image: c.Spec.Image, reason: w.Reason, message: w.Message}
	texts := []string{w.Message}
	if a.event = latestPullFailure(v.EventsFor(p.Ref()), c.Name); a.event != nil {
		texts = append(texts, a.event.Message)
	}
	if a.line = pulls.failure(v, p, a.image); a.line != nil {
		err, _ := a.line.Field("err")
		texts = append(texts, err)
	}
	a.text = strings.Join(texts, "\n")
	return a, true
}

// failedPullsOf lists the failed pulls of every pod's containers whose error
// pullErrorKind classifies as kind, sharing one index of the nodes' pull lines.
func failedPullsOf(v *analyze.View, kind string) []pullAttempt {
	var out []pullAttempt
	pulls := &pullLines{byNode: map[string]map[string]*analyze.JournalEntry{}}
	for _, p := range v.Pods() {
		for _, c := range analyze.Containers(p) {
			if a, ok := failedPull(v, pulls, p, c); ok && pullErrorKind(a.text) == kind {
				out = append(out, a)
			}
		}
	}
	return out
}

// evidence cites the status, the event and the journal line, each centred on needle.
func (a pullAttempt) evidence(needle string) []analyze.Evidence {
	out := []analyze.Evidence{a.container.StatusLoc.At("state", "waiting").EvidenceAround(a.reason+": "+a.message, needle, time.Time{})}
	if a.event != nil {
		out = append(out, a.event.EvidenceAround(needle))
	}
	if a.line != nil {
		out = append(out, a.line.EvidenceAround(needle))
	}
	return out
}

// confirm lists the commands that show the failure live: the container's waiting
// message and, when the pod has a node, the same pull run on that node.
func (a pullAttempt) confirm() []string {
	pod := a.pod.Obj
	out := []string{
		analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].state.waiting.message}'", pod.Namespace, pod.Name, a.container.Name),
	}
	if node := pod.Spec.NodeName; node != "" {
		out = append(out, analyze.Command("kubectl debug node/%s -it --image=busybox -- chroot /host crictl pull %s", node, analyze.Value(a.image)))
	}
	return out
}

// subjects lists the pod, then its workload; the group is the workload, or the pod.
func (a pullAttempt) subjects(v *analyze.View) []analyze.ObjectRef {
	out := []analyze.ObjectRef{a.pod.Ref()}
	if w := v.Workload(a.pod); w != nil {
		out = append(out, *w)
	}
	return out
}

// splitImage separates an image reference into repository and tag or digest; a
// reference without either means the tag "latest".
func splitImage(image string) (repo, version string) {
	if i := strings.Index(image, "@"); i >= 0 {
		return image[:i], image[i+1:]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:]
	}
	return image, "latest"
}

func imagePullNotFound(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range failedPullsOf(v, "not-found") {
		out = append(out, notFoundFinding(v, a))
	}
	return out
}

func notFoundFinding(v *analyze.View, a pullAttempt) analyze.Finding {
	repo, version := splitImage(a.image)
	host := registryHost(a.image)
	said := reRefNotFound.FindString(a.text)
	missing := fmt.Sprintf("the repository %s or its tag %q does not exist", repo, version)
	if m := reManifestUnknown.FindString(a.text); m != "" {
		said = m
		switch {
		case strings.Contains(m, "name unknown"):
			missing = fmt.Sprintf("the repository %s does not exist", repo)
		case strings.HasPrefix(version, "sha256:"):
			missing = fmt.Sprintf("repository %s has no manifest with digest %s", repo, version)
		default:
			missing = fmt.Sprintf("repository %s has no tag %q", repo, version)
		}
	}
	needle := said
	if needle == "" {
		needle = "not found"
	}
	cause := fmt.Sprintf("image %q of container %s cannot be pulled: registry %s answered that %s (%s)",
		a.image, a.container.Name, host, missing, said)
	return analyze.Finding{
		Subjects: a.subjects(v),
		Cause:    cause,
		Evidence: a.evidence(needle),
		Remediation: fmt.Sprintf("Correct the image reference %q (a typo in the repository or tag, or a tag that was never pushed "+
			"or has been deleted), or push the image to %s, then roll the workload out again.", a.image, host),
		Confirm:  a.confirm(),
		GroupKey: a.image,
	}
}
