package rules

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// What the scheduling rules share: the scheduler's FailedScheduling message and its
// per-node reasons, node selectors and required affinity against node labels, and taints.

// nodesKnown reports whether the evidence holds every node with its labels, taints and
// resources: node objects, none of them built from a fragment that lacks them (a Node
// known only from its pods' events, a pasted Taints line). Rules that reason over all
// nodes need that; with less, only a scheduler message that counts every node decides.
func nodesKnown(v *analyze.View) bool {
	if !v.Has(analyze.Nodes) {
		return false
	}
	for _, n := range v.Nodes() {
		for _, what := range []string{"spec", "status", "labels", "taints", "allocatable"} {
			if analyze.Partial(n.Obj.ObjectMeta, what) {
				return false
			}
		}
	}
	return true
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
		parts = append(parts, "nodeSelector "+phrase.Selector(pod.Spec.NodeSelector))
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
		out = append(out, p.Loc.At("spec", "nodeSelector").Evidence("nodeSelector "+phrase.Selector(pod.Spec.NodeSelector), pod.CreationTimestamp.Time))
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
