package rules

import "podflow.dev/podflow/analyze"

// Pending pods the scheduler has not placed: the scheduling rules and the volume rules
// that explain a pod stuck before a node read the same list and the same verdict.

// unscheduledPod is a Pending pod with no node, with the scheduler's latest word on it.
type unscheduledPod struct {
	pod *analyze.Pod
	// msg is the scheduler's message (empty when the bundle has none) and ev cites it.
	msg string
	ev  analyze.Evidence
	// total is the node count the message gives and reasons its per-node "count reason"
	// items (analyze.FitReasons).
	total   string
	reasons []string
	// event is the pod's latest FailedScheduling event.
	event *analyze.Event
}

// unscheduledPods lists, in the view's order, the Pending pods the scheduler has not
// placed on a node, from the view's scheduling facts. A FailedScheduling known only from
// an event or a pasted line has no pod spec to compare with the nodes; the unexplained
// check quotes it.
func unscheduledPods(v *analyze.View) []unscheduledPod {
	var out []unscheduledPod
	for _, f := range v.SchedulingFailures() {
		if f.Subject.Pod == nil {
			continue
		}
		out = append(out, unscheduledPod{pod: f.Subject.Pod, msg: f.Message, ev: f.MessageEvidence, total: f.Nodes, reasons: f.Reasons, event: f.Event})
	}
	return out
}

// schedulerEvidence cites the scheduler's message and, when it is a separate item, the
// latest FailedScheduling event.
func (u unscheduledPod) schedulerEvidence() []analyze.Evidence {
	evidence := []analyze.Evidence{u.ev}
	if e := u.event; e != nil && e.Loc != u.ev.Location {
		evidence = append(evidence, e.Evidence())
	}
	return evidence
}
