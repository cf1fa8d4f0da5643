package analyze_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// Only scheduling facts about a pod the evidence holds are unscheduled pods; each cites
// the scheduler's message and, when apart from it, the latest FailedScheduling event.
func TestUnscheduledPodsAndTheirEvidence(t *testing.T) {
	withCondition := podObj("shop", "web", "", obj{"status": obj{"phase": "Pending", "conditions": []any{obj{"type": "PodScheduled", "status": "False",
		"reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu.", "lastTransitionTime": "2026-11-29T10:00:01Z"}}}})
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(withCondition, podObj("shop", "api", "", nil)),
		"cluster-resources/events/shop.json": list(
			event("shop", "e0", "Pod", "web", "", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", "2026-11-29T10:00:04Z"),
			event("shop", "e1", "Pod", "api", "", "FailedScheduling", "0/3 nodes are available: 3 Insufficient memory.", "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "ghost", "", "FailedScheduling", "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", "2026-11-29T10:00:06Z"),
		),
	})
	got := viewOf(t, g, allKinds, func(v *analyze.View) map[string]int {
		out := map[string]int{}
		for _, u := range v.UnscheduledPods() {
			out[u.Subject.Pod.Obj.Name] = len(u.SchedulerEvidence())
		}
		return out
	})
	// web: its condition and its event; api: the event is the message.
	if want := map[string]int{"web": 2, "api": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("unscheduled pods (evidence items) = %v, want %v", got, want)
	}
}

// Node selectors and required affinity are matched as the scheduler's NodeAffinity
// filter does, and each miss names the node's actual label.
func TestNodeMismatches(t *testing.T) {
	node := &corev1.Node{}
	node.Name = "n1"
	node.Labels = map[string]string{"disk": "hdd", "cores": "8"}
	pod := &corev1.Pod{}
	pod.Spec.NodeSelector = map[string]string{"disk": "ssd", "zone": "a"}
	if got, want := analyze.NodeMismatches(pod, node), []string{"disk=hdd", "no zone label"}; !slices.Equal(got, want) {
		t.Errorf("selector mismatches = %v, want %v", got, want)
	}
	pod.Spec.NodeSelector = nil
	term := func(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: reqs}
	}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			term(corev1.NodeSelectorRequirement{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"16"}}),
			term(corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd", "nvme"}}),
		}}}}
	want := []string{"term 1: cores=8 (affinity wants cores>16)", "term 2: disk=hdd (affinity wants disk in (ssd,nvme))"}
	if got := analyze.NodeMismatches(pod, node); !slices.Equal(got, want) {
		t.Errorf("affinity mismatches = %v, want %v", got, want)
	}
	if got, want := analyze.NodeRequirements(pod), "required node affinity (cores>16) or (disk in (ssd,nvme))"; got != want {
		t.Errorf("NodeRequirements = %q, want %q", got, want)
	}
	node.Labels["cores"] = "32"
	if got := analyze.NodeMismatches(pod, node); got != nil {
		t.Errorf("a node matching one term: mismatches = %v, want none", got)
	}
	if _, ok := analyze.NodeTermMismatch(corev1.NodeSelectorTerm{}, node); ok {
		t.Error("an empty term matched a node")
	}
}

func TestFitReasonsAndTaints(t *testing.T) {
	reasons := []string{"2 node(s) had untolerated taint {a: b}", "1 node(s) had untolerated taint {c: d}", "3 Insufficient cpu"}
	if got := analyze.FitReasonCount(reasons, "untolerated taint"); got != 3 {
		t.Errorf("FitReasonCount = %d, want 3", got)
	}
	if analyze.NodeCount("x") != -1 || analyze.NodeCount("12") != 12 {
		t.Error("NodeCount")
	}
	if got := analyze.TaintString(corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}); got != "gpu=true:NoSchedule" {
		t.Errorf("TaintString = %q", got)
	}
	if got := analyze.TaintString(corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoExecute}); got != "gpu:NoExecute" {
		t.Errorf("TaintString without value = %q", got)
	}
	// Post-filter messages after the reasons (1.3x) are not reasons.
	n, rs := analyze.FitReasons("0/6 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 4 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")
	if n != "6" || len(rs) != 2 || rs[1] != "4 node(s) had untolerated taint(s)" {
		t.Errorf("FitReasons = %q %q", n, rs)
	}
	if !analyze.IntegerCompare("10", "9", true) || analyze.IntegerCompare("10", "9", false) || analyze.IntegerCompare("x", "9", true) {
		t.Error("IntegerCompare")
	}
}
