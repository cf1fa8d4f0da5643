package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// wantRootAt checks the first root's stage and that its cause holds each of holds.
func wantRootAt(t *testing.T, rs []*analyze.Finding, stage analyze.Stage, holds ...string) *analyze.Finding {
	t.Helper()
	if len(rs) == 0 {
		t.Fatalf("no root, want one at the %s stage", stage)
	}
	r := rs[0]
	ok := r.Stage == stage
	for _, h := range holds {
		ok = ok && strings.Contains(r.Cause, h)
	}
	if !ok {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("first root at %s (%s), want the %s stage with a cause holding %q", r.Stage, r.Rule, stage, holds)
	}
	return r
}

// wantRoot is wantRootAt that also wants the first root's rule.
func wantRoot(t *testing.T, rs []*analyze.Finding, stage analyze.Stage, rule string, holds ...string) {
	t.Helper()
	if r := wantRootAt(t, rs, stage, holds...); r.Rule != rule {
		t.Errorf("root rule %s, want %s", r.Rule, rule)
	}
}

// The reasons the kubelet's admission handlers give a pod they refuse are the node's
// refusal, whatever the word: kubectl's STATUS column shows SysctlForbidden for a pod
// that sets a sysctl the kubelet does not allow, and the finding says what it means.
func TestAKubeletRefusalIsTheNodeStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"pods.txt": "$ kubectl get pods\n" +
		"NAME                  READY   STATUS            RESTARTS   AGE\n" +
		"web-9c9bc6fff-4fhwq   0/1     SysctlForbidden   0          10s\n" +
		"web-9c9bc6fff-4pmqk   0/1     SysctlForbidden   0          3s\n"})
	wantRootAt(t, rs, analyze.StageNode, "SysctlForbidden", "allowedUnsafeSysctls")
}

// A pod the StatefulSet controller creates and the API server refuses as invalid breaks
// the chain at the controller: the workload was accepted, its pods cannot be made. The
// same refusal of an object a user applies stays the request's.
func TestAControllersRefusedPodIsTheControllerStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"events.txt": "`create Pod db-0 in StatefulSet db failed error: Pod \"db-0\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data-pv\"`\n"})
	wantRoot(t, rs, analyze.StageController, "request-invalid", "data-pv")
	rs = catalogRoots(t, map[string]string{"apply.txt": "$ kubectl apply -f db.yaml\nThe Pod \"db-0\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data-pv\"\n"})
	wantRootAt(t, rs, analyze.StageRequest, "data-pv")
}

// A CNI daemon's own log line, printed as it fails to start, is that pod's run failing:
// the pod got past its own sandbox to run the daemon. The catalog still names the
// component and the line.
func TestADaemonsOwnLogIsItsRuntime(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"logs.txt": "$ kubectl -n kube-system logs po/canal-khsqt kube-flannel\n" +
		"E0501 20:55:21.603770       1 main.go:127] Failed to create SubnetManager: failed to read net conf: open /etc/kube-flannel/net-conf.json: no such file or directory\n"})
	wantRootAt(t, rs, analyze.StageRuntime, "flannel", "/etc/kube-flannel/net-conf.json")
}

// Helm's words around the API server's refusal of its release record are the request
// being refused, not a container's log.
func TestHelmsRefusalIsTheRequestStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": "Installing the chart is not possible anymore; it will fail with:\n```\n" +
		"Error: INSTALLATION FAILED: create: failed to create: Request entity too large: limit is 3145728\n```\n"})
	wantRootAt(t, rs, analyze.StageRequest, "Request entity too large")
}

// Docker's daemon before the CRI said "Cannot start container" for what runc could not
// set up: the container's start, not its node.
func TestDockersCannotStartContainerIsTheStartStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": "The error message is:\n\n```\n" +
		"Cannot start container 4c2b9a: [9] System error: write /sys/fs/cgroup/cpu,cpuacct/system.slice/docker-4c2b9a.scope/cpu.cfs_quota_us: invalid argument\n```\n"})
	wantRootAt(t, rs, analyze.StageStart)
}

// The VPC resource controller's event on a pod that waits for its branch ENI is the
// sandbox's trouble, read from the controller's own source.
func TestABranchENIEventIsTheSandboxStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"events.txt": "```\nWarning BranchAllocationFailed 2m (x5 over 4m) vpc-resource-controller failed to allocate branch ENI to pod: cannot create new eni entry already exist, older entry : [0xc000123]\n```\n"})
	wantRootAt(t, rs, analyze.StageSandbox, "failed to allocate branch ENI to pod")
}

// A program's klog lines, however much they read like a sentence, keep the prose
// around them from naming a failure at another stage; and the machine word of a kernel
// an issue template asks for is no image's architecture.
func TestKlogLinesAndAKernelLineDoNotMakeAPlatformMismatch(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": "**What happened**:\n" +
		"csi-nodeplugin-cinderplugin keeps crashing due to not able to find specific content.\n```\n" +
		"I1012 11:04:30.120752       1 connection.go:140] GRPC error: rpc error: code = Unknown desc = open /var/lib/cloud/data/instance-id: no such file or directory\n" +
		"E1012 11:04:30.120773       1 main.go:159] rpc error: code = Unknown desc = open /var/lib/cloud/data/instance-id: no such file or directory\n```\n" +
		"**How to reproduce it**:\nDeploy the cinder-csi-plugin on kubernetes on an OpenStack Ocata platform.\n\n" +
		"**Environment**:\n- Kernel (e.g. `uname -a`): `Linux node10 4.14.48-coreos-r2 #1 SMP Thu Jun 14 08:23:03 UTC 2018 x86_64`\n"})
	for _, r := range rs {
		if r.Stage == analyze.StageImage {
			t.Errorf("root at the image stage from the prose: %s %s", r.Rule, r.Cause)
		}
	}
	if len(rs) == 0 || !strings.Contains(rs[0].Cause, "/var/lib/cloud/data/instance-id") {
		t.Errorf("the first root does not quote the program's error: %v", ruleIDs(rs))
	}
}
