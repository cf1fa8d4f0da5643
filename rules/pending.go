package rules

import (
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// Pending pods the scheduler has not placed: the scheduling rules and the volume rules
// that explain a pod stuck before a node read the same list and the same verdict.

// unscheduledPod is a Pending pod with no node, with the scheduler's latest word on it.
type unscheduledPod struct {
	pod *analyze.Pod
	// msg is the scheduler's message (empty when the bundle has none) and ev cites it.
	msg string
	ev  analyze.Evidence
	// total is the node count the message gives and reasons its per-node "count reason"
	// items (fitReasons).
	total   string
	reasons []string
}

// unscheduledPods lists, in the view's order, the Pending pods the scheduler has not
// placed on a node.
func unscheduledPods(v *analyze.View) []unscheduledPod {
	var out []unscheduledPod
	for _, p := range v.Pods() {
		pod := p.Obj
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		msg, ev := unschedulableMessage(v, p)
		total, reasons := fitReasons(msg)
		out = append(out, unscheduledPod{pod: p, msg: msg, ev: ev, total: total, reasons: reasons})
	}
	return out
}
