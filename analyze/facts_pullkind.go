package analyze

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Image pulls: the containers waiting on one, every failed pull classified once as a
// PullErrorKind (each kind is one rule's), the nodes' journal lines about pulls, the registry
// host of an image and the pull secrets a pod can use.

// ImageWait is a container waiting on an image error the kubelet raises before any pull
// (pkg/kubelet/images/image_manager.go EnsureImageExists): its waiting status, the
// kubelet's event about it and its "Error syncing pod" journal line.
type ImageWait struct {
	Pod       *Pod
	Container ContainerInfo
	Waiting   *corev1.ContainerStateWaiting
	Event     *Event
	Line      *JournalEntry
}

// Evidence cites the waiting status, the event and the journal line, around needle.
func (w ImageWait) Evidence(needle string) []Evidence {
	out := []Evidence{w.Container.StatusLoc().At("state", "waiting").EvidenceAround(w.Waiting.Reason+": "+w.Waiting.Message, needle, time.Time{})}
	if w.Event != nil {
		out = append(out, w.Event.EvidenceAround(needle))
	}
	if w.Line != nil {
		out = append(out, w.Line.EvidenceAround(needle))
	}
	return out
}

// Repeated says how often the kubelet reported it: " (ErrImageNeverPull x8)".
func (w ImageWait) Repeated() string {
	if w.Event == nil || w.Event.Count < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s x%d)", w.Event.Reason, w.Event.Count)
}

// ImageWaits lists the containers that wait with reason, from the view's container
// waits; eventReason is the kubelet's event for it (ErrImageNeverPull, InspectFailed)
// and match tells the event about this failure of this image from others with the same
// reason.
func (v *View) ImageWaits(reason, eventReason string, match func(image, msg string) bool) []ImageWait {
	var out []ImageWait
	for _, f := range v.ContainerWaits() {
		if f.Waiting.Reason != reason {
			continue
		}
		w := ImageWait{Pod: f.Subject.Pod, Container: f.Container, Waiting: f.Waiting}
		for _, e := range f.Events {
			if e.Reason == eventReason && match(f.Container.Spec.Image, e.Message) {
				w.Event = e
				break
			}
		}
		if len(f.SyncErrors) > 0 {
			w.Line = f.SyncErrors[0]
		}
		out = append(out, w)
	}
	return out
}

var (
	// PullLookupPattern matches DNS failures as Go's resolver words them inside the CRI pull error:
	// "dial tcp: lookup registry.invalid on 10.96.0.10:53: no such host".
	PullLookupPattern = regexp.MustCompile(`lookup ([^\s:]+)(?: on ([^\s]+))?: (no such host|server misbehaving|Temporary failure in name resolution|i/o timeout)`)
)

// PullErrorKind is the kind of a failed image pull. Each kind but PullErrorOther is
// reported by exactly one rule (image-pull-dns, -x509, -rate-limited, -unauthorized,
// -not-found), so one pull never becomes two findings.
type PullErrorKind string

// The pull error kinds.
const (
	PullErrorDNS          PullErrorKind = "dns"
	PullErrorX509         PullErrorKind = "x509"
	PullErrorRateLimited  PullErrorKind = "rate-limited"
	PullErrorUnauthorized PullErrorKind = "unauthorized"
	PullErrorNotFound     PullErrorKind = "not-found"
	PullErrorOther        PullErrorKind = "other"
)

// pullFailure classifies a pull error: dns, x509, rate-limited, not-found, unauthorized
// or other. DNS is checked first: a name that does not resolve reaches no registry to say
// anything else; a TLS failure ends the conversation before the registry answers.
func pullFailure(msg string) PullErrorKind {
	switch {
	case PullLookupPattern.MatchString(msg) || strings.Contains(msg, "dial tcp: lookup"):
		return PullErrorDNS
	case PullX509Pattern.MatchString(msg):
		return PullErrorX509
	case PullRateLimitPattern.MatchString(msg):
		return PullErrorRateLimited
	case strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden") ||
		strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authorization failed"):
		return PullErrorUnauthorized
	case strings.Contains(msg, "not found") || strings.Contains(msg, "manifest unknown"):
		return PullErrorNotFound
	}
	return PullErrorOther
}

// RegistryHost is the registry part of an image reference (docker.io when there is none).
func RegistryHost(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// pullLine is the kubelet's own record of a failed pull: the pod's newest error line
// that names the image with an error pullFailure knows, else the image service's line on
// the node, which names only the image (k8s.io/cri-client pkg/remote_image.go).
func pullLine(f PullFailure) *JournalEntry {
	for _, e := range f.PodLines {
		if err, _ := e.Field("err"); pullFailure(err) != PullErrorOther {
			return e
		}
	}
	return f.NodeLine
}

var (
	// PullRefNotFoundPattern matches what containerd's resolver (remotes/docker/resolver.go) wraps ErrNotFound with the
	// reference: "…: failed to resolve reference "R": R: not found".
	PullRefNotFoundPattern = regexp.MustCompile(`[^\s"]+: not found`)
	// PullManifestUnknownPattern matches the distribution API's error codes, as CRI-O (containers/image) prints them:
	// "reading manifest 1.2 in quay.io/shop/api: manifest unknown".
	PullManifestUnknownPattern = regexp.MustCompile(`(?:reading manifest [^\s"]+ in [^\s"]+: )?(?:manifest|name) unknown(?:: [^"\n]+)?`)
)

// Markers of a registry that refused the pull: HTTP 401/403 from the resolver, Docker
// Hub's "pull access denied", the credential helpers' "no basic auth credentials".
var unauthorizedMarkers = []string{
	"401 unauthorized", "403 forbidden", "unauthorized", "authorization failed", "failed to authorize",
	"pull access denied", "no basic auth credentials", "requested access to the resource is denied",
	"authentication required", "authentication is required", "access to the requested resource is not authorized",
}

// rePublicLibraryDenied is Docker Hub's "pull access denied" for a repository of its
// official library (a name without a user or organization: containerd resolves
// "controller:latest" to docker.io/library/controller, Docker prints "pull access denied
// for controller"). The library is public, so no credentials are asked for there: the
// answer says the repository does not exist (an image built locally and never pushed or
// loaded into the nodes, a name that lost its organization), not that it is private.
var rePublicLibraryDenied = regexp.MustCompile(`failed to resolve reference \\?"(?:docker\.io/)?library/[^"\\/]+\\?": pull access denied|pull access denied for [^\s,"\\/]+, repository does not exist`)

// AnonymousRefusalPattern is a registry's answer to a pull without credentials that it
// gives alike for a repository that does not exist and for a private one: Docker Hub's
// "pull access denied, repository does not exist or may require authorization"
// (containerd's resolver, which says so since it could not tell them apart either:
// remotes/docker/resolver.go) or "… may require 'docker login'" (Docker), and the GitHub
// registry's "denied", "unauthorized" or 403 to an anonymous token request. The threads that confirmed a
// cause for it nearly always found a repository that does not exist under that name (a
// typo, the wrong organization, an image never pushed); a private one is the other
// reading, and the pull had no credentials for it either way.
var AnonymousRefusalPattern = regexp.MustCompile(`pull access denied(?: for [^\s,"\\]+)?, repository does not exist or may require (?:authorization|'docker login')[^"\\\n]*|\bghcr\.io/[^"\\\s]+\\?"?:?[^\n]*?(?:403 Forbidden|error from registry: denied|: denied\b[^"\\\n]*|: unauthorized\b[^"\\\n]*)`)

// anonymousRefusal reports whether a failed pull was refused with the ambiguous answer
// and its pod gives no pull secret (the ServiceAccount's are copied into the pod's spec
// at admission): the image is not there for this node to pull, whichever reading is true.
func anonymousRefusal(text string, pod *corev1.Pod) bool {
	return len(pod.Spec.ImagePullSecrets) == 0 && AnonymousRefusalPattern.MatchString(text)
}

// pullErrorKind classifies a pull error: "dns", "x509", "rate-limited", "unauthorized",
// "not-found" or "other". DNS comes first (no registry was reached to say anything
// else), then TLS (the registry was reached but not spoken to), then a rate limit and a
// refusal: a registry that refuses the request says nothing about whether the image exists.
func pullErrorKind(msg string) PullErrorKind {
	switch k := pullFailure(msg); k {
	case PullErrorDNS, PullErrorX509, PullErrorRateLimited:
		return k
	}
	if rePublicLibraryDenied.MatchString(msg) {
		return PullErrorNotFound
	}
	lower := strings.ToLower(msg)
	for _, m := range unauthorizedMarkers {
		if strings.Contains(lower, m) {
			return PullErrorUnauthorized
		}
	}
	if PullRefNotFoundPattern.MatchString(msg) || PullManifestUnknownPattern.MatchString(msg) {
		return PullErrorNotFound
	}
	return PullErrorOther
}

// PullAttempt is what a bundle says about one container's failing pull: its waiting
// status, the latest "Failed to pull image" event and the kubelet's journal line. The
// status alone may only say "Back-off pulling image"; the reason is in the others.
type PullAttempt struct {
	Pod       *Pod
	Container ContainerInfo
	Image     string
	Reason    string
	Message   string
	Event     *Event
	Line      *JournalEntry
	// podEvent is the pod's latest failed pull of any container and secretEvent its
	// latest FailedToRetrieveImagePullSecret event.
	PodEvent, SecretEvent *Event
	// Text joins every message, for classification, and Kind is its class
	// (pullErrorKind), computed once.
	Text string
	Kind PullErrorKind
}

// Evidence cites the status, the event and the journal line, each centred on needle.
func (a PullAttempt) Evidence(needle string) []Evidence {
	out := []Evidence{a.Container.StatusLoc().At("state", "waiting").EvidenceAround(a.Reason+": "+a.Message, needle, time.Time{})}
	if a.Event != nil {
		out = append(out, a.Event.EvidenceAround(needle))
	}
	if a.Line != nil {
		out = append(out, a.Line.EvidenceAround(needle))
	}
	return out
}

// Confirm lists the commands that show the failure live: the container's waiting
// message and, when the pod has a node, the same pull run on that node.
func (a PullAttempt) Confirm() []string {
	pod := a.Pod.Obj
	out := []string{
		Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].state.waiting.message}'", pod.Namespace, pod.Name, a.Container.Name),
	}
	if node := pod.Spec.NodeName; node != "" {
		out = append(out, Command("kubectl debug node/%s -it --image=busybox -- chroot /host crictl pull %s", node, Value(a.Image)))
	}
	return out
}

// Subjects lists the pod, then its workload; the group is the workload, or the pod.
func (a PullAttempt) Subjects(v *View) []ObjectRef {
	out := []ObjectRef{a.Pod.Ref()}
	if w := v.Workload(a.Pod); w != nil {
		out = append(out, *w)
	}
	return out
}

// failedPull gathers a container's pull failure from the fact: its status, event and
// journal line, and their messages joined for classification.
func failedPull(f PullFailure) PullAttempt {
	a := PullAttempt{Pod: f.Subject.Pod, Container: f.Container, Image: f.Image, Reason: f.Waiting.Reason, Message: f.Waiting.Message,
		Event: f.Event, PodEvent: f.PodEvent, SecretEvent: f.SecretEvent}
	texts := []string{a.Message}
	if a.Event != nil {
		texts = append(texts, a.Event.Message)
	}
	if a.Line = pullLine(f); a.Line != nil {
		err, _ := a.Line.Field("err")
		texts = append(texts, err)
	}
	a.Text = strings.Join(texts, "\n")
	a.Kind = pullErrorKind(a.Text)
	if (a.Kind == PullErrorUnauthorized || a.Kind == PullErrorOther) && anonymousRefusal(a.Text, a.Pod.Obj) {
		a.Kind = PullErrorNotFound
	}
	return a
}

// PullAttempts lists the failed pulls of the pods' waiting containers. A pull known only
// from an event or a line has no container status to cite and no spec to compare, so the
// pull rules leave it to the unexplained check, which quotes it.
func (v *View) PullAttempts() []PullAttempt {
	var out []PullAttempt
	for _, f := range v.PullFailures() {
		if f.Waiting != nil {
			out = append(out, failedPull(f))
		}
	}
	return out
}

// PullAttemptsOf lists the failed pulls whose error pullErrorKind classifies as kind.
func (v *View) PullAttemptsOf(kind PullErrorKind) []PullAttempt {
	var out []PullAttempt
	for _, a := range v.PullAttempts() {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

// SplitImage separates an image reference into repository and tag or digest; a
// reference without either means the tag "latest".
func SplitImage(image string) (repo, version string) {
	if i := strings.Index(image, "@"); i >= 0 {
		return image[:i], image[i+1:]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:]
	}
	return image, "latest"
}

// PullRateLimitPattern matches a 429 as containerd's resolver reports it ("...: 429 Too Many Requests") and the
// distribution API's error code as CRI-O and Docker quote it ("toomanyrequests: ...").
var PullRateLimitPattern = regexp.MustCompile(`(?i)429 Too Many Requests|toomanyrequests(?::[^"\\\n]*)?|pull rate limit`)

// The kubelet's event for pull secrets it cannot read (pkg/kubelet/kubelet.go,
// SyncPod): "Unable to retrieve some image pull secrets (a, b); attempting to pull
// the image may not succeed."
var reMissingPullSecrets = regexp.MustCompile(`Unable to retrieve some image pull secrets \(([^)]*)\)`)

// PullSecret is one of the pod's imagePullSecrets and what the bundle says about it.
type PullSecret struct {
	Name string
	// State is "exists", "missing", "unusable" (wrong type or key) or "unknown".
	State  string
	Detail string
}

// PullSecrets says, for each of the pod's imagePullSecrets, whether it exists and can
// be used: from the Secrets in the bundle when collected, else from the kubelet's
// events. Before each pull the kubelet looks the pod's pull secrets up and reports the
// ones it cannot get in a FailedToRetrieveImagePullSecret event (pkg/kubelet/kubelet.go,
// SyncPod), so a failed pull with no such event naming a secret means the kubelet read it.
func (v *View) PullSecrets(a PullAttempt) ([]PullSecret, []Evidence) {
	p := a.Pod
	pod := p.Obj
	var evidence []Evidence
	unretrievable := map[string]bool{}
	pulled := a.PodEvent
	if e := a.SecretEvent; e != nil {
		if m := reMissingPullSecrets.FindStringSubmatch(e.Message); m != nil {
			for _, name := range strings.Split(m[1], ",") {
				unretrievable[strings.TrimSpace(name)] = true
			}
			evidence = append(evidence, e.Evidence())
		}
	}
	out := make([]PullSecret, 0, len(pod.Spec.ImagePullSecrets))
	for i, ref := range pod.Spec.ImagePullSecrets {
		s := PullSecret{Name: ref.Name, State: "unknown", Detail: "(existence unknown: Secrets were not collected)"}
		var obj *Secret
		switch {
		case v.Has(Secrets):
			obj = v.Secret(pod.Namespace, ref.Name)
			s.State, s.Detail = secretUsability(obj)
		case unretrievable[ref.Name]:
			s.State, s.Detail = "missing", "could not be retrieved by the kubelet"
		case pulled != nil:
			s.State, s.Detail = "exists", "exists (the kubelet read it for the failed pull: it reported no FailedToRetrieveImagePullSecret)"
		}
		evidence = append(evidence, p.Loc.At("spec", "imagePullSecrets", i).Evidence(
			"imagePullSecrets: "+ref.Name+" "+s.Detail, pod.CreationTimestamp.Time))
		if obj != nil {
			evidence = append(evidence, obj.Loc.Evidence(fmt.Sprintf("secret %s: type %s, keys %s",
				ref.Name, obj.Obj.Type, strings.Join(SecretKeys(obj.Obj), ", ")), obj.Obj.CreationTimestamp.Time))
		}
		out = append(out, s)
	}
	return out, evidence
}

// secretUsability follows the kubelet's keyring (pkg/credentialprovider/secrets,
// secretsToTrackedDockerConfigs): only a dockerconfigjson Secret with the
// .dockerconfigjson key, or a dockercfg Secret with .dockercfg, gives credentials.
func secretUsability(s *Secret) (state, detail string) {
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

// SecretKeys lists a Secret's data keys, sorted, or "(none)".
func SecretKeys(s *corev1.Secret) []string {
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
	// PullX509Pattern matches Go's crypto/x509 errors as the pull error carries them, with or without the
	// "tls: failed to verify certificate: " prefix crypto/tls adds since Go 1.20.
	PullX509Pattern = regexp.MustCompile(`(?:tls: failed to verify certificate: )?x509: [^"\\\n]+`)
)
