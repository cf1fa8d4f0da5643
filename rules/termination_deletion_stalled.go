package rules

import (
	"fmt"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// TerminationDeletionStalled finds deleted pods that no finalizer holds, still present
// past the moment they should have been gone: the kubelet has not finished them.
var TerminationDeletionStalled = &analyze.Rule{
	ID:       "termination-deletion-stalled",
	Stage:    analyze.StageTermination,
	Title:    "deleted pod is still there past its grace period, and no finalizer holds it",
	Doc:      terminationDeletionStalledDoc,
	Severity: analyze.SeverityWarning,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Nodes, analyze.Events},
	},
	Run: terminationDeletionStalled,
}

const terminationDeletionStalledDoc = `The pod was deleted (it has a deletionTimestamp), the moment it should have been gone
has passed, and no finalizer keeps it. Such a pod goes away only when the kubelet of its
node confirms that its containers stopped and deletes it with grace 0; until then kubectl
shows it Terminating. The kubelet has not done so: it may still be stopping a container
that ignores SIGTERM and cannot be killed (a process in uninterruptible sleep, a hung
runtime or volume unmount), be unable to reach the API server, or be down with its node.
A StatefulSet does not create the replacement of such a pod, so its next ordinal waits.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.metadata.deletionTimestamp} {.status.containerStatuses[*].state}'
    kubectl describe node NODE
    journalctl -u kubelet --since "30 min ago" | grep POD

## Fix

Read the node's kubelet and container runtime journal for the errors stopping the pod's
containers or sandbox, and fix what hangs (a stuck mount, a runtime that does not answer);
restarting the kubelet often lets it finish. If the node is gone for good, delete the
Node object. Force deletion (kubectl delete pod --grace-period=0 --force) removes the
object without stopping anything: for a StatefulSet pod do it only once the old one is
known to no longer run.
`

// stalledDeletionSlack is how long past its deletionTimestamp (the deletion time plus its
// grace period, k8s.io/apiserver/pkg/registry/rest/delete.go BeforeDelete) a pod may
// stay while a busy kubelet finishes it.
const stalledDeletionSlack = time.Minute

func terminationDeletionStalled(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	now := v.CollectedAt().Add(v.ClockSkew())
	for _, p := range v.Pods() {
		pod := p.Obj
		if pod.DeletionTimestamp == nil || len(pod.Finalizers) > 0 || pod.Spec.NodeName == "" {
			continue
		}
		// A pod of a lost node is the node lifecycle controller's NodeLost, which the
		// node's own findings explain.
		if pod.Status.Reason == "NodeLost" {
			continue
		}
		// A pod of a node the evidence shows not Ready is termination-node-lost's.
		if _, _, lost := v.NodeNotReadyShown(pod.Spec.NodeName); lost {
			continue
		}
		overdue := now.Sub(pod.DeletionTimestamp.Time)
		if v.CollectedAtInferred() || overdue <= stalledDeletionSlack {
			continue
		}
		grace := "no grace period"
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			grace = fmt.Sprintf("grace period %ds", *g)
		}
		evidence := []analyze.Evidence{
			p.Loc.At("metadata", "deletionTimestamp").Evidence(fmt.Sprintf("deletionTimestamp %s (%s), no finalizers", phrase.Stamp(pod.DeletionTimestamp.Time), grace), pod.DeletionTimestamp.Time),
		}
		var running []string
		for i, st := range pod.Status.ContainerStatuses {
			if st.State.Running != nil {
				running = append(running, st.Name)
				evidence = append(evidence, p.Loc.At("status", "containerStatuses", i, "state").Evidence(
					fmt.Sprintf("container %s still running since %s", st.Name, phrase.Stamp(st.State.Running.StartedAt.Time)), st.State.Running.StartedAt.Time))
			}
		}
		node := pod.Spec.NodeName
		cause := fmt.Sprintf("pod %s was deleted and should have been gone at %s, %s before collection, and no finalizer holds it: the kubelet on node %s has not finished it",
			p.Ref().NamespacedName(), phrase.Stamp(pod.DeletionTimestamp.Time), overdue.Round(time.Second), node)
		switch {
		case len(running) > 0:
			cause += fmt.Sprintf(", container(s) %s still report running", phrase.JoinCapped(running, "containers"))
		case len(pod.Status.ContainerStatuses) > 0:
			cause += ", though its containers have stopped (the kubelet has not confirmed it to the API server)"
		}
		subjects, group := v.PodAndWorkload(p)
		if n := v.Node(node); n != nil {
			subjects = append(subjects, n.Ref())
			if i, c := analyze.NodeReady(n.Obj); c != nil {
				evidence = append(evidence, n.Loc.At("status", "conditions", i).Evidence(
					fmt.Sprintf("node %s Ready=%s %s", node, c.Status, c.Reason), c.LastTransitionTime.Time))
			}
		} else {
			subjects = append(subjects, analyze.NodeRef(node))
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Read the kubelet and container runtime journal of node %s for what keeps it from stopping the pod's containers and sandbox, and fix that "+
				"(restarting the kubelet often lets it finish); force-delete the pod only once its containers are known to be gone.", node),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.metadata.deletionTimestamp} {.status.containerStatuses[*].state}'", pod.Namespace, pod.Name),
				analyze.Command("kubectl describe node %s", node),
			},
			GroupKey: group + "\x00" + node,
		})
	}
	return out
}
