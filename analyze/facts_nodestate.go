package analyze

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
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
