package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// SchedulingUntoleratedTaint finds pending pods kept off the nodes they select by taints
// they do not tolerate.
var SchedulingUntoleratedTaint = &analyze.Rule{
	ID:       "scheduling-untolerated-taint",
	Stage:    analyze.StageScheduling,
	Title:    "the nodes the pod could use carry taints it does not tolerate",
	Doc:      schedulingUntoleratedTaintDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingUntoleratedTaint,
}

const schedulingUntoleratedTaintDoc = `The nodes the pod may run on (those its nodeSelector and node affinity allow) carry
a NoSchedule or NoExecute taint that none of the pod's tolerations matches, so the
scheduler rejects them: "N node(s) had untolerated taint(s)" (older schedulers name the
taint: "had untolerated taint {key: value}"). Taints reserve nodes for particular work
(GPU pools, dedicated tenants) or are set by Kubernetes itself for a node condition
(node.kubernetes.io/not-ready, unreachable, disk-pressure, memory-pressure, unschedulable).

## Confirm on a live cluster

    kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.tolerations}'

## Fix

If the pod belongs on those nodes, add a toleration for the taint to its template
(key, operator Equal and value, or operator Exists, and the effect). If it does not,
point its nodeSelector or affinity at other nodes. Remove a taint that was left behind
with kubectl taint nodes NODE KEY[=VALUE]:EFFECT-. A node.kubernetes.io/ taint reports a
node condition: fix the node rather than tolerate it.
`

// taintReason is the TaintToleration filter's reason
// (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, Filter): since
// v1.32 "node(s) had untolerated taint(s)", before that "node(s) had untolerated taint
// {key: value}".
const taintReason = "had untolerated taint"

// oldTaintReason ends the filter's reason before v1.25: "node(s) had taint {key:
// value}, that the pod didn't tolerate" (1.18 to 1.24) and "node(s) had taints that the
// pod didn't tolerate" (to 1.17).
const oldTaintReason = "that the pod didn't tolerate"

func isTaintReason(r string) bool {
	return strings.Contains(r, taintReason) || strings.Contains(r, oldTaintReason)
}

// taintCount is how many nodes the message counts as tainted, in either wording.
func taintCount(reasons []string) int {
	return analyze.FitReasonCount(reasons, taintReason) + analyze.FitReasonCount(reasons, oldTaintReason)
}

var reTaintInMessage = regexp.MustCompile(`had (?:untolerated )?taint \{([^:}]*): ?([^}]*)\}`)

// nodeConditionTaintPrefix marks taints Kubernetes sets for node conditions
// (k8s.io/api/core/v1 well_known_taints.go).
const nodeConditionTaintPrefix = "node.kubernetes.io/"

// taintedNode is a node the pod selects with the taints it does not tolerate.
type taintedNode struct {
	node    *analyze.Node
	taints  []int
	display string
}

func schedulingUntoleratedTaint(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := v.SortedNodes()
	for _, u := range v.UnscheduledPods() {
		pod := u.Subject.Pod.Obj
		msg, total, reasons := u.Message, u.Nodes, u.Reasons
		if !slices.ContainsFunc(reasons, isTaintReason) {
			continue
		}
		var tainted []taintedNode
		var keys []string
		if v.NodesKnown() {
			var ok bool
			if tainted, keys, ok = taintedCandidates(pod, nodes); !ok {
				continue
			}
		} else {
			// Without every node's object the message must show every node tainted,
			// or the tainted nodes as the only ones the pod's selector may choose.
			switch {
			case taintCount(reasons) == analyze.NodeCount(total):
				for _, m := range reTaintInMessage.FindAllStringSubmatch(msg, -1) {
					keys = append(keys, analyze.TaintKV(m[1], m[2]))
				}
			case analyze.DedicatedNodes(reasons, total, taintCount(reasons)):
				if tainted, keys = shownDedicatedTaints(pod, nodes); len(tainted) == 0 {
					continue
				}
			default:
				continue
			}
		}
		out = append(out, taintFinding(v, u, tainted, phrase.Unique(keys)))
	}
	return out
}

// shownDedicatedTaints lists the nodes the evidence shows with a taint of the cluster's
// own (not a node condition's, not the control plane's role, not an uninitialized
// node's) that the pod does not tolerate, and those taints: the taints of dedicated
// nodes, which a message that does not name them (since 1.32) leaves to the nodes.
func shownDedicatedTaints(pod *corev1.Pod, nodes []*analyze.Node) ([]taintedNode, []string) {
	var tainted []taintedNode
	var keys []string
	for _, n := range nodes {
		var idx []int
		var names []string
		for _, i := range untoleratedTaints(pod, n.Obj) {
			t := n.Obj.Spec.Taints[i]
			if strings.HasPrefix(t.Key, nodeConditionTaintPrefix) || strings.HasPrefix(t.Key, "node-role.kubernetes.io/") ||
				strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/") || strings.HasPrefix(t.Key, "node.cluster.x-k8s.io/") {
				continue
			}
			idx = append(idx, i)
			names = append(names, analyze.TaintString(t))
		}
		if len(idx) == 0 {
			continue
		}
		keys = append(keys, names...)
		tainted = append(tainted, taintedNode{node: n, taints: idx, display: "node " + n.Obj.Name + " has " + strings.Join(names, ", ")})
	}
	return tainted, keys
}

// taintedCandidates lists the nodes the pod selects with the taints it does not
// tolerate, and those taints. It reports false unless every node the pod selects has
// one: a node it selects without a taint failed for another reason (resources, say),
// and the tainted ones are simply reserved for other work.
func taintedCandidates(pod *corev1.Pod, nodes []*analyze.Node) ([]taintedNode, []string, bool) {
	var tainted []taintedNode
	var keys []string
	candidates := 0
	for _, n := range nodes {
		if len(analyze.NodeMismatches(pod, n.Obj)) > 0 {
			continue
		}
		candidates++
		idx := untoleratedTaints(pod, n.Obj)
		if len(idx) == 0 {
			continue
		}
		var names []string
		for _, i := range idx {
			names = append(names, analyze.TaintString(n.Obj.Spec.Taints[i]))
		}
		keys = append(keys, names...)
		tainted = append(tainted, taintedNode{node: n, taints: idx, display: "node " + n.Obj.Name + " has " + strings.Join(names, ", ")})
	}
	return tainted, keys, len(tainted) > 0 && len(tainted) == candidates
}

func taintFinding(v *analyze.View, u analyze.SchedulingFailure, tainted []taintedNode, keys []string) analyze.Finding {
	p, total, reasons := u.Subject.Pod, u.Nodes, u.Reasons
	pod := p.Obj
	evidence := u.SchedulerEvidence()
	subjects := []analyze.ObjectRef{p.Ref()}
	var lines []string
	for _, t := range tainted {
		lines = append(lines, t.display)
		subjects = append(subjects, t.node.Ref())
		for _, i := range t.taints {
			evidence = append(evidence, t.node.Loc.At("spec", "taints", i).Evidence(
				"node "+t.node.Obj.Name+" taint "+analyze.TaintString(t.node.Obj.Spec.Taints[i]), v.CollectedAt()))
		}
	}
	if len(pod.Spec.Tolerations) > 0 {
		evidence = append(evidence, p.Loc.At("spec", "tolerations").Evidence("tolerations "+tolerationsString(pod.Spec.Tolerations), pod.CreationTimestamp.Time))
	}
	evidence = append(evidence, analyze.NodeRequirementEvidence(p)...)

	scheduler := fmt.Sprintf("0/%s nodes are available: %s", total, strings.Join(reasons, ", "))
	var cause string
	switch {
	case len(tainted) == 1 && analyze.NodeRequirements(pod) != "":
		t := tainted[0]
		cause = fmt.Sprintf("the pod does not tolerate the %s %s on node %s, the only node its %s allows (%s)",
			plural(len(keys), "taint", "taints"), strings.Join(keys, ", "), t.node.Obj.Name, analyze.NodeRequirements(pod), scheduler)
	case len(tainted) > 0:
		where := fmt.Sprintf("the %d node(s) it may run on", len(tainted))
		if wants := analyze.NodeRequirements(pod); wants != "" {
			where = fmt.Sprintf("the %d node(s) its %s allows", len(tainted), wants)
		}
		cause = fmt.Sprintf("the pod tolerates no taint on %s: %s (%s)", where, phrase.JoinCapped(lines, "tainted node(s)"), scheduler)
	case len(keys) > 0:
		cause = fmt.Sprintf("the pod does not tolerate the %s %s (%s)", plural(len(keys), "taint", "taints"), strings.Join(keys, ", "), scheduler)
	default:
		cause = fmt.Sprintf("the pod does not tolerate the taints of the nodes it may run on (%s); the bundle has no node objects to name them", scheduler)
	}

	group := p.Ref().String()
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
		group = w.String()
	}
	return analyze.Finding{
		Subjects:      subjects,
		NodeCondition: !slices.ContainsFunc(keys, func(k string) bool { return !strings.HasPrefix(k, nodeConditionTaintPrefix) }),
		Cause:         cause,
		Evidence:      evidence,
		Remediation:   taintRemediation(group, tainted, keys),
		Confirm: []string{
			"kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints",
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.tolerations}'", pod.Namespace, pod.Name),
		},
		GroupKey: group + "\x00" + strings.Join(keys, ","),
	}
}

func taintRemediation(group string, tainted []taintedNode, keys []string) string {
	if len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool { return !strings.HasPrefix(k, nodeConditionTaintPrefix) }) {
		return fmt.Sprintf("The taint %s is set by Kubernetes for a node condition: fix the node (see its conditions) rather than tolerating it.", strings.Join(keys, ", "))
	}
	if len(tainted) == 0 {
		tol := "a toleration for the taint"
		if len(keys) > 0 {
			key, value, _ := strings.Cut(keys[0], "=")
			tol = fmt.Sprintf("the toleration {key: %s, operator: Equal, value: %q} with the taint's effect", key, value)
			if value == "" {
				tol = fmt.Sprintf("the toleration {key: %s, operator: Exists} with the taint's effect", key)
			}
		}
		return fmt.Sprintf("If %s belongs on the tainted nodes, add %s to its template; otherwise point its nodeSelector or affinity at other nodes.", group, tol)
	}
	var tols []string
	seen := map[string]bool{}
	for _, tn := range tainted {
		for _, i := range tn.taints {
			t := tn.node.Obj.Spec.Taints[i]
			if s := analyze.TaintString(t); !seen[s] && len(tols) < 3 {
				seen[s] = true
				tols = append(tols, tolerationFor(t))
			}
		}
	}
	first := tainted[0].node.Obj
	return fmt.Sprintf("If %s belongs on node %s, add the toleration(s) %s to its template; otherwise point its nodeSelector or affinity at other nodes, "+
		"or remove a taint left behind: kubectl taint nodes %s %s-", group, first.Name, strings.Join(tols, ", "), first.Name, analyze.TaintString(first.Spec.Taints[tainted[0].taints[0]]))
}

// tolerationFor writes the toleration that matches a taint, in YAML flow style.
func tolerationFor(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("{key: %s, operator: Exists, effect: %s}", t.Key, t.Effect)
	}
	return fmt.Sprintf("{key: %s, operator: Equal, value: %q, effect: %s}", t.Key, t.Value, t.Effect)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// untoleratedTaints lists the indexes of a node's NoSchedule and NoExecute taints that
// none of the pod's tolerations matches, as the scheduler's TaintToleration filter does
// (k8s.io/component-helpers/scheduling/corev1 FindMatchingUntoleratedTaint with
// DoNotScheduleTaintsFilterFunc).
func untoleratedTaints(pod *corev1.Pod, node *corev1.Node) []int {
	var out []int
	for i, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool { return tolerates(tol, t) }) {
			out = append(out, i)
		}
	}
	return out
}

// tolerates follows k8s.io/api/core/v1 Toleration.ToleratesTaint: an empty effect
// matches every effect, an empty key every key, Equal (or no operator) compares values,
// Exists matches any value, Gt and Lt compare the taint's value with the toleration's
// as integers (the API server accepts them only with their feature gate on).
func tolerates(tol corev1.Toleration, t corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case "", corev1.TolerationOpEqual:
		return tol.Value == t.Value
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpGt, corev1.TolerationOpLt:
		return analyze.IntegerCompare(t.Value, tol.Value, tol.Operator == corev1.TolerationOpGt)
	}
	return false
}

func tolerationsString(tols []corev1.Toleration) string {
	parts := make([]string, len(tols))
	for i, t := range tols {
		s := t.Key
		if t.Operator == corev1.TolerationOpExists {
			if s == "" {
				s = "*"
			}
			s += " exists"
		} else if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Effect != "" {
			s += ":" + string(t.Effect)
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}
