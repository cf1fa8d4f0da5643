package rules

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
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
	nodes := v.SortedNodes()
	for _, u := range v.UnscheduledPods() {
		p, pod := u.Subject.Pod, u.Subject.Pod.Obj
		wants := analyze.NodeRequirements(pod)
		if wants == "" {
			continue
		}
		total, reasons := u.Nodes, u.Reasons
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, nodeAffinityReason) }) {
			continue
		}
		var misses []string
		var nodeEvidence []analyze.Evidence
		fits := false
		for _, n := range nodes {
			if analyze.Partial(n.Obj.ObjectMeta, "labels") || analyze.Partial(n.Obj.ObjectMeta, "spec") {
				continue // a node whose labels the evidence does not show says nothing either way
			}
			miss := analyze.NodeMismatches(pod, n.Obj)
			if len(miss) == 0 {
				fits = true
				break
			}
			line := "node " + n.Obj.Name + ": " + strings.Join(miss, ", ")
			misses = append(misses, line)
			nodeEvidence = append(nodeEvidence, analyze.NodeLabelsLoc(n).Evidence(line, v.CollectedAt()))
		}
		if fits {
			// A node satisfies the selector now: whatever else the scheduler reported
			// (a taint, resources) is what keeps the pod off it.
			continue
		}
		if !v.NodesKnown() && analyze.FitReasonCount(reasons, nodeAffinityReason) != analyze.NodeCount(total) {
			// Without node objects only a message that counts every node as not
			// matching tells; the scheduler names just the first check a node fails.
			continue
		}
		evidence := u.SchedulerEvidence()
		evidence = append(evidence, analyze.NodeRequirementEvidence(p)...)
		evidence = append(evidence, nodeEvidence...)
		cause := fmt.Sprintf("no node matches the pod's %s: 0/%s nodes are available: %s", wants, total, strings.Join(reasons, ", "))
		if len(misses) > 0 {
			cause += "; " + phrase.JoinCapped(misses, "node(s)")
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

// labelCommand is the argument of kubectl label that gives a node the labels the pod
// asks for: its nodeSelector, else the In expressions of its first affinity term.
func labelCommand(pod *corev1.Pod) string {
	if len(pod.Spec.NodeSelector) > 0 {
		return strings.ReplaceAll(phrase.Selector(pod.Spec.NodeSelector), ",", " ")
	}
	var labels []string
	if req := analyze.RequiredNodeAffinity(pod); req != nil && len(req.NodeSelectorTerms) > 0 {
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
