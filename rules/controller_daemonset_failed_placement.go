package rules

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ControllerDaemonSetFailedPlacement finds DaemonSets that place their pod on no node:
// their desired count is zero while they are meant for the nodes there are.
var ControllerDaemonSetFailedPlacement = &analyze.Rule{
	ID:       "controller-daemonset-failed-placement",
	Stage:    analyze.StageController,
	Title:    "the DaemonSet controller places its pod on no node",
	Doc:      controllerDaemonSetFailedPlacementDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.DaemonSets},
		Optional: []analyze.Kind{analyze.Nodes},
	},
	Run: controllerDaemonSetFailedPlacement,
}

const controllerDaemonSetFailedPlacementDoc = `A DaemonSet wants one pod on every node its pod template fits: the nodes its node
selector and required node affinity admit, whose NoSchedule and NoExecute taints its
pods tolerate (the DaemonSet controller adds tolerations only for the node conditions:
not-ready, unreachable, disk, memory and PID pressure, unschedulable, and for host
network pods network-unavailable). When no node fits, status.desiredNumberScheduled is
0: kubectl get daemonset shows DESIRED 0, no pod is created, nothing is Pending, and no
event says why (before 1.12 the controller recorded FailedPlacement for a node it would
not place on; the message signature reads those). A DaemonSet meant for every node
that places none is the failure users ask about: a control plane or a Spot, GPU or
dedicated node pool's taint it does not tolerate, or a node selector no node's labels
match.

podflow reports a DaemonSet whose desired count is 0 when it has no node selector, when
the nodes in the evidence match its selector but all have taints its pods do not
tolerate, or when the DaemonSet came from pasted output (its template is then not known
and the finding says which readings remain). A DaemonSet with a node selector that no
node in a collected cluster matches (a GPU plugin on a cluster without GPU nodes) is
left alone: that is usually by design.

## Confirm on a live cluster

    kubectl get daemonset -n NAMESPACE NAME -o jsonpath='{.spec.template.spec.nodeSelector} {.spec.template.spec.tolerations} {.spec.template.spec.affinity}'
    kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints

## Fix

Add tolerations for the nodes' taints to the DaemonSet's pod template (for example
key kubernetes.azure.com/scalesetpriority, value spot, effect NoSchedule), or correct
its node selector or node affinity to match the nodes' labels.
`

// daemonSetTolerated are the taints the DaemonSet controller tolerates for every daemon
// pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
var daemonSetTolerated = []string{
	"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
	"node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable",
}

func controllerDaemonSetFailedPlacement(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := v.Nodes()
	for _, ds := range v.DaemonSets() {
		d := ds.Obj
		if d.DeletionTimestamp != nil || d.Status.DesiredNumberScheduled != 0 || analyze.Partial(d.ObjectMeta, "status") {
			// A manifest as applied shows no status: its zero counts say nothing.
			continue
		}
		tmpl := d.Spec.Template.Spec
		pasted := analyze.Partial(d.ObjectMeta, "spec")
		sel := tmpl.NodeSelector
		var matching []*analyze.Node
		for _, n := range nodes {
			if selects(sel, n.Obj.Labels) {
				matching = append(matching, n)
			}
		}
		// The taints that keep the pods off each node the selector admits.
		excluded := map[string][]string{}
		for _, n := range matching {
			for _, t := range n.Obj.Spec.Taints {
				if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute ||
					slices.Contains(daemonSetTolerated, t.Key) ||
					t.Key == "node.kubernetes.io/network-unavailable" && tmpl.HostNetwork {
					continue
				}
				if !pasted && slices.ContainsFunc(tmpl.Tolerations, func(tol corev1.Toleration) bool { return daemonTolerates(tol, t) }) {
					continue
				}
				excluded[taintString(t)] = append(excluded[taintString(t)], n.Obj.Name)
			}
		}
		tainted := 0
		for _, n := range matching {
			if slices.ContainsFunc(n.Obj.Spec.Taints, func(t corev1.Taint) bool { return len(excluded[taintString(t)]) > 0 }) {
				tainted++
			}
		}
		var why string
		switch {
		case len(matching) > 0 && tainted == len(matching):
			keys := slices.Sorted(maps.Keys(excluded))
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s (on %s)", k, nodeList(excluded[k])))
			}
			why = "every node it could run on has a taint its pods do not tolerate: " + strings.Join(parts, ", ")
		case len(nodes) > 0 && len(matching) == 0 && len(sel) > 0 && pasted:
			why = fmt.Sprintf("its node selector %s matches none of the %d nodes in the evidence", labelsString(sel), len(nodes))
		case len(nodes) > 0 && len(matching) > 0:
			// Some node fits as far as the evidence shows: its template's affinity or
			// the status's age may say otherwise, which the evidence does not show.
			continue
		case len(sel) == 0 && (pasted || len(nodes) == 0):
			why = "no node admits its pods: with no node selector, that is the nodes' NoSchedule or NoExecute taints its pod template does not tolerate (a control plane, Spot or dedicated pool's taint), or a required node affinity in its template"
		case len(sel) > 0 && pasted:
			why = fmt.Sprintf("no node admits its pods: its node selector %s matches no node's labels, or the nodes it matches have taints its pods do not tolerate", labelsString(sel))
		default:
			continue
		}
		if pasted {
			why += " (the pod template's tolerations and affinity are not in the evidence)"
		}
		evidence := []analyze.Evidence{ds.Loc.At("status", "desiredNumberScheduled").Evidence(
			fmt.Sprintf("DaemonSet %s: desired %d, current %d", d.Name, d.Status.DesiredNumberScheduled, d.Status.CurrentNumberScheduled), time.Time{})}
		for _, n := range matching {
			if len(evidence) > 3 {
				break
			}
			for i, t := range n.Obj.Spec.Taints {
				if len(excluded[taintString(t)]) > 0 {
					evidence = append(evidence, n.Loc.At("spec", "taints", i).Evidence("node "+n.Obj.Name+" taint "+taintString(t), time.Time{}))
					break
				}
			}
		}
		confirm := []string{
			analyze.Command("kubectl get daemonset -n %s %s -o jsonpath='{.spec.template.spec.nodeSelector} {.spec.template.spec.tolerations}'", d.Namespace, d.Name),
			"kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints",
		}
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{ds.Ref()},
			Cause:    fmt.Sprintf("DaemonSet %s/%s places its pod on no node (desired 0): %s", d.Namespace, d.Name, why),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Add tolerations for the nodes' taints to the pod template of DaemonSet %s (kubectl edit daemonset -n %s %s), "+
				"or correct its node selector or node affinity to match the nodes' labels.", d.Name, d.Namespace, d.Name),
			Confirm:  confirm,
			GroupKey: d.Namespace + "/" + d.Name,
		})
	}
	return out
}

// daemonTolerates is the scheduler's toleration match (k8s.io/api core/v1
// Toleration.ToleratesTaint) for the Equal and Exists operators.
func daemonTolerates(tol corev1.Toleration, t corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key == "" {
		return tol.Operator == corev1.TolerationOpExists
	}
	return tol.Key == t.Key && (tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value)
}

// selects reports whether every key of a node selector has its value among labels.
func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// taintString is a taint as kubectl prints it: key=value:Effect.
func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// labelsString is a label map as kubectl prints it, sorted.
func labelsString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// nodeList names up to three nodes and counts the rest.
func nodeList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
