package rules

import (
	"strings"
	"testing"
)

// A node describe whose conditions report pressure, with no evicted pod in the
// evidence, is the node crossing an eviction threshold: the kubelet's own condition
// says it, and the finding names the resource and the taint.
func TestANodeUnderPressureCrossedAnEvictionThreshold(t *testing.T) {
	const node = `Name:               worker-2
Taints:             node.kubernetes.io/disk-pressure:NoSchedule
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  MemoryPressure   False   Mon, 01 Dec 2025 10:00:00 +0000   Mon, 01 Dec 2025 09:00:00 +0000   KubeletHasSufficientMemory   kubelet has sufficient memory available
  DiskPressure     True    Mon, 01 Dec 2025 10:00:00 +0000   Mon, 01 Dec 2025 09:40:00 +0000   KubeletHasDiskPressure       kubelet has disk pressure
  PIDPressure      False   Mon, 01 Dec 2025 10:00:00 +0000   Mon, 01 Dec 2025 09:00:00 +0000   KubeletHasSufficientPID      kubelet has sufficient PID available
  Ready            True    Mon, 01 Dec 2025 10:00:00 +0000   Mon, 01 Dec 2025 09:00:00 +0000   KubeletReady                 kubelet is posting ready status
`
	rs := catalogRoots(t, map[string]string{"describe-node.txt": node})
	wantOneRoot(t, rs, "node-pod-evicted", "worker-2", "DiskPressure=True", "node.kubernetes.io/disk-pressure")
	// A node without pressure is not one.
	healthy := strings.Replace(node, "DiskPressure     True ", "DiskPressure     False", 1)
	for _, f := range catalogRoots(t, map[string]string{"describe-node.txt": healthy}) {
		if f.Rule == "node-pod-evicted" {
			t.Errorf("a node without pressure read as one: %s", f.Cause)
		}
	}
}
