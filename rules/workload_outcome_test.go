package rules

import (
	"strings"
	"testing"
)

// A deploy tool's output gives a rollout's outcome (past its progress deadline) and,
// before it, why its pods never became available: the scheduler's refusal. The outcome
// follows from the refusal, whatever their stages' order in the chain, so the refusal
// is the root and the deadline its consequence.
func TestARolloutDeadlineFollowsItsPodsRefusal(t *testing.T) {
	const out = `Waiting for deployment "api" rollout to finish: 0 of 2 updated replicas are available...
  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.
error: deployment "api" exceeded its progress deadline
`
	wantOneRoot(t, catalogRoots(t, map[string]string{"rollout.txt": out}), "scheduling-insufficient-resources", "Insufficient memory")

	// Alone, the outcome is all the evidence says: it stays the root.
	wantOneRoot(t, catalogRoots(t, map[string]string{"rollout.txt": `error: deployment "api" exceeded its progress deadline` + "\n"}),
		"controller-progress-deadline-exceeded", `deployment "api"`)
}

// systemd's word on a node agent that stopped ("containerd.service: Main process
// exited") is the outcome of the agent's own fatal line before it, which says why; the
// agent is down, so the trouble is the node's, not a container's crash.
func TestANodeAgentsFatalLineBeforeItsUnitExits(t *testing.T) {
	const journal = `Mar 02 10:00:01 worker-1 systemd[1]: Starting containerd container runtime...
Mar 02 10:00:01 worker-1 containerd[812]: time="2024-03-02T10:00:01.112233445Z" level=info msg="starting containerd" revision=abc version=1.7.2
Mar 02 10:00:01 worker-1 containerd[812]: time="2024-03-02T10:00:01.212233445Z" level=fatal msg="Unable to parse plugin options: snapshotter \"stargz\" not found"
Mar 02 10:00:01 worker-1 systemd[1]: containerd.service: Main process exited, code=exited, status=1/FAILURE
Mar 02 10:00:01 worker-1 systemd[1]: containerd.service: Failed with result 'exit-code'.
`
	rs := catalogRoots(t, map[string]string{"journal.txt": journal})
	if len(rs) != 1 || rs[0].Stage != "node" || !strings.Contains(rs[0].Cause, `snapshotter \"stargz\" not found`) {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("want one root at the node stage that quotes containerd's fatal line")
	}
}

// An in-cluster program's log opens with client-go's note that it found no kubeconfig
// (a warning every controller prints as it starts, no trouble) and ends at the port it
// may not bind; the manifest the ticket pastes adds NET_BIND_SERVICE, which the cause
// names as written.
func TestAPrivilegedPortRefusedBesideABenignWarning(t *testing.T) {
	const log = "W0301 09:12:01.583084       1 client_config.go:667] Neither --kubeconfig nor --master was specified.  Using the inClusterConfig.  This might not work.\n" +
		"2025-03-01T09:12:01.597Z INF controller.go:85 Starting controller\n" +
		"Listen: listen tcp :443: bind: permission denied\n"
	const manifest = "        securityContext:\n          runAsUser: 1000\n          capabilities:\n            add:\n            - NET_BIND_SERVICE\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"logs.txt": log, "securitycontext.txt": manifest}),
		"runtime-crash-exit", ":443", "adds NET_BIND_SERVICE")
}

// A program's klog lines pasted without a journal's prefix, an error and then its fatal
// exit: the fatal line (its F level kept only in the line as pasted) is why it stops.
func TestAKlogFatalLineIsTheExit(t *testing.T) {
	const log = "E0317 11:46:48.531388       1 manager.go:261] Failed to refresh the node group cache: cannot list groups: AccessDenied: not authorized to perform describe-groups\n" +
		"F0317 11:46:48.531413       1 provider.go:376] Failed to create the cloud manager: cannot list groups: AccessDenied: not authorized to perform describe-groups\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"logs.txt": log}), "runtime-crash-exit", "Failed to create the cloud manager")
}

// The API server's allocator repair loop warns as it repairs a new Service's cluster IP
// it saw half-written: the repair is done as it is recorded, and a healthy Service is
// no trouble.
func TestARepairedAllocationIsNoTrouble(t *testing.T) {
	const events = "LAST SEEN   TYPE      REASON                  OBJECT            MESSAGE\n" +
		"12s         Warning   ClusterIPNotAllocated   service/web       Cluster IP [IPv4]: 10.96.159.99 is not allocated; repairing\n"
	for _, f := range catalogRoots(t, map[string]string{"events.txt": events}) {
		t.Errorf("a repaired allocation reported: %s %s: %s", f.Stage, f.Rule, f.Cause)
	}
}
