package analyze

import (
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Event is a Kubernetes event normalized from core/v1 or events.k8s.io/v1: what it is
// about, reason, message, how often and when it was seen.
type Event struct {
	Regarding ObjectRef
	// FieldPath narrows the object, e.g. spec.containers{app}.
	FieldPath string
	Type      string
	Reason    string
	Message   string
	// Count is how many times the event was seen (1 when the event does not say).
	Count     int32
	FirstTime time.Time
	LastTime  time.Time
	// Source is the reporting component, e.g. kubelet or default-scheduler.
	Source string
	// Host is the node the reporting component ran on, when given.
	Host string
	Loc  Location
}

// Evidence cites the event with its reason, message and count.
func (e *Event) Evidence() Evidence {
	text := e.Reason + ": " + e.Message
	if e.Count > 1 {
		text += " (x" + itoa(int(e.Count)) + ")"
	}
	return e.Loc.Evidence(text, e.LastTime)
}

// EvidenceAround cites the event with an excerpt centred on needle.
func (e *Event) EvidenceAround(needle string) Evidence {
	ev := e.Evidence()
	ev.Excerpt = ExcerptAround(e.Reason+": "+e.Message, needle)
	return ev
}

// Container is the container name the event's field path points at, if any.
func (e *Event) Container() string {
	fp := e.FieldPath
	for _, p := range []string{"spec.containers{", "spec.initContainers{", "spec.ephemeralContainers{"} {
		if strings.HasPrefix(fp, p) && strings.HasSuffix(fp, "}") {
			return fp[len(p) : len(fp)-1]
		}
	}
	if fp == "" && containerEventReasons[e.Reason] {
		if m := reContainerInMessage.FindStringSubmatch(e.Message); m != nil {
			return m[1]
		}
	}
	return ""
}

// A pasted describe or event row carries no field path; the kubelet's own messages
// about one container name it (pkg/kubelet/kuberuntime: "Created container: %s",
// "Started container %s", "Stopping container %s", "Container %s failed liveness
// probe", "Back-off restarting failed container %s in pod %s"; events.go's reasons).
var (
	containerEventReasons = map[string]bool{
		"Created": true, "Started": true, "Killing": true, "BackOff": true, "Failed": true,
	}
	reContainerInMessage = regexp.MustCompile(`^(?:(?:Created|Started|Stopping) container:? |(?:Init )?[Cc]ontainer |Back-off restarting failed container:? )([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)(?:$| (?:failed (?:liveness|startup|readiness) probe|definition changed|resize requires restart|in pod |.*will be restarted))`)
)

// rawEvent decodes both event APIs: core/v1 (involvedObject, count, first/lastTimestamp)
// and events.k8s.io/v1 (regarding, note, deprecated*, series).
type rawEvent struct {
	metav1.ObjectMeta `json:"metadata"`
	InvolvedObject    corev1.ObjectReference  `json:"involvedObject"`
	Regarding         *corev1.ObjectReference `json:"regarding"`
	Reason            string                  `json:"reason"`
	Message           string                  `json:"message"`
	Note              string                  `json:"note"`
	Type              string                  `json:"type"`
	Count             int32                   `json:"count"`
	DeprecatedCount   int32                   `json:"deprecatedCount"`
	FirstTimestamp    metav1.Time             `json:"firstTimestamp"`
	LastTimestamp     metav1.Time             `json:"lastTimestamp"`
	DeprecatedFirst   metav1.Time             `json:"deprecatedFirstTimestamp"`
	DeprecatedLast    metav1.Time             `json:"deprecatedLastTimestamp"`
	EventTime         metav1.MicroTime        `json:"eventTime"`
	Series            *struct {
		Count            int32            `json:"count"`
		LastObservedTime metav1.MicroTime `json:"lastObservedTime"`
	} `json:"series"`
	Source              corev1.EventSource `json:"source"`
	ReportingController string             `json:"reportingController"`
	ReportingInstance   string             `json:"reportingInstance"`
	DeprecatedSource    corev1.EventSource `json:"deprecatedSource"`
}

func (l *loader) addEvent(o *Object[rawEvent]) {
	r := o.Obj
	ref := r.InvolvedObject
	if r.Regarding != nil {
		ref = *r.Regarding
	}
	if l.outOfScope && !l.scope.keepsEvent(ref.Kind, ref.Namespace) {
		return
	}
	e := &Event{
		Regarding: ObjectRef{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: string(ref.UID)},
		FieldPath: ref.FieldPath, Type: r.Type, Reason: r.Reason, Message: r.Message,
		Count: r.Count, Loc: o.Loc,
	}
	if e.Message == "" {
		e.Message = r.Note
	}
	if e.Count == 0 {
		e.Count = r.DeprecatedCount
	}
	e.FirstTime = firstNonZero(r.FirstTimestamp.Time, r.DeprecatedFirst.Time, r.EventTime.Time, r.CreationTimestamp.Time)
	e.LastTime = firstNonZero(r.LastTimestamp.Time, r.DeprecatedLast.Time)
	if r.Series != nil {
		if e.Count < r.Series.Count {
			e.Count = r.Series.Count
		}
		if r.Series.LastObservedTime.After(e.LastTime) {
			e.LastTime = r.Series.LastObservedTime.Time
		}
	}
	if e.LastTime.IsZero() {
		e.LastTime = e.FirstTime
	}
	if e.Count == 0 {
		e.Count = 1
	}
	src := firstNonEmpty(r.Source.Component, r.ReportingController, r.DeprecatedSource.Component)
	e.Source = src
	e.Host = firstNonEmpty(r.Source.Host, r.DeprecatedSource.Host)
	if e.Regarding.Namespace == "" && e.Regarding.Kind != "Node" && e.Regarding.Kind != "" {
		e.Regarding.Namespace = r.Namespace
	}
	l.intern.event(e)
	if e.Regarding.Kind == "Pod" {
		// The pod's own name and UID, rather than the event's copies of them.
		if p := l.g.FindPod(e.Regarding.Namespace, e.Regarding.Name); p != nil {
			e.Regarding.Name = p.meta.Name
			if e.Regarding.UID == string(p.meta.UID) {
				e.Regarding.UID = string(p.meta.UID)
			}
		}
	}
	l.noteTime(e.LastTime)
	if l.quiet != nil {
		l.quiet.add(l.g, e)
		return
	}
	l.g.events = append(l.g.events, e)
}

func eventLess(a, b *Event) bool {
	if !a.LastTime.Equal(b.LastTime) {
		return a.LastTime.Before(b.LastTime)
	}
	al, bl := a.Loc.inBundle(), b.Loc.inBundle()
	if al.Path != bl.Path {
		return al.Path < bl.Path
	}
	return al.Pointer < bl.Pointer
}

func firstNonZero(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
