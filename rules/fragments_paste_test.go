package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// TestOOMKilledFromPodFragments: a container's status pasted from `kubectl get pod -o
// yaml` alone names the container the kernel killed, and a pod known only from a `kubectl
// get pods` row has no spec in the evidence, so no rule may say it has no memory limit.
func TestOOMKilledFromPodFragments(t *testing.T) {
	runRelationCases(t, RuntimeOOMKilled, []relationCase{
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
	runRelationCases(t, RuntimeOOMKilled, []relationCase{{
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
	}, {
		// The row's RESTARTS is the sum of its containers' restart counts (kubectl's
		// printPod); the excerpt shows one container and no Restart Count.
		name: "the row's restarts carried into the excerpt's container",
		files: map[string]string{
			"pods.txt": "$ kubectl get pods -n billing\n" +
				"NAME                        READY   STATUS             RESTARTS      AGE\n" +
				"ledger-sync-5c9d7b8f4-x2kqp   0/1     CrashLoopBackOff   6 (20s ago)   9m\n",
			"describe.txt": "    Last State:     Terminated\n" +
				"      Reason:       OOMKilled\n" +
				"      Exit Code:    137\n",
		},
		want:    []string{"pod billing/ledger-sync-5c9d7b8f4-x2kqp", "6 restart"},
		wantNot: []string{"0 restart"},
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

// TestContainerLogInKlogIsTheProgramsOwn: the output of `kubectl logs POD` written in
// klog's format (any Go program may use it) is the container's log, not a kubelet
// journal, and its words are the program's even where they read like the kubelet's.
func TestContainerLogInKlogIsTheProgramsOwn(t *testing.T) {
	all, err := Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := importPaste(t, map[string]string{"logs.txt": "$ kubectl logs -n reports indexer-0\n" +
		"I0303 08:14:02.117001       1 main.go:41] Starting indexer v2.4.1\n" +
		"I0303 08:14:02.117950       1 store.go:63] Opening store at /data/index\n" +
		"F0303 08:14:02.118204       1 main.go:88] error: unable to create directory for segment: mkdir /data/index/segments: permission denied\n"})
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), all, analyze.Options{Unexplained: true})
	rs := roots(rep)
	if len(rs) != 1 {
		t.Fatalf("want one root, got %d findings", len(rep.Findings))
	}
	if rs[0].Stage != analyze.StageRuntime || !strings.Contains(rs[0].Cause, "/data/index/segments") || strings.Contains(rs[0].Cause, "kubelet") {
		t.Errorf("root: %s %s: %s", rs[0].Stage, rs[0].Rule, rs[0].Cause)
	}
}

// TestGuessedLogKeepsTheKubeletsReading: text the import only guesses to be a log (no
// `kubectl logs` names its pod) may quote the kubelet: its pull failure stays at image.
func TestGuessedLogKeepsTheKubeletsReading(t *testing.T) {
	all, err := Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := importPaste(t, map[string]string{"ticket.txt": "Our nodes cannot pull from the internal registry since Monday.\n\n" +
		"Failed to pull image \"registry.corp.example/team/api:5.2\" x509: certificate signed by unknown authority\n"})
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), all, analyze.Options{Unexplained: true})
	rs := roots(rep)
	if len(rs) == 0 || rs[0].Stage != analyze.StageImage {
		for _, f := range rep.Findings {
			t.Logf("%s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Error("want the root at the image stage")
	}
}

// TestOOMKilledNamesThePodTheProseNames: a describe excerpt cut below its Name line,
// under the reporter's sentence that names one pod, is that pod's; a sentence that names
// two leaves the excerpt unnamed.
func TestOOMKilledNamesThePodTheProseNames(t *testing.T) {
	excerpt := "    Last State:     Terminated\n" +
		"      Reason:       OOMKilled\n" +
		"      Exit Code:    137\n" +
		"    Restart Count:  3\n"
	runRelationCases(t, RuntimeOOMKilled, []relationCase{
		{name: "one pod and its namespace in the prose", files: map[string]string{
			"ticket.txt": "Our pod ledger-sync-0 in namespace billing keeps getting killed:\n\n" + excerpt},
			want: []string{"pod billing/ledger-sync-0"}},
		{name: "two pods in the prose", files: map[string]string{
			"ticket.txt": "The pod ledger-sync-0 is fine but pod ledger-sync-1 keeps getting killed:\n\n" + excerpt},
			want: []string{"OOM"}, wantNot: []string{"ledger-sync"}},
		{name: "no pod name in the prose", files: map[string]string{
			"ticket.txt": "The pod is killed again and again, see:\n\n" + excerpt},
			want: []string{"OOM"}, wantNot: []string{"pod is"}},
	})
}

// TestPodStatusCutToItsOwnKeys: a pod's -o yaml pasted as only its status's reason and
// message (the quote doubled inside YAML's single quotes, the message folded onto a
// second line) is the pod the kubelet refused, with the message's own values.
func TestPodStatusCutToItsOwnKeys(t *testing.T) {
	status := "  reason: OutOfcpu\n" +
		"  message: 'Node didn''t have enough resource: cpu, requested: 480, used: 3601, capacity:\n" +
		"    4000'\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"status.txt": status}),
		"node-kubelet-admission-out-of-resources", "OutOfcpu", "requested: 480", "Node didn't have")
}

// The same message in a program's log and quoted again in the ticket's prose is one
// observation: one root citing both files, not two identical roots.
func TestTheSameMessageInTwoFilesOfAPasteIsOneFinding(t *testing.T) {
	line := `{"t":{"$date":"2024-04-02T10:00:01.000Z"},"s":"I","c":"ACCESS","id":20254,"ctx":"main","msg":"Read security file failed","attr":{"error":{"code":30,"codeName":"InvalidPath","errmsg":"permissions on /etc/mongo/keyfile are too open"}}}`
	rs := catalogRoots(t, map[string]string{"mongod.log": line + "\n", "message.txt": "The replica set does not start, the log says:\n\n" + line + "\n"})
	if len(rs) != 1 || rs[0].Rule != "runtime-secret-file-mode-too-open" {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("want one runtime-secret-file-mode-too-open root, got %d", len(rs))
	}
	files := map[string]bool{}
	for _, e := range rs[0].Evidence {
		files[e.Path] = true
	}
	if !files["mongod.log"] || !files["message.txt"] {
		t.Errorf("the finding cites %v, want both files", files)
	}
}
