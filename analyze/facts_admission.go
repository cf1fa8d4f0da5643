package analyze

import (
	"regexp"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// AdmissionRejection is one time the API server refused a pod (or a CronJob's Job) a
// controller tried to create: a FailedCreate event about the controller, a ReplicaSet's
// ReplicaFailure condition, which outlives the events, or a pasted "Error creating: "
// line whose controller is not known.
type AdmissionRejection struct {
	// Owner is the controller that tried, without UID (events may be recorded without
	// one); empty for a pasted line.
	Owner ObjectRef
	// Message is the API server's error, without the controller's prefix.
	Message string
	// Count is how many refusals an event stands for; 0 for a condition or a line.
	Count int
	// Event is the FailedCreate event, nil for a condition or a line.
	Event *Event
	// Loc, Text and At cite a condition or a pasted line.
	Loc  Location
	Text string
	At   time.Time
	// Fragment is the pasted line.
	Fragment *Line
}

// EvidenceAround cites the refusal with an excerpt centred on needle.
func (r AdmissionRejection) EvidenceAround(needle string) Evidence {
	switch {
	case r.Event != nil:
		return r.Event.EvidenceAround(needle)
	case r.Fragment != nil:
		ev := r.Fragment.Evidence()
		ev.Excerpt = ExcerptAround(r.Fragment.Text, needle)
		return ev
	}
	return r.Loc.EvidenceAround(r.Text, needle, r.At)
}

// podCreateOwners are the kinds whose controllers record FailedCreate when the API
// server refuses a pod (pkg/controller/controller_utils.go RealPodControl: "Error
// creating: %v"; pkg/controller/statefulset/stateful_pod_control.go recordPodEvent:
// "create Pod %s in StatefulSet %s failed error: %s"; a CronJob's for its Jobs:
// pkg/controller/cronjob/cronjob_controllerv2.go "Error creating job: %v").
var podCreateOwners = map[string]bool{"ReplicaSet": true, "Job": true, "StatefulSet": true, "DaemonSet": true, "CronJob": true}

var reStatefulSetCreate = regexp.MustCompile(`^create Pod \S+ in StatefulSet \S+ failed error: `)

// RefusalMessage is the API server's error in a controller's FailedCreate message.
func RefusalMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "(combined from similar events): ")
	msg = strings.TrimPrefix(msg, "Error creating: ")
	msg = strings.TrimPrefix(msg, "Error creating job: ")
	return reStatefulSetCreate.ReplaceAllString(msg, "")
}

// admissionFacts lists the FailedCreate events (oldest first), then the ReplicaSets'
// ReplicaFailure conditions, then pasted refusals.
func (g *Graph) admissionFacts() []AdmissionRejection {
	var out []AdmissionRejection
	for _, e := range g.events {
		if e.Reason != "FailedCreate" || !podCreateOwners[e.Regarding.Kind] {
			continue
		}
		owner := ObjectRef{Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name}
		out = append(out, AdmissionRejection{Owner: owner, Message: RefusalMessage(e.Message), Count: int(e.Count), Event: e})
	}
	for _, rs := range g.replicaSets {
		for i, c := range rs.Obj.Status.Conditions {
			if c.Type != appsv1.ReplicaSetReplicaFailure || c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" {
				continue
			}
			ref := rs.Ref()
			out = append(out, AdmissionRejection{Owner: ObjectRef{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name},
				Message: RefusalMessage(c.Message), Loc: rs.Loc.At("status", "conditions", i),
				Text: "ReplicaFailure " + c.Reason + ": " + c.Message, At: c.LastTransitionTime.Time})
		}
	}
	for _, l := range g.fragmentLines("Error creating: ") {
		_, msg, _ := strings.Cut(l.Text, "Error creating: ")
		out = append(out, AdmissionRejection{Message: RefusalMessage(msg), Fragment: l})
	}
	return out
}

// AdmissionRejections lists the refusals of the kinds the rule declared: events, the
// ReplicaSets' conditions, pasted lines.
func (v *View) AdmissionRejections() []AdmissionRejection {
	ff := v.factFilter()
	rs := v.declared[ReplicaSets]
	var out []AdmissionRejection
	for _, r := range v.factsOf().admission {
		switch {
		case r.Event != nil:
			if !v.allow(Events) {
				continue
			}
		case r.Fragment != nil:
			if !ff.fragments {
				continue
			}
		default:
			if !rs {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
