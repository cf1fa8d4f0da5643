package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/internal/phrase"
)

// What the scheduler compares, read the way it reads it: a pod's nodeSelector and
// required node affinity against node labels, taints, and the per-node reasons of its
// FailedScheduling message. The scheduling rules and the volume rules that explain a pod
// stuck before a node read these.

// UnscheduledPods lists, in the view's order, the scheduling facts of Pending pods the
// evidence holds: a FailedScheduling known only from an event or a pasted line has no
// pod spec to compare with the nodes (the unexplained check quotes it).
func (v *View) UnscheduledPods() []SchedulingFailure {
	var out []SchedulingFailure
	for _, f := range v.SchedulingFailures() {
		if f.Subject.Pod != nil {
			out = append(out, f)
		}
	}
	return out
}

// SchedulerEvidence cites the scheduler's message and, when it is a separate item, the
// latest FailedScheduling event.
func (f SchedulingFailure) SchedulerEvidence() []Evidence {
	evidence := []Evidence{f.MessageEvidence}
	if e := f.Event; e != nil && e.Loc != f.MessageEvidence.Location {
		evidence = append(evidence, e.Evidence())
	}
	return evidence
}

// NodesKnown reports whether the evidence holds every node with its labels, taints and
// resources: node objects, none of them built from a fragment that lacks them (a Node
// known only from its pods' events, a pasted Taints line). Rules that reason over all
// nodes need that; with less, only a scheduler message that counts every node decides.
func (v *View) NodesKnown() bool {
	if !v.Has(Nodes) {
		return false
	}
	for _, n := range v.Nodes() {
		for _, what := range []string{"spec", "status", "labels", "taints", "allocatable"} {
			if Partial(n.Obj.ObjectMeta, what) {
				return false
			}
		}
	}
	return true
}

// SortedNodes lists the view's nodes by name.
func (v *View) SortedNodes() []*Node {
	nodes := append([]*Node(nil), v.Nodes()...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Obj.Name < nodes[j].Obj.Name })
	return nodes
}

// NodeLabelsLoc points at a node's labels, or at its metadata when it has none (a pointer
// must name something that exists).
func NodeLabelsLoc(n *Node) Location {
	if len(n.Obj.Labels) == 0 {
		return n.Loc.At("metadata")
	}
	return n.Loc.At("metadata", "labels")
}

// RequiredNodeAffinity is the pod's required node affinity, nil when it has none.
func RequiredNodeAffinity(pod *corev1.Pod) *corev1.NodeSelector {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// NodeRequirements describes what the pod asks of a node's labels, "" when nothing.
func NodeRequirements(pod *corev1.Pod) string {
	var parts []string
	if len(pod.Spec.NodeSelector) > 0 {
		parts = append(parts, "nodeSelector "+phrase.Selector(pod.Spec.NodeSelector))
	}
	if req := RequiredNodeAffinity(pod); req != nil {
		parts = append(parts, NodeAffinityString(req))
	}
	return strings.Join(parts, " and ")
}

// NodeAffinityString renders required node affinity: terms joined by "or".
func NodeAffinityString(req *corev1.NodeSelector) string {
	terms := make([]string, len(req.NodeSelectorTerms))
	for i, t := range req.NodeSelectorTerms {
		terms[i] = termString(t)
	}
	return "required node affinity " + strings.Join(terms, " or ")
}

func termString(t corev1.NodeSelectorTerm) string {
	var reqs []string
	for _, r := range t.MatchExpressions {
		reqs = append(reqs, requirementString(r))
	}
	for _, r := range t.MatchFields {
		reqs = append(reqs, requirementString(r))
	}
	return "(" + strings.Join(reqs, ", ") + ")"
}

func requirementString(r corev1.NodeSelectorRequirement) string {
	vals := strings.Join(r.Values, ",")
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		if len(r.Values) == 1 {
			return r.Key + "=" + vals
		}
		return r.Key + " in (" + vals + ")"
	case corev1.NodeSelectorOpNotIn:
		return r.Key + " notin (" + vals + ")"
	case corev1.NodeSelectorOpExists:
		return r.Key
	case corev1.NodeSelectorOpDoesNotExist:
		return "!" + r.Key
	case corev1.NodeSelectorOpGt:
		return r.Key + ">" + vals
	case corev1.NodeSelectorOpLt:
		return r.Key + "<" + vals
	}
	return r.Key + " " + string(r.Operator) + " (" + vals + ")"
}

// NodeMismatches says why a node fails the pod's nodeSelector and required node affinity,
// nil when it satisfies both. Matching follows the scheduler's NodeAffinity filter
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity: the nodeSelector must match
// and so must at least one required term; a term matches when all its expressions do;
// matchFields knows only metadata.name).
func NodeMismatches(pod *corev1.Pod, node *corev1.Node) []string {
	var out []string
	keys := make([]string, 0, len(pod.Spec.NodeSelector))
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := pod.Spec.NodeSelector[k]
		if got, ok := node.Labels[k]; !ok || got != want {
			out = append(out, actualLabel(node, k))
		}
	}
	req := RequiredNodeAffinity(pod)
	if req == nil {
		return out
	}
	var termMisses []string
	for i, t := range req.NodeSelectorTerms {
		miss, ok := NodeTermMismatch(t, node)
		if ok {
			return out
		}
		if len(req.NodeSelectorTerms) > 1 {
			miss = fmt.Sprintf("term %d: %s", i+1, miss)
		}
		termMisses = append(termMisses, miss)
	}
	if len(termMisses) == 0 {
		return append(out, "the required node affinity has no terms, which no node matches")
	}
	return append(out, termMisses...)
}

// NodeTermMismatch reports whether a node matches a term and, when it does not, the first
// requirement it fails.
func NodeTermMismatch(t corev1.NodeSelectorTerm, node *corev1.Node) (string, bool) {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return "an empty affinity term matches no node", false
	}
	for _, r := range t.MatchExpressions {
		val, has := node.Labels[r.Key]
		if !requirementMatches(r, val, has) {
			return actualLabel(node, r.Key) + " (affinity wants " + requirementString(r) + ")", false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !requirementMatches(r, node.Name, true) {
			return "metadata.name=" + node.Name + " (affinity wants " + requirementString(r) + ")", false
		}
	}
	return "", true
}

func actualLabel(node *corev1.Node, key string) string {
	if got, ok := node.Labels[key]; ok {
		return key + "=" + got
	}
	return "no " + key + " label"
}

// requirementMatches applies one node selector operator to a label value, as
// k8s.io/apimachinery/pkg/labels.Requirement.Matches does (Gt and Lt compare integers).
func requirementMatches(r corev1.NodeSelectorRequirement, value string, has bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(r.Values, value)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.Values, value)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		return IntegerCompare(value, r.Values[0], r.Operator == corev1.NodeSelectorOpGt)
	}
	return false
}

// NodeRequirementEvidence cites the pod's nodeSelector and required node affinity.
func NodeRequirementEvidence(p *Pod) []Evidence {
	pod := p.Obj
	var out []Evidence
	if len(pod.Spec.NodeSelector) > 0 {
		out = append(out, p.Loc.At("spec", "nodeSelector").Evidence("nodeSelector "+phrase.Selector(pod.Spec.NodeSelector), pod.CreationTimestamp.Time))
	}
	if req := RequiredNodeAffinity(pod); req != nil {
		out = append(out, p.Loc.At("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Evidence(
			NodeAffinityString(req), pod.CreationTimestamp.Time))
	}
	return out
}

// FitReasonCount adds up the node counts of the fit reasons that contain substr: "3 node(s)
// had untolerated taint(s)" counts 3.
func FitReasonCount(reasons []string, substr string) int {
	n := 0
	for _, r := range reasons {
		if !strings.Contains(r, substr) {
			continue
		}
		count, _, _ := strings.Cut(r, " ")
		n += NodeCount(count)
	}
	return n
}

// NodeCount reads a count, -1 when it is not a number (so it never equals a real count).
func NodeCount(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// TaintString renders a taint as kubectl does: key=value:Effect, key:Effect without a value.
func TaintString(t corev1.Taint) string {
	return TaintKV(t.Key, t.Value) + ":" + string(t.Effect)
}

// TaintKV renders a taint's or toleration's key and value: key=value, key alone without a value.
func TaintKV(key, value string) string {
	if value == "" {
		return key
	}
	return key + "=" + value
}

// IntegerCompare is the Gt/Lt test Kubernetes applies to node-selector requirements and
// tolerations: both sides must parse as integers, else it does not match.
func IntegerCompare(got, want string, greater bool) bool {
	g, err1 := strconv.ParseInt(got, 10, 64)
	w, err2 := strconv.ParseInt(want, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if greater {
		return g > w
	}
	return g < w
}

// nodeSelectorReasons are the NodeAffinity filter's reasons for a node that fails the
// pod's nodeSelector or required node affinity
// (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go ErrReasonPod; "didn't
// match node selector" before 1.22).
var nodeSelectorReasons = []string{"didn't match Pod's node affinity/selector", "didn't match node selector"}

// DedicatedNodes reports whether a scheduler's message counts every node as either
// tainted (tainted of them, in whichever wording the caller reads) or not matching the
// pod's node selector or affinity, with some of each. The TaintToleration filter runs
// before NodeAffinity (the scheduler's default plugins), and a node is reported for the
// first filter it fails: the nodes that passed the taints are the ones the selector
// rules out, so the tainted ones are the only nodes it may choose. The pod lacks their
// toleration, as with nodes dedicated to a team or a role.
func DedicatedNodes(reasons []string, total string, tainted int) bool {
	selector := 0
	for _, r := range nodeSelectorReasons {
		selector += FitReasonCount(reasons, r)
	}
	return tainted > 0 && selector > 0 && tainted+selector == NodeCount(total)
}
