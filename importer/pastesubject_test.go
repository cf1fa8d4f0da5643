package importer

import (
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

// rootOf analyzes a one-file paste and returns its root findings' stage, pods and
// causes, one line each.
func rootsOf(t *testing.T, paste string) (*analyze.Report, []string) {
	t.Helper()
	b, _ := importDir(t, map[string][]byte{"ticket.txt": []byte(paste)}, FormatLoose)
	// As podflow analyze runs: the evidence no rule explains is reported too.
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Unexplained: true})
	var out []string
	for _, f := range rep.Findings {
		if f.Root {
			var pods []string
			for _, p := range f.Pods() {
				pods = append(pods, p.NamespacedName())
			}
			out = append(out, string(f.Stage)+" "+strings.Join(pods, ",")+": "+f.Cause)
		}
	}
	return rep, out
}

func TestAPasteNamesItsPod(t *testing.T) {
	for _, tc := range []struct{ name, paste, pod string }{
		{"kubelet back-off event", "Events:\n" +
			"  Warning  BackOff  2m (x7 over 5m)  kubelet  Back-off restarting failed container api in pod api-7d9f-abc12_shop(1234-5678)\n",
			"shop/api-7d9f-abc12"},
		{"structured kubelet key", "Events:\n" +
			"  Warning  FailedMount  1m (x3 over 4m)  kubelet  MountVolume.SetUp failed for volume \"cfg\" : configmap \"cfg\" not found pod=\"payments/ledger-0\"\n",
			"payments/ledger-0"},
		{"scheduler's assignment", "Events:\n" +
			"  Normal   Scheduled  5m                 default-scheduler  Successfully assigned shop/web-5d8f-a1 to node-3\n" +
			"  Warning  BackOff    2m (x7 over 5m)    kubelet            Back-off restarting failed container web in pod web-5d8f-a1_shop(9)\n",
			"shop/web-5d8f-a1"},
		{"prompt behind a pipe", "$ kubectl describe pod -n shop web-7d9f-x2 | grep -A4 Events\n" +
			"Events:\n" +
			"  Type     Reason   Age                From     Message\n" +
			"  ----     ------   ----               ----     -------\n" +
			"  Warning  BackOff  2m (x7 over 5m)    kubelet  Back-off restarting failed container web\n",
			"shop/web-7d9f-x2"},
		{"grep names the pod", "$ kubectl get pods -n shop | grep web-7d9f\n" +
			"web-7d9f-x2   0/1     CrashLoopBackOff   7 (30s ago)   20m\n",
			"shop/web-7d9f-x2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, roots := rootsOf(t, tc.paste)
			if len(roots) == 0 {
				t.Fatal("no finding")
			}
			for _, r := range roots {
				if !strings.Contains(r, " "+tc.pod+": ") {
					t.Errorf("finding %q is not about %s", r, tc.pod)
				}
				if strings.Contains(r, "unnamed") || strings.Contains(r, "default/") {
					t.Errorf("finding %q names an invented pod", r)
				}
			}
			for _, f := range rep.Findings {
				for _, c := range f.Confirm {
					if strings.Contains(c, " -n ") && !strings.Contains(c, "-n "+strings.Split(tc.pod, "/")[0]) {
						t.Errorf("confirm command %q is not in the paste's namespace", c)
					}
				}
			}
		})
	}
}

func TestKubectlStatusWordsGoToTheirStage(t *testing.T) {
	paste := "$ kubectl get pods -n shop\n" +
		"NAME                     READY   STATUS                  RESTARTS      AGE\n" +
		"api-6c9f7d-x1            0/1     Init:0/2                0             5m\n" +
		"api-6c9f7d-x2            0/1     Init:CrashLoopBackOff   4 (30s ago)   5m\n" +
		"api-6c9f7d-x3            0/1     Init:Error              2             5m\n" +
		"web-5d8f-a1              0/1     ContainerCreating       0             10m\n" +
		"web-5d8f-a2              0/1     PodInitializing         0             10m\n" +
		"batch-1-xyz              0/1     Completed               0             1h\n" +
		"old-7f-q                 0/1     Terminating             0             2d\n" +
		"cache-0                  0/1     Evicted                 0             3h\n" +
		"worker-9-k               0/1     OutOfcpu                0             1h\n" +
		"pin-1                    0/1     NodeAffinity            0             1h\n" +
		"queue-0                  0/1     Pending                 0             1h\n"
	_, roots := rootsOf(t, paste)
	want := map[string]string{
		"shop/api-6c9f7d-x1": "start", "shop/api-6c9f7d-x2": "start", "shop/api-6c9f7d-x3": "start",
		"shop/web-5d8f-a1": "sandbox", "shop/web-5d8f-a2": "volume", "shop/old-7f-q": "termination",
		"shop/cache-0": "node", "shop/worker-9-k": "node", "shop/pin-1": "node", "shop/queue-0": "scheduling",
	}
	got := map[string]string{}
	for _, r := range roots {
		stage, rest, _ := strings.Cut(r, " ")
		pod, cause, _ := strings.Cut(rest, ": ")
		got[pod] = stage
		if pod != "shop/queue-0" && (strings.Contains(cause, "not scheduled") || strings.Contains(cause, "no node")) {
			t.Errorf("%s: kubectl shows it past scheduling, the cause says %q", pod, cause)
		}
		if strings.Contains(cause, `it says ""`) {
			t.Errorf("%s: quotes an empty message: %q", pod, cause)
		}
	}
	for pod, stage := range want {
		if got[pod] != stage {
			t.Errorf("%s: stage %q, want %q (roots %q)", pod, got[pod], stage, roots)
		}
	}
	if s, ok := got["shop/batch-1-xyz"]; ok {
		t.Errorf("a Completed pod has a root cause at %s", s)
	}
}

func TestAPastedEvictionMessageIsRead(t *testing.T) {
	paste := "$ kubectl describe pod cache-0 -n shop | grep -A3 Status\n" +
		"Status:           Failed\n" +
		"Reason:           Evicted\n" +
		"Message:          The node was low on resource: memory. Threshold quantity: 100Mi, available: 91Mi. Container redis was using 1Gi, request is 256Mi, has larger consumption of memory.\n"
	_, roots := rootsOf(t, paste)
	if len(roots) != 1 || !strings.HasPrefix(roots[0], "node shop/cache-0: ") || !strings.Contains(roots[0], "low on memory") && !strings.Contains(roots[0], "ran low on memory") {
		t.Errorf("roots = %q, want the eviction of shop/cache-0 for memory", roots)
	}
}

// Event rows copied from their Reason cell on, without the pod's name, are the events of
// the one pod whose STATUS in the pasted pods table shows their trouble.
func TestEventRowsGoToThePodWhoseStatusShowsThem(t *testing.T) {
	files := map[string][]byte{
		"get-pods.txt": []byte("$ kubectl get pod\n" +
			"NAME                           READY   STATUS             RESTARTS       AGE\n" +
			"model-api-688778dd76-wzwmg     0/1     CrashLoopBackOff   13 (68s ago)   65m\n" +
			"model-cache-7c984cdff8-xq5pk   0/1     Pending            0              65m\n" +
			"model-cache-etcd-0             1/1     Running            0              65m\n"),
		"events.txt": []byte("FailedScheduling   2m21s (x42 over 60m)  default-scheduler  0/2 nodes are available: 2 node(s) had untolerated taint {gpu: present}\n"),
	}
	b, _ := importDir(t, files, FormatLoose)
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Unexplained: true})
	var roots []string
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		var pods []string
		for _, p := range f.Pods() {
			pods = append(pods, p.Name)
		}
		roots = append(roots, string(f.Stage)+" "+f.Rule+" "+strings.Join(pods, ","))
	}
	want := "scheduling scheduling-untolerated-taint model-cache-7c984cdff8-xq5pk"
	if !slices.Contains(roots, want) {
		t.Errorf("roots = %q, want %q among them", roots, want)
	}
}

// A log pasted under `kubectl logs POD -c CONTAINER` is evidence about that pod even when
// nothing else shows it, and the STATUS the reporter's sentence puts it in is its status.
func TestALoggedPodTakesTheStatusTheTicketGivesIt(t *testing.T) {
	paste := "Deployment failure - the first db pod gets into Init:CrashLoopBackOff\n\n" +
		"$ kubectl logs db-0 -c prepare-data-dir\n" +
		"chown: changing ownership of '/var/lib/db': Permission denied\n"
	if _, roots := rootsOf(t, paste); !hasRoot(roots, "start db-0: ", "Init:CrashLoopBackOff") {
		t.Errorf("roots = %q, want the pod db-0 at the start stage in Init:CrashLoopBackOff", roots)
	}
	if got := proseStatuses([]textLine{{s: "web-1   0/1   CrashLoopBackOff   3   1m"}, {s: "I restarted it into the night"}}); len(got) != 0 {
		t.Errorf("a pods table row or a sentence without a STATUS word gave %q", got)
	}
}

// A message pasted after a pods table and a blank line is read, not dropped as a row that
// is not one.
func TestAParagraphAfterAPodsTableIsRead(t *testing.T) {
	paste := "NAME    READY   STATUS              RESTARTS   AGE\n" +
		"db-0    0/1     ContainerCreating   0          3d14h\n\n" +
		"networkPlugin cni failed to set up pod \"db-0_shop\" network: request ip return 500 route is not ready for pod shop/db-0 provider ovn\n"
	if _, roots := rootsOf(t, paste); !hasRoot(roots, "sandbox ", "route is not ready") {
		t.Errorf("roots = %q, want the sandbox failure the message states", roots)
	}
}

// hasRoot reports whether one of rootsOf's lines starts with prefix and holds text.
func hasRoot(roots []string, prefix, text string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return strings.HasPrefix(r, prefix) && strings.Contains(r, text) })
}
