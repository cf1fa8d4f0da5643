package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// SchedulingNodeSelectorMismatch finds pending pods whose nodeSelector or required node
// affinity no node satisfies.
var SchedulingNodeSelectorMismatch = &analyze.Rule{
	ID:       "scheduling-node-selector-mismatch",
	Stage:    analyze.StageScheduling,
	Title:    "no node has the labels the pod's nodeSelector or node affinity requires",
	Doc:      schedulingNodeSelectorMismatchDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingNodeSelectorMismatch,
}

const schedulingNodeSelectorMismatchDoc = `The pod asks for nodes with particular labels, through spec.nodeSelector or
spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, and no node
in the cluster carries them. The scheduler says "N node(s) didn't match Pod's node
affinity/selector" and the pod stays Pending until a node with the labels appears.
The scheduler names only the first check each node fails, so a node that also has an
untolerated taint is counted under the taint: podflow compares the pod's requirements
with every node's labels to tell which nodes could ever take the pod.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.nodeSelector}{"\n"}{.spec.affinity.nodeAffinity}'
    kubectl get nodes --show-labels
    kubectl get nodes -l KEY=VALUE       # the nodes the selector would allow

## Fix

Label the nodes meant to run the pod (kubectl label node NODE KEY=VALUE), or correct the
selector or affinity in the pod's template to labels the nodes carry (a typo in a key
or value is the usual cause). Labels on nodes created by an autoscaler come from the
node group's configuration.
`

// nodeAffinityReason is the NodeAffinity filter's reason for a node that fails the pod's
// nodeSelector or required node affinity
// (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, ErrReasonPod).
const nodeAffinityReason = "didn't match Pod's node affinity/selector"

func schedulingNodeSelectorMismatch(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := sortedNodes(v)
	for _, u := range unscheduledPods(v) {
		p, pod := u.pod, u.pod.Obj
		wants := nodeRequirements(pod)
		if wants == "" {
			continue
		}
		ev, total, reasons := u.ev, u.total, u.reasons
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, nodeAffinityReason) }) {
			continue
		}
		var misses []string
		var nodeEvidence []analyze.Evidence
		fits := false
		for _, n := range nodes {
			miss := nodeMismatches(pod, n.Obj)
			if len(miss) == 0 {
				fits = true
				break
			}
			line := "node " + n.Obj.Name + ": " + strings.Join(miss, ", ")
			misses = append(misses, line)
			nodeEvidence = append(nodeEvidence, labelsLoc(n).Evidence(line, v.CollectedAt()))
		}
		if fits {
			// A node satisfies the selector now: whatever else the scheduler reported
			// (a taint, resources) is what keeps the pod off it.
			continue
		}
		if !v.Has(analyze.Nodes) && reasonCount(reasons, nodeAffinityReason) != atoi(total) {
			// Without node objects only a message that counts every node as not
			// matching tells; the scheduler names just the first check a node fails.
			continue
		}
		evidence := []analyze.Evidence{ev}
		if e := analyze.LatestEvent(v.EventsFor(p.Ref()), "", "FailedScheduling"); e != nil && e.Loc != ev.Location {
			evidence = append(evidence, e.Evidence())
		}
		evidence = append(evidence, requirementEvidence(p)...)
		evidence = append(evidence, nodeEvidence...)
		cause := fmt.Sprintf("no node matches the pod's %s: 0/%s nodes are available: %s", wants, total, strings.Join(reasons, ", "))
		if len(misses) > 0 {
			cause += "; " + joinCapped(misses, 3, "node(s)")
		}
		subjects, group := v.PodAndWorkload(p)
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Label the nodes meant to run %s so they satisfy its %s (kubectl label node NODE %s), "+
				"or correct the selector in its template to labels the nodes carry.", group, wants, labelCommand(pod)),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.nodeSelector}{\"\\n\"}{.spec.affinity.nodeAffinity}'", pod.Namespace, pod.Name),
				"kubectl get nodes --show-labels",
			},
			GroupKey: group + "\x00" + wants,
		})
	}
	return out
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

// labelCommand is the argument of kubectl label that gives a node the labels the pod
// asks for: its nodeSelector, else the In expressions of its first affinity term.
func labelCommand(pod *corev1.Pod) string {
	if len(pod.Spec.NodeSelector) > 0 {
		return strings.ReplaceAll(selectorString(pod.Spec.NodeSelector), ",", " ")
	}
	var labels []string
	if req := requiredTerms(pod); req != nil && len(req.NodeSelectorTerms) > 0 {
		for _, r := range req.NodeSelectorTerms[0].MatchExpressions {
			if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 {
				labels = append(labels, r.Key+"="+r.Values[0])
			}
		}
	}
	if len(labels) == 0 {
		return "KEY=VALUE"
	}
	return strings.Join(labels, " ")
}

// joinCapped joins up to max items and counts the rest.
func joinCapped(items []string, max int, what string) string {
	if len(items) <= max {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:max], "; ") + fmt.Sprintf("; and %d more %s", len(items)-max, what)
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
