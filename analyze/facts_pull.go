package analyze

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerWait is a container waiting to start, as its status says, with the kubelet's
// events about it and its "Error syncing pod" journal lines for the waiting reason.
type ContainerWait struct {
	Subject   PodSubject
	Container ContainerInfo
	Waiting   *corev1.ContainerStateWaiting
	// Events are the pod's events about this container or about no container, newest first.
	Events []*Event
	// SyncErrors are the kubelet's journal lines whose err says the container failed to
	// start with the waiting reason (pod_workers.go: `failed to "StartContainer" for
	// "app" with ErrImageNeverPull: …`), newest first.
	SyncErrors []*JournalEntry
}

// PullFailure is a failing image pull: a container waiting in ErrImagePull or
// ImagePullBackOff, or, when the evidence holds no pod status, a "Failed to pull image"
// event, the image service's journal line or a pasted line alone. The waiting message
// may only say "Back-off pulling image": the reason is in the others.
type PullFailure struct {
	Subject PodSubject
	// Container is the container's spec and status; only Name is set when an event named
	// it, nothing when no evidence did.
	Container ContainerInfo
	Image     string
	// Waiting is the container's waiting state, nil when no pod status reports the pull.
	Waiting *corev1.ContainerStateWaiting
	// Event is the container's latest "Failed to pull image" event, and PodEvent the
	// pod's latest of any container.
	Event, PodEvent *Event
	// SecretEvent is the pod's latest FailedToRetrieveImagePullSecret event: the kubelet
	// looks the pull secrets up before each pull and reports those it cannot get.
	SecretEvent *Event
	// PodLines are the kubelet's error lines about the pod whose err names the image,
	// newest first.
	PodLines []*JournalEntry
	// NodeLine is the image service's latest "PullImage from image service failed" line
	// for the image on the pod's node (k8s.io/cri-client pkg/remote_image.go).
	NodeLine *JournalEntry
	// Fragment is a pasted line that reports the failed pull.
	Fragment *Line
}

// reFailedToPull is the kubelet's pull failure event (pkg/kubelet/images/image_manager.go):
// `Failed to pull image "R": …`.
var reFailedToPull = regexp.MustCompile(`Failed to pull image "([^"]+)"`)

// reQuotedImage is the image an error quotes: `pull and unpack image "R"`, `Back-off
// pulling image "R"`, with the quotes escaped inside a klog err= value.
var reQuotedImage = regexp.MustCompile(`image \\?"([^"\\]+)\\?"`)

// reSyncContainer is the container the kubelet's pod_workers.go error names:
// `failed to "StartContainer" for "app" with ErrImagePull: …`.
var reSyncContainer = regexp.MustCompile(`for \\?"([^"\\]+)\\?" with (ErrImagePull|ImagePullBackOff)`)

// podSyncError is the kubelet pod worker's line for a pod it could not sync
// (pkg/kubelet/pod_workers.go).
const podSyncError = "Error syncing pod, skipping"

// pullServiceFailed is the image service's line on a failed pull.
const pullServiceFailed = "PullImage from image service failed"

func isPullFailureEvent(e *Event) bool {
	return e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image")
}

// containerWaitFacts lists every waiting container of every pod.
func (g *Graph) containerWaitFacts() []ContainerWait {
	var out []ContainerWait
	for _, p := range g.pods {
		var events []*Event
		var entries []*JournalEntry
		loaded := false
		for _, c := range Containers(p) {
			if c.Status == nil || c.Status.State.Waiting == nil {
				continue
			}
			if !loaded {
				events, entries, loaded = g.eventsFor(p.Ref()), g.journalFor(p.Obj), true
			}
			w := c.Status.State.Waiting
			f := ContainerWait{Subject: podSubject(p), Container: c, Waiting: w}
			f.Events = newestFirst(events, func(e *Event) bool { return e.Container() == c.Name || e.Container() == "" })
			needle := fmt.Sprintf("for %q with %s", c.Name, w.Reason)
			f.SyncErrors = entriesNewestFirst(entries, func(e *JournalEntry) bool {
				err, ok := e.Field("err")
				return ok && strings.Contains(err, needle)
			})
			out = append(out, f)
		}
	}
	return out
}

// pullFacts lists the failing pulls: of the pods' waiting containers first, then the
// events, image service lines and pasted lines no pod status accounts for.
func (g *Graph) pullFacts() []PullFailure {
	var out []PullFailure
	byNode := g.pullServiceLines()
	covered := map[string]bool{} // node/image of the pulls a pod status reports
	for _, p := range g.pods {
		var events []*Event
		var entries []*JournalEntry
		loaded := false
		for _, c := range Containers(p) {
			st := c.Status
			if st == nil || st.State.Waiting == nil {
				continue
			}
			w := st.State.Waiting
			if w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff" {
				continue
			}
			if !loaded {
				events, entries, loaded = g.eventsFor(p.Ref()), g.journalFor(p.Obj), true
			}
			image := c.Spec.Image
			f := PullFailure{Subject: podSubject(p), Container: c, Image: image, Waiting: w}
			if list := newestFirst(events, func(e *Event) bool { return isPullFailureEvent(e) && e.Container() == c.Name }); len(list) > 0 {
				f.Event = list[0]
			}
			if list := newestFirst(events, isPullFailureEvent); len(list) > 0 {
				f.PodEvent = list[0]
			}
			f.SecretEvent = LatestEvent(events, "", "FailedToRetrieveImagePullSecret")
			f.PodLines = entriesNewestFirst(entries, func(e *JournalEntry) bool {
				err, ok := e.Field("err")
				return ok && e.Severity == 'E' && strings.Contains(err, image)
			})
			if node := p.Obj.Spec.NodeName; node != "" {
				f.NodeLine = byNode[node][image]
				covered[node+"/"+image] = true
			}
			out = append(out, f)
		}
	}
	// Events about pods the evidence has no status for: the pod is known by its name.
	seen := map[string]int{}
	for _, e := range g.events {
		if !isPullFailureEvent(e) {
			continue
		}
		s, ok := g.podOfEvent(e)
		if !ok || s.Known() {
			continue
		}
		f := PullFailure{Subject: s, Container: ContainerInfo{Name: e.Container()}, Event: e, PodEvent: e}
		if m := reFailedToPull.FindStringSubmatch(e.Message); m != nil {
			f.Image = m[1]
		}
		if s.Node != "" && f.Image != "" {
			f.NodeLine = byNode[s.Node][f.Image]
			covered[s.Node+"/"+f.Image] = true
		}
		// Events are oldest first: a later event of the same container replaces the earlier.
		key := s.Namespace + "/" + s.Name + "/" + f.Container.Name + "/" + f.Image
		if i, ok := seen[key]; ok {
			out[i] = f
			continue
		}
		seen[key] = len(out)
		out = append(out, f)
	}
	// The kubelet's "Error syncing pod" lines about a pull of a pod the evidence does not
	// hold: the pod is known by the namespace/name of their pod= field.
	synced := map[string]int{}
	for i := range g.journal.len() {
		e := g.journal.at(i)
		// Only the pod worker's line is read: unquoting every entry's err would cost
		// what the journal weighs.
		if e.Severity != 'E' || e.Message != podSyncError ||
			!strings.Contains(e.FieldText, "ErrImagePull") && !strings.Contains(e.FieldText, "ImagePullBackOff") {
			continue
		}
		err, _ := e.Field("err")
		m := reSyncContainer.FindStringSubmatch(err)
		if m == nil {
			continue
		}
		ref, _ := e.Field("pod")
		ns, name, ok := strings.Cut(ref, "/")
		if !ok || g.FindPod(ns, name) != nil || seenAsEvent(seen, ns, name, m[1]) {
			continue
		}
		f := PullFailure{Subject: PodSubject{Namespace: ns, Name: name, Node: e.Node()}, Container: ContainerInfo{Name: m[1]}, PodLines: []*JournalEntry{e}}
		if im := reQuotedImage.FindStringSubmatch(err); im != nil {
			f.Image = im[1]
			covered[f.Subject.Node+"/"+f.Image] = true
			f.NodeLine = byNode[f.Subject.Node][f.Image]
		}
		key := ref + "/" + m[1]
		if j, ok := synced[key]; ok {
			out[j] = f // later lines replace earlier ones
			continue
		}
		synced[key] = len(out)
		out = append(out, f)
	}
	// Image service lines no pod accounts for: the node is known, the pod is not.
	for _, node := range sortedKeys(byNode) {
		for _, image := range sortedKeys(byNode[node]) {
			if !covered[node+"/"+image] {
				out = append(out, PullFailure{Subject: PodSubject{Node: node}, Image: image, NodeLine: byNode[node][image]})
			}
		}
	}
	for _, l := range g.fragmentLines("Failed to pull image") {
		f := PullFailure{Fragment: l}
		if m := reFailedToPull.FindStringSubmatch(l.Text); m != nil {
			f.Image = m[1]
		}
		out = append(out, f)
	}
	return out
}

// seenAsEvent reports whether a pull of the pod's container is known from an event.
func seenAsEvent(seen map[string]int, ns, name, container string) bool {
	prefix := ns + "/" + name + "/" + container + "/"
	for k := range seen {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// pullServiceLines indexes each node's latest error "PullImage from image service
// failed" line by image, in one pass over the kubelet journal.
func (g *Graph) pullServiceLines() map[string]map[string]*JournalEntry {
	out := map[string]map[string]*JournalEntry{}
	for i := range g.journal.len() {
		e := g.journal.at(i)
		if e.Severity != 'E' || e.Message != pullServiceFailed {
			continue
		}
		img, ok := e.Field("image")
		if !ok {
			continue
		}
		node := e.Node()
		if out[node] == nil {
			out[node] = map[string]*JournalEntry{}
		}
		out[node][img] = e
	}
	return out
}

// PullFailures lists the failing image pulls the rule may see: those of pod statuses
// when it declared pods, those known only from an event, a journal line or a pasted line
// when it declared that kind; each with only the evidence of kinds it declared.
func (v *View) PullFailures() []PullFailure {
	ff := v.factFilter()
	var out []PullFailure
	for _, f := range v.factsOf().pulls {
		switch {
		case f.Waiting != nil:
			if !v.allow(Pods) {
				return nil
			}
		case f.Event != nil:
			if !ff.events {
				continue
			}
		case len(f.PodLines) > 0 || f.NodeLine != nil:
			if !ff.journal {
				continue
			}
		case f.Fragment != nil:
			if !ff.fragments {
				continue
			}
		}
		if !ff.events {
			f.Event, f.PodEvent, f.SecretEvent = nil, nil, nil
		}
		if !ff.journal {
			f.PodLines, f.NodeLine = nil, nil
		}
		out = append(out, f)
	}
	return out
}

// ContainerWaits lists the waiting containers of every pod, with the events and journal
// lines of the kinds the rule declared.
func (v *View) ContainerWaits() []ContainerWait {
	if !v.allow(Pods) {
		return nil
	}
	ff := v.factFilter()
	waits := v.factsOf().waits
	out := make([]ContainerWait, 0, len(waits))
	for _, f := range waits {
		if !ff.events {
			f.Events = nil
		}
		if !ff.journal {
			f.SyncErrors = nil
		}
		out = append(out, f)
	}
	return out
}
