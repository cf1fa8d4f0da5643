package rules

import "testing"

// The kubelet quotes the pod its error is about as NAME_NAMESPACE(UID) (its format.Pod);
// a refusal pasted without the pod's describe still names that pod.
func TestAKubeletErrorNamesItsPod(t *testing.T) {
	events := "Warning  Failed  12s (x6 over 1m)  kubelet  Error: container has runAsNonRoot and image will run as root " +
		"(pod: \"db-migrate-7c9d4_payments(0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0)\", container: migrate)\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": events}), "config-run-as-non-root", "of pod db-migrate-7c9d4")
}
