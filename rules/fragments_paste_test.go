package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// fragmentCase is a paste whose trouble is in pieces of a pod's output: the rule's one
// finding must say every phrase of want and none of wantNot.
type fragmentCase struct {
	name    string
	files   map[string]string
	want    []string
	wantNot []string
}

func runFragmentCases(t *testing.T, rule *analyze.Rule, cases []fragmentCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := pasteFindings(t, rule, c.files)
			if len(fs) != 1 {
				for _, f := range fs {
					t.Logf("finding: %s", f.Cause)
				}
				t.Fatalf("want one finding, got %d", len(fs))
			}
			for _, w := range c.want {
				if !strings.Contains(fs[0].Cause, w) {
					t.Errorf("the cause does not say %q: %s", w, fs[0].Cause)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(fs[0].Cause, w) {
					t.Errorf("the cause says %q: %s", w, fs[0].Cause)
				}
			}
		})
	}
}

// TestOOMKilledFromPodFragments: a container's status pasted from `kubectl get pod -o
// yaml` alone names the container the kernel killed, and a pod known only from a `kubectl
// get pods` row has no spec in the evidence, so no rule may say it has no memory limit.
func TestOOMKilledFromPodFragments(t *testing.T) {
	runFragmentCases(t, RuntimeOOMKilled, []fragmentCase{
		{
			name: "container status list item",
			files: map[string]string{"status.yaml": "  containerStatuses:\n" +
				"  - containerID: containerd://4f1c0e\n" +
				"    image: registry.example/indexer:3.1\n" +
				"    lastState:\n" +
				"      terminated:\n" +
				"        exitCode: 137\n" +
				"        reason: OOMKilled\n" +
				"    name: indexer\n" +
				"    ready: false\n" +
				"    restartCount: 7\n"},
			want:    []string{"container indexer", "exit code 137", "7 restart(s)", "not known"},
			wantNot: []string{"no memory limit"},
		},
		{
			name: "one container's status without its list",
			files: map[string]string{"pod.yaml": "lastState:\n" +
				"  terminated:\n" +
				"    exitCode: 137\n" +
				"    reason: OOMKilled\n" +
				"name: cache-warmer\n" +
				"restartCount: 3\n"},
			want:    []string{"container cache-warmer", "3 restart(s)"},
			wantNot: []string{"no memory limit"},
		},
	})
}

// TestOOMKilledJoinsThePodOfTheRow: a describe excerpt without its Name line and a
// `kubectl get pods` table in another file of the same paste are one pod; the row shows
// no spec, so the memory limit is not known, and the cause names the pod of the row.
func TestOOMKilledJoinsThePodOfTheRow(t *testing.T) {
	runFragmentCases(t, RuntimeOOMKilled, []fragmentCase{{
		name: "get table and describe excerpt",
		files: map[string]string{
			"pods.txt": "$ kubectl get pods -n billing\n" +
				"NAME                        READY   STATUS      RESTARTS      AGE\n" +
				"ledger-sync-5c9d7b8f4-x2kqp   0/1     OOMKilled   6 (20s ago)   9m\n",
			"describe.txt": "    Last State:     Terminated\n" +
				"      Reason:       OOMKilled\n" +
				"      Exit Code:    137\n",
		},
		want:    []string{"pod billing/ledger-sync-5c9d7b8f4-x2kqp", "not known"},
		wantNot: []string{"no memory limit"},
	}})
}

// TestPendingRowIsNeverSilent: a `kubectl get pods -o wide` row grep'd out of its table,
// indented and with its column gaps squeezed to one space, is a pod; Pending on a node
// with no container created is trouble the report names, never "No finding".
func TestPendingRowIsNeverSilent(t *testing.T) {
	rep := analyzePaste(t, map[string]string{"pods.txt": "   $ kubectl get pods -A -o wide | grep queue\n" +
		"     messaging queue-broker-2 0/3 Pending 0 2h15m 10.42.7.19 edge-node-4 <none> <none>\n"})
	rs := roots(rep)
	if len(rs) != 1 {
		t.Fatalf("want one root, got %d findings", len(rep.Findings))
	}
	if rs[0].Stage != analyze.StageNode || !strings.Contains(rs[0].Cause, "messaging/queue-broker-2") || !strings.Contains(rs[0].Cause, "edge-node-4") {
		t.Errorf("root: %s %s", rs[0].Stage, rs[0].Cause)
	}
}
