package rules

import "testing"

// Of two lines the catalog knows, the refusal is the cause and the time-out its client
// gave up at is its effect: a drain blocked by a PodDisruptionBudget names the budget's
// refusal and the pod it was about, not "global timeout reached".
func TestARefusalOutranksTheTimeOutItCaused(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"kubectl.txt": "evicting pod shop/api-7c6f64969c-m4m59\n" +
		`error when evicting pods/"api-7c6f64969c-m4m59" -n "shop" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.` + "\n" +
		"error: unable to drain node \"worker-3\" due to error: error when evicting pods/\"api-7c6f64969c-m4m59\" -n \"shop\": global timeout reached: 2m0s\n"})
	rootCauseHas(t, rs, "disruption budget", "shop/api-7c6f64969c-m4m59")
	if rs[0].Stage != "termination" {
		t.Errorf("root stage = %s, want termination", rs[0].Stage)
	}
}

// A program's timestamped log line that shows trouble keeps the prose's closest failure
// from moving the root to another stage: a sentence about how the chart was installed
// is no YAML error when the container's log says why it stops.
func TestTheProseDoesNotOutweighAProgramsOwnLog(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "Installed with the main branch (helm install, or kubectl apply of the rendered yaml manifest) on Kubernetes 1.24 with containerd.\n\n" +
			"Error for the web container:\n\n" +
			"helm install or kubectl apply yaml under Kubernetes with containerd, then check the web pod log.\n",
		"kubectl.txt": "$ kubectl logs web-67ccb4cf4b-6wwk7\n" +
			"2022/06/21 17:46:06 [emerg] 12#12: bind() to 0.0.0.0:80 failed (13: Permission denied)\n",
	})
	for _, r := range rs {
		if r.Stage == "request" {
			t.Errorf("root at the request stage from the prose: %s %s", r.Rule, r.Cause)
		}
	}
}
