package rules

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// What the scheduling rules share: the scheduler's FailedScheduling message and its
// per-node reasons, node selectors and required affinity against node labels, and taints.

// schedulerEvidence cites the scheduler's message and, when it is a separate item, the
// latest FailedScheduling event.
func schedulerEvidence(v *analyze.View, p *analyze.Pod, ev analyze.Evidence) []analyze.Evidence {
	evidence := []analyze.Evidence{ev}
	if e := analyze.LatestEvent(v.EventsFor(p.Ref()), "", "FailedScheduling"); e != nil && e.Loc != ev.Location {
		evidence = append(evidence, e.Evidence())
	}
	return evidence
}

// The scheduler's FitError message: "0/N nodes are available: <filter reasons>. preemption: …"
// (pkg/scheduler/framework/types.go, FitError.Error); the resource reasons are
// "Insufficient cpu", "Insufficient memory", "Insufficient <extended resource>" and
// "Too many pods" (pkg/scheduler/framework/plugins/noderesources/fit.go).
var reFitError = regexp.MustCompile(`^0/(\d+) nodes are available: (.*)$`)

// fitReasons splits the filter part of a FitError message into "count reason" items.
func fitReasons(msg string) (nodes string, reasons []string) {
	m := reFitError.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return "", nil
	}
	body := m[2]
	if i := strings.Index(body, " preemption:"); i >= 0 {
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

// unschedulableMessage takes the scheduler's message from the PodScheduled condition,
// or from the latest FailedScheduling event when the condition has none.
func unschedulableMessage(v *analyze.View, p *analyze.Pod) (string, analyze.Evidence) {
	c, loc := analyze.PodCondition(p, corev1.PodScheduled)
	if c != nil && c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, "0/") {
		return c.Message, loc.Evidence("PodScheduled=False "+c.Reason+": "+c.Message, c.LastTransitionTime.Time)
	}
	if c != nil && c.Status == corev1.ConditionTrue {
		return "", analyze.Evidence{}
	}
	if e := analyze.LatestEvent(v.EventsFor(p.Ref()), "", "FailedScheduling"); e != nil {
		return e.Message, e.Evidence()
	}
	return "", analyze.Evidence{}
}

func sortedNodes(v *analyze.View) []*analyze.Node {
	nodes := append([]*analyze.Node(nil), v.Nodes()...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Obj.Name < nodes[j].Obj.Name })
	return nodes
}

// labelsLoc points at a node's labels, or at its metadata when it has none (a pointer
// must name something that exists).
func labelsLoc(n *analyze.Node) analyze.Location {
	if len(n.Obj.Labels) == 0 {
		return n.Loc.At("metadata")
	}
	return n.Loc.At("metadata", "labels")
}

// requiredTerms is the pod's required node affinity, nil when it has none.
func requiredTerms(pod *corev1.Pod) *corev1.NodeSelector {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// nodeRequirements describes what the pod asks of a node's labels, "" when nothing.
func nodeRequirements(pod *corev1.Pod) string {
	var parts []string
	if len(pod.Spec.NodeSelector) > 0 {
		parts = append(parts, "nodeSelector "+selectorString(pod.Spec.NodeSelector))
	}
	if req := requiredTerms(pod); req != nil {
		parts = append(parts, affinityString(req))
	}
	return strings.Join(parts, " and ")
}

// affinityString renders required node affinity: terms joined by "or".
func affinityString(req *corev1.NodeSelector) string {
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

// nodeMismatches says why a node fails the pod's nodeSelector and required node affinity,
// nil when it satisfies both. Matching follows the scheduler's NodeAffinity filter
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity: the nodeSelector must match
// and so must at least one required term; a term matches when all its expressions do;
// matchFields knows only metadata.name).
func nodeMismatches(pod *corev1.Pod, node *corev1.Node) []string {
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
	req := requiredTerms(pod)
	if req == nil {
		return out
	}
	var termMisses []string
	for i, t := range req.NodeSelectorTerms {
		miss, ok := termMismatch(t, node)
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

// termMismatch reports whether a node matches a term and, when it does not, the first
// requirement it fails.
func termMismatch(t corev1.NodeSelectorTerm, node *corev1.Node) (string, bool) {
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
		return integerCompare(value, r.Values[0], r.Operator == corev1.NodeSelectorOpGt)
	}
	return false
}

// requirementEvidence cites the pod's nodeSelector and required node affinity.
func requirementEvidence(p *analyze.Pod) []analyze.Evidence {
	pod := p.Obj
	var out []analyze.Evidence
	if len(pod.Spec.NodeSelector) > 0 {
		out = append(out, p.Loc.At("spec", "nodeSelector").Evidence("nodeSelector "+selectorString(pod.Spec.NodeSelector), pod.CreationTimestamp.Time))
	}
	if req := requiredTerms(pod); req != nil {
		out = append(out, p.Loc.At("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Evidence(
			affinityString(req), pod.CreationTimestamp.Time))
	}
	return out
}

// reasonCount adds up the node counts of the fit reasons that contain substr: "3 node(s)
// had untolerated taint(s)" counts 3.
func reasonCount(reasons []string, substr string) int {
	n := 0
	for _, r := range reasons {
		if !strings.Contains(r, substr) {
			continue
		}
		count, _, _ := strings.Cut(r, " ")
		n += atoi(count)
	}
	return n
}

// atoi reads a count, -1 when it is not a number (so it never equals a real count).
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// taintString renders a taint as kubectl does: key=value:Effect, key:Effect without a value.
func taintString(t corev1.Taint) string {
	return taintKV(t.Key, t.Value) + ":" + string(t.Effect)
}

func taintKV(key, value string) string {
	if value == "" {
		return key
	}
	return key + "=" + value
}
