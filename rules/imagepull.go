package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// Image pulls: the containers waiting on one, every failed pull classified once as a
// pullError (each kind is one rule's), the nodes' journal lines about pulls, the registry
// host of an image and the pull secrets a pod can use.

// imageWait is a container waiting on an image error the kubelet raises before any pull
// (pkg/kubelet/images/image_manager.go EnsureImageExists): its waiting status, the
// kubelet's event about it and its "Error syncing pod" journal line.
type imageWait struct {
	pod       *analyze.Pod
	container analyze.ContainerInfo
	waiting   *corev1.ContainerStateWaiting
	event     *analyze.Event
	line      *analyze.JournalEntry
}

// evidence cites the waiting status, the event and the journal line, around needle.
func (w imageWait) evidence(needle string) []analyze.Evidence {
	out := []analyze.Evidence{w.container.StatusLoc.At("state", "waiting").EvidenceAround(w.waiting.Reason+": "+w.waiting.Message, needle, time.Time{})}
	if w.event != nil {
		out = append(out, w.event.EvidenceAround(needle))
	}
	if w.line != nil {
		out = append(out, w.line.EvidenceAround(needle))
	}
	return out
}

// repeated says how often the kubelet reported it: " (ErrImageNeverPull x8)".
func (w imageWait) repeated() string {
	if w.event == nil || w.event.Count < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s x%d)", w.event.Reason, w.event.Count)
}

// imageWaits lists the containers that wait with reason, from the view's container
// waits; eventReason is the kubelet's event for it (ErrImageNeverPull, InspectFailed)
// and match tells the event about this failure of this image from others with the same
// reason.
func imageWaits(v *analyze.View, reason, eventReason string, match func(image, msg string) bool) []imageWait {
	var out []imageWait
	for _, f := range v.ContainerWaits() {
		if f.Waiting.Reason != reason {
			continue
		}
		w := imageWait{pod: f.Subject.Pod, container: f.Container, waiting: f.Waiting}
		for _, e := range f.Events {
			if e.Reason == eventReason && match(f.Container.Spec.Image, e.Message) {
				w.event = e
				break
			}
		}
		if len(f.SyncErrors) > 0 {
			w.line = f.SyncErrors[0]
		}
		out = append(out, w)
	}
	return out
}

var (
	// DNS failures as Go's resolver words them inside the CRI pull error:
	// "dial tcp: lookup registry.invalid on 10.96.0.10:53: no such host".
	reLookup = regexp.MustCompile(`lookup ([^\s:]+)(?: on ([^\s]+))?: (no such host|server misbehaving|Temporary failure in name resolution|i/o timeout)`)
)

// pullError is the kind of a failed image pull. Each kind but pullErrorOther is
// reported by exactly one rule (image-pull-dns, -x509, -rate-limited, -unauthorized,
// -not-found), so one pull never becomes two findings.
type pullError string

const (
	pullErrorDNS          pullError = "dns"
	pullErrorX509         pullError = "x509"
	pullErrorRateLimited  pullError = "rate-limited"
	pullErrorUnauthorized pullError = "unauthorized"
	pullErrorNotFound     pullError = "not-found"
	pullErrorOther        pullError = "other"
)

// pullFailure classifies a pull error: dns, x509, rate-limited, not-found, unauthorized
// or other. DNS is checked first: a name that does not resolve reaches no registry to say
// anything else; a TLS failure ends the conversation before the registry answers.
func pullFailure(msg string) pullError {
	switch {
	case reLookup.MatchString(msg) || strings.Contains(msg, "dial tcp: lookup"):
		return pullErrorDNS
	case reX509.MatchString(msg):
		return pullErrorX509
	case reRateLimited.MatchString(msg):
		return pullErrorRateLimited
	case strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden") ||
		strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authorization failed"):
		return pullErrorUnauthorized
	case strings.Contains(msg, "not found") || strings.Contains(msg, "manifest unknown"):
		return pullErrorNotFound
	}
	return pullErrorOther
}

// registryHost is the registry part of an image reference (docker.io when there is none).
func registryHost(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// pullLine is the kubelet's own record of a failed pull: the pod's newest error line
// that names the image with an error pullFailure knows, else the image service's line on
// the node, which names only the image (k8s.io/cri-client pkg/remote_image.go).
func pullLine(f analyze.PullFailure) *analyze.JournalEntry {
	for _, e := range f.PodLines {
		if err, _ := e.Field("err"); pullFailure(err) != pullErrorOther {
			return e
		}
	}
	return f.NodeLine
}

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
func pullErrorKind(msg string) pullError {
	switch k := pullFailure(msg); k {
	case pullErrorDNS, pullErrorX509, pullErrorRateLimited:
		return k
	}
	lower := strings.ToLower(msg)
	for _, m := range unauthorizedMarkers {
		if strings.Contains(lower, m) {
			return pullErrorUnauthorized
		}
	}
	if reRefNotFound.MatchString(msg) || reManifestUnknown.MatchString(msg) {
		return pullErrorNotFound
	}
	return pullErrorOther
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
	// podEvent is the pod's latest failed pull of any container and secretEvent its
	// latest FailedToRetrieveImagePullSecret event.
	podEvent, secretEvent *analyze.Event
	// text joins every message, for classification.
	text string
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

// failedPull gathers a container's pull failure from the fact: its status, event and
// journal line, and their messages joined for classification.
func failedPull(f analyze.PullFailure) pullAttempt {
	a := pullAttempt{pod: f.Subject.Pod, container: f.Container, image: f.Image, reason: f.Waiting.Reason, message: f.Waiting.Message,
		event: f.Event, podEvent: f.PodEvent, secretEvent: f.SecretEvent}
	texts := []string{a.message}
	if a.event != nil {
		texts = append(texts, a.event.Message)
	}
	if a.line = pullLine(f); a.line != nil {
		err, _ := a.line.Field("err")
		texts = append(texts, err)
	}
	a.text = strings.Join(texts, "\n")
	return a
}

// failedPulls lists the failed pulls of the pods' waiting containers. A pull known only
// from an event or a line has no container status to cite and no spec to compare, so the
// pull rules leave it to the unexplained check, which quotes it.
func failedPulls(v *analyze.View) []pullAttempt {
	var out []pullAttempt
	for _, f := range v.PullFailures() {
		if f.Waiting != nil {
			out = append(out, failedPull(f))
		}
	}
	return out
}

// failedPullsOf lists the failed pulls whose error pullErrorKind classifies as kind.
func failedPullsOf(v *analyze.View, kind pullError) []pullAttempt {
	var out []pullAttempt
	for _, a := range failedPulls(v) {
		if pullErrorKind(a.text) == kind {
			out = append(out, a)
		}
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

// A 429 as containerd's resolver reports it ("...: 429 Too Many Requests") and the
// distribution API's error code as CRI-O and Docker quote it ("toomanyrequests: ...").
var reRateLimited = regexp.MustCompile(`(?i)429 Too Many Requests|toomanyrequests(?::[^"\\\n]*)?|pull rate limit`)

// The kubelet's event for pull secrets it cannot read (pkg/kubelet/kubelet.go,
// SyncPod): "Unable to retrieve some image pull secrets (a, b); attempting to pull
// the image may not succeed."
var reMissingPullSecrets = regexp.MustCompile(`Unable to retrieve some image pull secrets \(([^)]*)\)`)

// pullSecret is one of the pod's imagePullSecrets and what the bundle says about it.
type pullSecret struct {
	name string
	// state is "exists", "missing", "unusable" (wrong type or key) or "unknown".
	state  string
	detail string
}

// pullSecrets says, for each of the pod's imagePullSecrets, whether it exists and can
// be used: from the Secrets in the bundle when collected, else from the kubelet's
// events. Before each pull the kubelet looks the pod's pull secrets up and reports the
// ones it cannot get in a FailedToRetrieveImagePullSecret event (pkg/kubelet/kubelet.go,
// SyncPod), so a failed pull with no such event naming a secret means the kubelet read it.
func pullSecrets(v *analyze.View, a pullAttempt) ([]pullSecret, []analyze.Evidence) {
	p := a.pod
	pod := p.Obj
	var evidence []analyze.Evidence
	unretrievable := map[string]bool{}
	pulled := a.podEvent
	if e := a.secretEvent; e != nil {
		if m := reMissingPullSecrets.FindStringSubmatch(e.Message); m != nil {
			for _, name := range strings.Split(m[1], ",") {
				unretrievable[strings.TrimSpace(name)] = true
			}
			evidence = append(evidence, e.Evidence())
		}
	}
	out := make([]pullSecret, 0, len(pod.Spec.ImagePullSecrets))
	for i, ref := range pod.Spec.ImagePullSecrets {
		s := pullSecret{name: ref.Name, state: "unknown", detail: "(existence unknown: Secrets were not collected)"}
		var obj *analyze.Secret
		switch {
		case v.Has(analyze.Secrets):
			obj = v.Secret(pod.Namespace, ref.Name)
			s.state, s.detail = secretUsability(obj)
		case unretrievable[ref.Name]:
			s.state, s.detail = "missing", "could not be retrieved by the kubelet"
		case pulled != nil:
			s.state, s.detail = "exists", "exists (the kubelet read it for the failed pull: it reported no FailedToRetrieveImagePullSecret)"
		}
		evidence = append(evidence, p.Loc.At("spec", "imagePullSecrets", i).Evidence(
			"imagePullSecrets: "+ref.Name+" "+s.detail, pod.CreationTimestamp.Time))
		if obj != nil {
			evidence = append(evidence, obj.Loc.Evidence(fmt.Sprintf("secret %s: type %s, keys %s",
				ref.Name, obj.Obj.Type, strings.Join(secretKeys(obj.Obj), ", ")), obj.Obj.CreationTimestamp.Time))
		}
		out = append(out, s)
	}
	return out, evidence
}

// secretUsability follows the kubelet's keyring (pkg/credentialprovider/secrets,
// secretsToTrackedDockerConfigs): only a dockerconfigjson Secret with the
// .dockerconfigjson key, or a dockercfg Secret with .dockercfg, gives credentials.
func secretUsability(s *analyze.Secret) (state, detail string) {
	if s == nil {
		return "missing", "does not exist in the namespace"
	}
	typ := s.Obj.Type
	switch typ {
	case corev1.SecretTypeDockerConfigJson:
		if _, ok := s.Obj.Data[corev1.DockerConfigJsonKey]; ok {
			return "exists", "exists, type " + string(typ)
		}
		return "unusable", "has type " + string(typ) + " but no " + corev1.DockerConfigJsonKey + " key"
	case corev1.SecretTypeDockercfg:
		if _, ok := s.Obj.Data[corev1.DockerConfigKey]; ok {
			return "exists", "exists, type " + string(typ)
		}
		return "unusable", "has type " + string(typ) + " but no " + corev1.DockerConfigKey + " key"
	}
	if typ == "" {
		typ = corev1.SecretTypeOpaque
	}
	return "unusable", "has type " + string(typ) + ", which the kubelet does not read as pull credentials"
}

func secretKeys(s *corev1.Secret) []string {
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return []string{"(none)"}
	}
	return keys
}

var (
	// Go's crypto/x509 errors as the pull error carries them, with or without the
	// "tls: failed to verify certificate: " prefix crypto/tls adds since Go 1.20.
	reX509 = regexp.MustCompile(`(?:tls: failed to verify certificate: )?x509: [^"\\\n]+`)
)
