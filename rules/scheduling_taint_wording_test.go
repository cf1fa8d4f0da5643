package rules

import "testing"

// The TaintToleration filter's reason in the wordings of Kubernetes 1.14 to 1.37.
func TestTaintReasonWordings(t *testing.T) {
	reasons := []string{
		"1 node(s) had taints that the pod didn't tolerate",
		"2 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate",
		"3 node(s) had untolerated taint {dedicated: gpu}",
		"4 node(s) didn't match Pod's node affinity/selector",
	}
	for _, r := range reasons[:3] {
		if !isTaintReason(r) {
			t.Errorf("%q not read as a taint reason", r)
		}
	}
	if isTaintReason(reasons[3]) {
		t.Errorf("%q read as a taint reason", reasons[3])
	}
	if got := taintCount(reasons); got != 6 {
		t.Errorf("taintCount = %d, want 6", got)
	}
	msg := "0/5 nodes are available: 2 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) had untolerated taint {dedicated: gpu}."
	if m := reTaintInMessage.FindAllStringSubmatch(msg, -1); len(m) != 2 || m[0][1] != "node-role.kubernetes.io/master" || m[1][2] != "gpu" {
		t.Errorf("taints in message: %q", m)
	}
}
