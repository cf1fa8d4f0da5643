package analyze

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// SchedulingFailure is a pod the scheduler has not placed: a Pending pod with no node,
// with its PodScheduled condition and latest FailedScheduling event, or a FailedScheduling
// event or pasted scheduler message about a pod the evidence does not hold.
type SchedulingFailure struct {
	Subject PodSubject
	// Condition is the pod's PodScheduled condition, nil when its status has none.
	Condition    *corev1.PodCondition
	ConditionLoc Location
	// Event is the pod's latest FailedScheduling event.
	Event *Event
	// Fragment is a pasted line with the scheduler's message.
	Fragment *Line
	// Message is the scheduler's message and MessageEvidence cites it: the condition's
	// when it carries the FitError, else the latest event's; empty when neither says.
	Message         string
	MessageEvidence Evidence
	// Nodes is the node count the message gives and Reasons its per-node "count reason"
	// items (FitReasons).
	Nodes   string
	Reasons []string
}

// schedulingFacts lists the unscheduled pods, then the FailedScheduling events of pods
// the evidence does not hold, then pasted scheduler messages.
func (g *Graph) schedulingFacts() []SchedulingFailure {
	var out []SchedulingFailure
	for _, p := range g.pods {
		pod := p.Obj
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		f := SchedulingFailure{Subject: podSubject(p), Event: LatestEvent(g.eventsFor(p.Ref()), "", "FailedScheduling")}
		f.Condition, f.ConditionLoc = PodCondition(p, corev1.PodScheduled)
		out = append(out, f)
	}
	out = eventOnlyFacts(g, out, "FailedScheduling",
		func(s PodSubject, e *Event) SchedulingFailure { return SchedulingFailure{Subject: s, Event: e} },
		func(f *SchedulingFailure, e *Event) { f.Event = e })
	for _, l := range g.fragmentLines("nodes are available") {
		if reFitError.MatchString(strings.TrimSpace(l.Text)) {
			out = append(out, SchedulingFailure{Fragment: l})
		}
	}
	return out
}

// settle takes the scheduler's message from the condition when it carries the FitError
// (a condition that says the pod is scheduled leaves none), else from the event or the
// pasted line, and splits it.
func (f *SchedulingFailure) settle() {
	c := f.Condition
	switch {
	case c != nil && c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, "0/"):
		f.Message, f.MessageEvidence = c.Message, f.ConditionLoc.Evidence("PodScheduled=False "+c.Reason+": "+c.Message, c.LastTransitionTime.Time)
	case c != nil && c.Status == corev1.ConditionTrue:
	case f.Event != nil:
		f.Message, f.MessageEvidence = f.Event.Message, f.Event.Evidence()
	case f.Fragment != nil:
		f.Message, f.MessageEvidence = f.Fragment.Text, f.Fragment.Evidence()
	}
	f.Nodes, f.Reasons = FitReasons(f.Message)
}

// SchedulingFailures lists the unscheduled pods the rule may see, their messages read
// from the kinds it declared.
func (v *View) SchedulingFailures() []SchedulingFailure {
	ff := v.factFilter()
	var out []SchedulingFailure
	for _, f := range v.factsOf().scheduling {
		ok, stop := ff.visible(v, f.Subject.Known(), f.Event != nil, f.Fragment != nil)
		if stop {
			return nil
		}
		if !ok {
			continue
		}
		if !ff.events {
			f.Event = nil
		}
		f.settle()
		out = append(out, f)
	}
	return out
}

// The scheduler's FitError message: "0/N nodes are available: <filter reasons>. preemption: …"
// (pkg/scheduler/framework/types.go, FitError.Error); the resource reasons are
// "Insufficient cpu", "Insufficient memory", "Insufficient <extended resource>" and
// "Too many pods" (pkg/scheduler/framework/plugins/noderesources/fit.go).
var reFitError = regexp.MustCompile(`^0/(\d+) nodes are available: (.*)$`)

// FitReasons splits the filter part of a FitError message into "count reason" items.
func FitReasons(msg string) (nodes string, reasons []string) {
	m := reFitError.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return "", nil
	}
	body := m[2]
	if i := strings.Index(body, " preemption:"); i >= 0 {
		body = body[:i]
	}
	// Post-filter plugins' messages follow the reasons after ". " since 1.3x ("…
	// taint(s). no new claims to deallocate, preemption: …"); a reason never holds ". ".
	if i := strings.Index(body, ". "); i >= 0 && !startsWithCount(body[i+2:]) {
		body = body[:i]
	}
	body = strings.TrimSuffix(strings.TrimSpace(body), ".")
	// Reasons are joined by ", " but a reason (a taint, say) may contain ", " itself: a
	// new reason always starts with its node count.
	for _, part := range strings.Split(body, ", ") {
		if n := len(reasons); n > 0 && !startsWithCount(part) {
			reasons[n-1] += ", " + part
			continue
		}
		reasons = append(reasons, part)
	}
	return m[1], reasons
}

func startsWithCount(s string) bool {
	sp := strings.IndexByte(s, ' ')
	if sp <= 0 {
		return false
	}
	for _, r := range s[:sp] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
