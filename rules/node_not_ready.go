package rules

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/analyze"
)

// NodeNotReady finds nodes that are not Ready, and the pods bound to them.
var NodeNotReady = &analyze.Rule{
	ID:       "node-not-ready",
	Stage:    analyze.StageNode,
	Title:    "node is not Ready",
	Doc:      nodeNotReadyDoc,
	Severity: analyze.SeverityCritical,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Nodes},
		Optional: []analyze.Kind{analyze.NodeLeases, analyze.Pods, analyze.Events, analyze.KubeletJournal},
	},
	Run: nodeNotReady,
}

const nodeNotReadyDoc = `The node's Ready condition is not True. "Unknown" with "Kubelet stopped posting node
status." means the node controller stopped hearing from the kubelet: its Lease in
kube-node-lease was not renewed within the grace period (50s by default), because the
machine is down or unreachable or the kubelet is not running. "False" (KubeletNotReady)
means the kubelet runs and reports a problem itself, such as the container runtime or
the CNI network not being ready. Pods bound to the node stop being Ready, new pods are
not scheduled there (node.kubernetes.io/not-ready and unreachable taints), and after
their toleration (300s by default) the pods are evicted and replaced elsewhere.
podflow also reports a node whose Lease is stale while Ready still says True: the
kubelet stopped and the node controller has not (yet) noticed.

## Confirm on a live cluster

    kubectl get node NODE -o wide
    kubectl describe node NODE                     # Conditions, Taints, Events
    kubectl get lease -n kube-node-lease NODE -o jsonpath='{.spec.renewTime}'
    kubectl get pods -A --field-selector spec.nodeName=NODE
    # on the node: systemctl status kubelet; journalctl -u kubelet --since -30m

## Fix

For Unknown: bring the machine or its network back, or restart the kubelet and read
its journal for why it stopped. For False: fix what the condition's message names
(start the container runtime, install or repair the CNI plugin, free disk). A node that
is gone for good should be deleted so its pods are recreated elsewhere at once.
`

// nodeMonitorGracePeriod is the node controller's default --node-monitor-grace-period
// (pkg/controller/nodelifecycle/config/v1alpha1/defaults.go): after it without a Lease
// renewal or status update, the node controller sets Ready to Unknown with reason
// NodeStatusUnknown, "Kubelet stopped posting node status."
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go, tryUpdateNodeHealth).
const nodeMonitorGracePeriod = 50 * time.Second

func nodeNotReady(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	now := v.CollectedAt().Add(v.ClockSkew())
	for _, n := range sortedNodes(v) {
		node := n.Obj
		idx, ready := nodeReady(node)
		lease := v.NodeLease(node.Name)
		var leaseAge time.Duration
		leaseKnown := lease != nil && lease.Obj.Spec.RenewTime != nil
		if leaseKnown {
			leaseAge = now.Sub(lease.Obj.Spec.RenewTime.Time)
		}
		var state string
		verb := "is not Ready"
		switch {
		case ready != nil && ready.Status != corev1.ConditionTrue:
			state = fmt.Sprintf("Ready=%s since %s (%s: %s)", ready.Status, stamp(ready.LastTransitionTime.Time), ready.Reason, strings.TrimSpace(ready.Message))
		case ready == nil && now.Sub(node.CreationTimestamp.Time) > nodeMonitorGracePeriod && (!leaseKnown || leaseAge > nodeMonitorGracePeriod):
			state = "it has no Ready condition (the kubelet never posted node status)"
		case ready != nil && leaseKnown && leaseAge > nodeMonitorGracePeriod:
			verb = "stopped heartbeating"
			state = fmt.Sprintf("Ready still says True (last heartbeat %s) but the kubelet no longer renews its Lease", stamp(ready.LastHeartbeatTime.Time))
		default:
			continue
		}
		out = append(out, nodeFinding(v, n, idx, ready, lease, leaseAge, verb+": "+state))
	}
	return out
}

func nodeFinding(v *analyze.View, n *analyze.Node, idx int, ready *corev1.NodeCondition, lease *analyze.Lease, leaseAge time.Duration, state string) analyze.Finding {
	node := n.Obj
	var evidence []analyze.Evidence
	var facts []string
	if ready != nil {
		evidence = append(evidence, n.Loc.At("status", "conditions", idx).Evidence(
			fmt.Sprintf("Ready=%s %s: %s (last heartbeat %s)", ready.Status, ready.Reason, ready.Message, stamp(ready.LastHeartbeatTime.Time)), ready.LastTransitionTime.Time))
		if ready.Status != corev1.ConditionTrue && !ready.LastHeartbeatTime.IsZero() {
			facts = append(facts, "last status heartbeat "+stamp(ready.LastHeartbeatTime.Time))
		}
	}
	switch {
	case lease != nil && lease.Obj.Spec.RenewTime != nil:
		renew := lease.Obj.Spec.RenewTime.Time
		text := fmt.Sprintf("Lease renewed %s, %s before collection", stamp(renew), leaseAge.Round(time.Second))
		evidence = append(evidence, lease.Loc.At("spec", "renewTime").Evidence(text, renew))
		facts = append(facts, fmt.Sprintf("its Lease was last renewed %s before collection", leaseAge.Round(time.Second)))
	case v.Has(analyze.NodeLeases):
		facts = append(facts, "it has no Lease in kube-node-lease")
	}
	for i, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			evidence = append(evidence, n.Loc.At("spec", "taints", i).Evidence("taint "+taintString(t), addedAt(t.TimeAdded)))
		}
	}
	if e := analyze.LatestEvent(v.EventsFor(n.Ref()), "", "NodeNotReady"); e != nil {
		evidence = append(evidence, e.Evidence())
	}
	if entries := v.Journal(node.Name); len(entries) > 0 {
		last := entries[len(entries)-1]
		facts = append(facts, "the kubelet journal's last entry is at "+stamp(last.Time))
		evidence = append(evidence, last.Evidence())
	}
	subjects := []analyze.ObjectRef{n.Ref()}
	var pods []string
	for _, p := range v.PodsOnNode(node.Name) {
		if p.Obj.Status.Phase == corev1.PodSucceeded || p.Obj.Status.Phase == corev1.PodFailed {
			continue
		}
		subjects = append(subjects, p.Ref())
		pods = append(pods, p.Ref().NamespacedName())
	}
	if len(evidence) == 0 {
		evidence = append(evidence, n.Loc.At("status").Evidence("node "+node.Name+": no Ready condition", node.CreationTimestamp.Time))
	}
	cause := fmt.Sprintf("node %s %s", node.Name, state)
	if len(facts) > 0 {
		cause += "; " + strings.Join(facts, ", ")
	}
	if len(pods) > 0 {
		shown := pods
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(pods)-5))
		}
		cause += fmt.Sprintf("; %d pod(s) bound to it: %s", len(pods), strings.Join(shown, ", "))
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: nodeRemediation(node.Name, ready),
		Confirm: []string{
			fmt.Sprintf("kubectl describe node %s", node.Name),
			fmt.Sprintf("kubectl get lease -n kube-node-lease %s -o jsonpath='{.spec.renewTime}'", node.Name),
			fmt.Sprintf("kubectl get pods -A --field-selector spec.nodeName=%s", node.Name),
		},
		GroupKey: "node\x00" + node.Name,
	}
}

func nodeRemediation(node string, ready *corev1.NodeCondition) string {
	if ready != nil && ready.Status == corev1.ConditionFalse {
		return fmt.Sprintf("The kubelet on %s runs and reports the problem itself: fix what its Ready condition names (%s), "+
			"then check that the condition turns True.", node, strings.TrimSpace(ready.Message))
	}
	return fmt.Sprintf("Check that %s is up and reachable and that its kubelet runs (systemctl status kubelet; journalctl -u kubelet); "+
		"restart it and read its journal for why it stopped. If the machine is gone for good, delete the node so its pods are recreated elsewhere.", node)
}

// nodeReady returns the node's Ready condition and its index, or nil.
func nodeReady(node *corev1.Node) (int, *corev1.NodeCondition) {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return i, &node.Status.Conditions[i]
		}
	}
	return -1, nil
}

// stamp renders a time for a cause: RFC 3339 in UTC, "never" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

func addedAt(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
