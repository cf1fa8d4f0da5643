package main

import "testing"

// TestOutside checks which trouble lines are outside the measure, and that messages
// printed by Pod-path components stay in it.
func TestOutside(t *testing.T) {
	cases := []struct{ line, want string }{
		{`sudo journalctl -u kubelet.service | grep "failed to run"`, "command"},
		{`$ grep -m1 ' failed to run Kubelet' /var/log/messages`, "command"},
		{`k get event -n test | grep Error`, "command"},
		{`Reason:       Evicted`, "field"},
		{`phase: Failed`, "field"},
		{`"reason": "Forbidden",`, "field"},
		{`failed: 5`, "field"},
		{`Pods Status:	0 Running / 0 Waiting / 0 Succeeded / 0 Failed`, "field"},
		{`pmem-csi-node-w56mn   0/2     Evicted   0          4m15s   <none>   host-1`, "field"},
		{`FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory`, "application"},
		{`Caused by: com.zaxxer.hikari.pool.HikariPool$PoolInitializationException: Failed to initialize pool`, "application"},
		{`tar: Error is not recoverable: exiting now`, "application"},
		{`curl: (22) The requested URL returned error: 404`, "application"},
		{`2017-01-06T22:45:27.671338972Z 2017-01-06T22:45:27.671244Z 0 [ERROR] --initialize specified but the data directory has files in it. Aborting.`, "application"},
		{`INFO:     10.42.0.1:53312 - "GET /api/health HTTP/1.1" 401 Unauthorized`, "application"},
		{`10.0.0.7 - - [02/Mar/2023:10:00:01 +0000] "POST /login HTTP/2.0" 502 157 "-" "curl/8.0"`, "application"},
		{`/usr/local/go/src/runtime/panic.go:679`, "stack frame"},
		{`github.com/go-logr/zapr.(*zapLogger).Error`, "stack frame"},
		{`sigs.k8s.io/controller-runtime/pkg/log.(*DelegatingLogger).Error`, "stack frame"},
		{`k8s.io/kubernetes/cmd/kubelet/app.run(0xc000010000, 0x1)`, "stack frame"},
		{`FATAL:  data directory "/var/lib/postgresql/data" has group or world access`, "application"},
		{`2025-05-03 17:50:50,140 - MainThread - WARNING - ocs_ci.ocs.ocp.wait_for_resource.917 - Description`, "application"},
		{`Pods Status:        0 Running / 0 Waiting / 0 Succeeded / 0 Failed;`, "field"},
		{`But for some reason the pod is always unhealthy and I see the following errors:`, "prose"},
		{`When running the chart using most of the defaults, the init container enters a CrashLoop with the following error:`, "prose"},
		{`We are using an external volume. After a restart the pod with the volume mounted cannot access its mount point.`, "prose"},
		{`## 3. Inside the same pod the error occurs again, cannot recover`, "prose"},
		// in the measure
		{`Reason:       OOMKilled`, ""},
		{`k8s.io/api/core/v1.Pod`, ""},
		{`Warning  Failed  3s  kubelet  Error: failed to create containerd task: ERROR: unknown`, ""},
		{`node-exporter-d7mxn   1/2       CrashLoopBackOff   219        19h`, ""},
		{"`kubectl describe pod` shows `Error: secrets \"my-password\" not found`", ""},
		{`kubectl failed exit status 1: The Deployment "x" is invalid: spec.selector: Invalid value`, ""},
		{`Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "data" : mount failed: exit status 32`, ""},
		{`Jun 16 11:03:05 node kubelet[1]: E0616 11:03:05.1 1 pod_workers.go:1] "Error syncing pod, skipping" err="failed to \"StartContainer\""`, ""},
		{`error: You must be logged in to the server (Unauthorized)`, ""},
		// a component's sentence, and names that hold "my", are no reporter's prose
		{`Warning  FailedMount  19m  kubelet  MountVolume.SetUp failed for volume "my-conf" : configmap "my-loadtest" not found`, ""},
		{`E0203 10:00:00.000000 1 kubelet.go:1] I see the following error in my pod:`, ""},
		{"`mirrors` cannot be set when `config_path` is provided", ""},
	}
	for _, c := range cases {
		if got := outside(c.line); got != c.want {
			t.Errorf("outside(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}
