package analyze

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/internal/phrase"
)

// Node state several stages read: the Ready condition and the runtime's network message.

// NodeReady returns the node's Ready condition and its index, or nil.
func NodeReady(node *corev1.Node) (int, *corev1.NodeCondition) {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return i, &node.Status.Conditions[i]
		}
	}
	return -1, nil
}

// RuntimeNetworkMessage is containerd's own words from the condition
// "NetworkReady=false reason:R message:M".
func RuntimeNetworkMessage(cond string) string {
	if _, m, ok := strings.Cut(cond, " message:"); ok {
		return strings.TrimPrefix(strings.TrimSpace(m), "Network plugin returns error: ")
	}
	return cond
}

// KubectlNodeStatus is the STATUS a `kubectl get nodes` row showed for a node imported
// from it ("NotReady,SchedulingDisabled"), when that row is all the evidence shows of the
// node's state.
func KubectlNodeStatus(node *corev1.Node) (string, bool) {
	s, ok := node.Annotations[bundle.KubectlNodeStatusAnnotation]
	return s, ok && s != ""
}

// PodDeleting reports whether the pod was deleted and has not gone: it has a
// deletionTimestamp, kubectl showed it Terminating, or the node lifecycle controller
// marked it NodeLost (kubectl shows Unknown), which a deletion of it then cannot finish.
func PodDeleting(p *Pod) bool {
	pod := p.Obj
	return pod.DeletionTimestamp != nil || pod.Status.Reason == "Terminating" || pod.Status.Reason == "NodeLost"
}

// NodeNotReadyShown tells whether the evidence shows a node not Ready, in words and
// with the evidence that shows it: its Ready condition when the Node has one (a node
// Ready now is not lost, whatever its earlier events said), else a kubectl get nodes
// row's STATUS, else a NodeNotReady event on the node or on a pod bound to it.
func (v *View) NodeNotReadyShown(name string) (string, []Evidence, bool) {
	if n := v.Node(name); n != nil {
		if i, ready := NodeReady(n.Obj); ready != nil {
			if ready.Status == corev1.ConditionTrue {
				return "", nil, false
			}
			state := fmt.Sprintf("Ready=%s", ready.Status)
			if r := strings.Trim(ready.Reason+": "+strings.TrimSpace(ready.Message), ": "); r != "" {
				state += ", " + r
			}
			return state, []Evidence{n.Loc.At("status", "conditions", i).Evidence("node "+name+" "+state, ready.LastTransitionTime.Time)}, true
		}
		if row, ok := KubectlNodeStatus(n.Obj); ok {
			if !strings.HasPrefix(row, "NotReady") && row != "Unknown" {
				return "", nil, false
			}
			return "kubectl get nodes shows it " + row, []Evidence{n.Loc.Evidence("kubectl get nodes: "+name+" "+row, time.Time{})}, true
		}
	}
	agent := v.NodeAgent(name)
	switch {
	case agent.NotReady != nil:
		return "its NodeNotReady event says so", []Evidence{agent.NotReady.Evidence()}, true
	case agent.PodNotReady != nil:
		e := agent.PodNotReady
		return fmt.Sprintf("the node controller marked pod %s not ready because of it (%s: %s)", e.Regarding.NamespacedName(), e.Reason, phrase.FirstLine(e.Message)),
			[]Evidence{e.Evidence()}, true
	}
	return "", nil, false
}
