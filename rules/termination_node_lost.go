package rules

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// TerminationNodeLost finds pods that were deleted (or marked NodeLost) on a node that
// is not Ready: no kubelet confirms their end, so they stay Terminating or Unknown.
var TerminationNodeLost = &analyze.Rule{
	ID:       "termination-node-lost",
	Stage:    analyze.StageTermination,
	Title:    "the pod's node stopped responding, so the pod cannot finish",
	Doc:      terminationNodeLostDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Nodes, analyze.Events},
	},
	Run: terminationNodeLost,
}

const terminationNodeLostDoc = `The pod was deleted (by a user, a rollout, or the taint eviction controller once its
toleration of the not-ready or unreachable taint ran out), or the node lifecycle
controller marked it NodeLost, and its node is not Ready. Deleting a pod only sets its
deletionTimestamp: the object goes away when the kubelet of its node confirms that the
containers stopped, which the kubelet of a node that is down, powered off or cut off
never does. kubectl shows such a pod Terminating (or Unknown) for as long as the node
stays away. A StatefulSet does not create the replacement of such a pod (the old one
may still run), and its volumes stay attached to the lost node.

The node stage's node-not-ready reports the node itself when other pods still run
there; when every pod the evidence shows on the node is one of these, this finding
names the node's state instead, since what the user sees is the pod that will not go.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o wide
    kubectl get nodes
    kubectl describe node NODE

## Fix

Bring the node back: its kubelet then finishes the pod. If the machine is gone for
good, delete the Node object (the pods bound to it are then removed), or, for a node
shut down on purpose, set the node.kubernetes.io/out-of-service taint so the pods and
their volume attachments are cleaned up. Force deletion (kubectl delete pod
--grace-period=0 --force) removes the object without stopping anything: for a
StatefulSet pod do it only once the old one is known to no longer run.
`

func terminationNodeLost(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, p := range v.Pods() {
		pod := p.Obj
		node := pod.Spec.NodeName
		if m := reNodeUnreachableMessage.FindStringSubmatch(pod.Status.Message); node == "" && m != nil {
			// A status pasted without the spec still names the node in its message.
			node = m[1]
		}
		// kubectl shows Unknown for a deleted pod the node lifecycle controller marked
		// NodeLost (and, before 1.5, for the Unknown phase it set): that status says by
		// itself that the pod's node stopped reporting, whether or not the node is shown.
		unknown := pod.Status.Phase == corev1.PodUnknown || pod.Status.Reason == "NodeLost"
		if !analyze.PodDeleting(p) && !unknown {
			continue
		}
		state, nodeEvidence, ok := "", []analyze.Evidence(nil), false
		if node != "" {
			state, nodeEvidence, ok = v.NodeNotReadyShown(node)
		}
		if !ok && !unknown {
			continue
		}
		if !ok {
			state = "it stopped reporting: NotReady or unreachable, so the node lifecycle controller marked the pod lost"
		}
		out = append(out, nodeLostFinding(v, p, node, state, nodeEvidence))
	}
	return out
}

// reNodeUnreachableMessage is the node lifecycle controller's status message of a pod
// it marks lost (pkg/controller/nodelifecycle NodeUnreachablePodMessage, "Node %v
// which was running pod %v is unresponsive"): it names the node.
var reNodeUnreachableMessage = regexp.MustCompile(`^Node (\S+) which was running pod \S+ is unresponsive`)

// nodeLostFinding is the finding for pod p, lost with its node (node, its spec's or the
// one its status message names); state says how the
// evidence shows the node not Ready, nodeEvidence where (none when only the pod's own
// status, kubectl's Unknown, says so, and the node may not be named at all).
func nodeLostFinding(v *analyze.View, p *analyze.Pod, node, state string, nodeEvidence []analyze.Evidence) analyze.Finding {
	pod := p.Obj
	name := p.Ref().NamespacedName()
	shown := "was deleted and stays Terminating"
	var podEvidence analyze.Evidence
	switch {
	case pod.Status.Reason == "NodeLost":
		shown = "was marked NodeLost (kubectl shows Unknown)"
		podEvidence = p.Loc.At("status", "reason").Evidence("pod "+name+" reason NodeLost", pod.CreationTimestamp.Time)
	case pod.DeletionTimestamp != nil:
		podEvidence = p.Loc.At("metadata", "deletionTimestamp").Evidence("pod "+name+" deleted", pod.DeletionTimestamp.Time)
	case pod.Status.Phase == corev1.PodUnknown:
		shown = "shows Unknown"
		podEvidence = p.Loc.At("status", "phase").Evidence("pod "+name+" Unknown", pod.CreationTimestamp.Time)
	default:
		podEvidence = p.Loc.At("status").Evidence("pod "+name+" Terminating", pod.CreationTimestamp.Time)
	}
	subjects, group := v.PodAndWorkload(p)
	where := "(not named in the evidence)"
	bring := "Bring the pod's node back (kubectl get pod -o wide names it; its kubelet then finishes the pod) or, if the machine is gone for good, delete the Node object"
	confirmNode := "kubectl get nodes"
	if node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
		where = node
		bring = fmt.Sprintf("Bring node %s back (its kubelet then finishes the pod) or, if the machine is gone for good, delete the Node object (kubectl delete node %s)", node, node)
		confirmNode = analyze.Command("kubectl describe node %s", node)
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause: fmt.Sprintf("the pod %s because its node %s is not Ready (%s): no kubelet there confirms that its containers stopped, "+
			"so it stays until the node returns or the Node object is deleted", shown, where, state),
		Evidence: append([]analyze.Evidence{podEvidence}, nodeEvidence...),
		Remediation: bring + " or set the node.kubernetes.io/out-of-service taint; force-delete a StatefulSet pod only once the old one " +
			"is known to no longer run (kubectl delete pod --grace-period=0 --force).",
		Confirm:  []string{analyze.Command("kubectl get pod -n %s %s -o wide", pod.Namespace, pod.Name), confirmNode},
		GroupKey: group + "\x00" + node,
	}
}
