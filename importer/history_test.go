package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// historyDescribe is a describe of a pod whose sandbox failed four times before it was
// created; its containers then started, and what is wrong now is its readiness probe.
const historyDescribe = `Name:             web-7d9c8b6f5-x2kqp
Namespace:        shop
Node:             worker-2/10.0.0.12
Labels:           app=web
Status:           {{status}}
Controlled By:    ReplicaSet/web-7d9c8b6f5
Containers:
  web:
    Image:          registry.example/web:1.4
    Port:           8080/TCP
    State:          {{state}}
    Ready:          False
    Restart Count:  0
    Readiness:      http-get http://:8080/healthz delay=5s timeout=1s period=10s #success=1 #failure=3
Conditions:
  Type              Status
  Initialized       True
  Ready             False
  ContainersReady   False
  PodScheduled      True
Events:
  Type     Reason                  Age                 From               Message
  ----     ------                  ----                ----               -------
  Normal   Scheduled               10m                 default-scheduler  Successfully assigned shop/web-7d9c8b6f5-x2kqp to worker-2
{{earlier}}
{{later}}`

const sandboxFailed = `  Warning  FailedCreatePodSandBox  9m (x4 over 10m)    kubelet            Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "8a7f": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`

const pullFailed = `  Warning  Failed                  9m (x3 over 10m)    kubelet            Failed to pull image "registry.example/web:1.4": rpc error: code = Unknown desc = failed to pull and unpack image "registry.example/web:1.4": failed to resolve reference "registry.example/web:1.4": unexpected status from HEAD request to https://registry.example/v2/web/manifests/1.4: 429 Too Many Requests
  Warning  Failed                  9m (x3 over 10m)    kubelet            Error: ErrImagePull`

const historyLater = `  Normal   Pulling                 7m                  kubelet            Pulling image "registry.example/web:1.4"
  Normal   Pulled                  7m                  kubelet            Successfully pulled image "registry.example/web:1.4" in 2.1s
  Normal   Created                 7m                  kubelet            Created container web
  Normal   Started                 7m                  kubelet            Started container web
  Warning  Unhealthy               1m (x30 over 6m)    kubelet            Readiness probe failed: HTTP probe failed with statuscode: 503
`

func historyPaste(earlier, status, state, later string) []byte {
	r := strings.NewReplacer("{{earlier}}", earlier, "{{status}}", status, "{{state}}", state, "{{later}}", later)
	return []byte(r.Replace(historyDescribe))
}

// TestHistoryIsNotTheRoot: a failure the pod later got past is history, not its root;
// the root is the earliest stage still broken at the latest evidence.
func TestHistoryIsNotTheRoot(t *testing.T) {
	cases := []struct {
		name, earlier, status, state, later string
		wantRoot                            analyze.Stage
		// wantHistory: any finding at the earlier failure's stage is history, never a root.
		wantHistory bool
	}{
		// Sandbox failed, then the container was created and runs: the probe is the root.
		{"sandbox then probe", sandboxFailed, "Running", "Running", historyLater, analyze.StageProbe, true},
		// The same events, the container status not pasted: the later events alone say
		// the sandbox was created.
		{"sandbox then events only", sandboxFailed, "Running", "Waiting", historyLater, analyze.StageProbe, true},
		// Nothing got past the sandbox: it is the root.
		// A pull that failed, then succeeded: the image stage is history.
		{"pull then probe", pullFailed, "Running", "Running", historyLater, analyze.StageProbe, true},
		{"sandbox still failing", sandboxFailed, "Pending", "Waiting\n      Reason:       ContainerCreating", "", analyze.StageSandbox, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := analyzePaste(t, map[string][]byte{"describe.txt": historyPaste(tc.earlier, tc.status, tc.state, tc.later)})
			var root *analyze.Finding
			for _, f := range rep.Findings {
				if f.Root && root == nil {
					root = f
				}
				if (f.Stage == analyze.StageSandbox || f.Stage == analyze.StageImage) && tc.wantHistory && (f.Root || !f.History) {
					t.Errorf("the failure the pod got past is not history: root=%v history=%v %s", f.Root, f.History, f.Cause)
				}
			}
			if root == nil {
				t.Fatalf("no root finding; findings: %v", rep.Findings)
			}
			for _, f := range rep.Findings {
				t.Logf("%s root=%v history=%v %s: %s", f.Stage, f.Root, f.History, f.Rule, f.Cause)
			}
			if root.Stage != tc.wantRoot {
				t.Errorf("root at %s (%s: %s), want %s", root.Stage, root.Rule, root.Cause, tc.wantRoot)
			}
		})
	}
}

// TestRefusedRequestOfAnExistingPodIsNotItsRoot: a kubelet's own refused request about a
// pod (the node authorizer's 403 while the pod is being bound) names the pod, but the pod
// exists: its creation got past the request stage, so the root is its own trouble.
func TestRefusedRequestOfAnExistingPodIsNotItsRoot(t *testing.T) {
	rep := analyzeTestdata(t, "request-history", "describe.txt", "kubelet.log")
	for _, f := range rep.Findings {
		if f.Stage == analyze.StageRequest && f.Root {
			t.Errorf("a refused request about an existing pod is its root: %s", f.Cause)
		}
		if f.Root && f.Rule != "image-invalid-name" {
			t.Errorf("root %s %s: %s, want image-invalid-name", f.Stage, f.Rule, f.Cause)
		}
	}
}

// TestPastedProbeKillIsTheRoot: a pasted describe's events carry no field path, yet the
// kubelet's "Container web failed liveness probe, will be restarted" names the container,
// so a 137 exit is the probe's kill (probe stage), not an unexplained SIGKILL (runtime).
func TestPastedProbeKillIsTheRoot(t *testing.T) {
	rep := analyzeTestdata(t, "probe-kill-pasted", "describe.txt")
	root := firstRoot(rep)
	if root == nil {
		t.Fatalf("no root finding: %v", rep.Findings)
	}
	if root.Rule != "probe-liveness-restarts" || root.Stage != analyze.StageProbe {
		t.Errorf("root %s %s: %s, want probe-liveness-restarts at probe", root.Stage, root.Rule, root.Cause)
	}
	for _, f := range rep.Findings {
		if f.Rule == "runtime-crash-exit" {
			t.Errorf("the liveness kill is also read as a crash: %s", f.Cause)
		}
	}
}

// TestARunningContainerWhoseRunFailsAgainKeepsItsStartFailure: runc 1.1 and later start
// the process before the exec that fails, so a status caught between the start and the
// exit shows the container running; its current log already holds the previous run's
// "exec format error", so the start failure is not history.
func TestARunningContainerWhoseRunFailsAgainKeepsItsStartFailure(t *testing.T) {
	paste := "$ kubectl describe pod app -n shop\nName:         app\nNamespace:    shop\nNode:         node-1/10.0.0.5\nStatus:       Running\n" +
		"Containers:\n  app:\n    Image:          example.com/app:1\n    State:          Running\n      Started:      Mon, 07 Dec 2026 01:16:44 +0000\n" +
		"    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n      Started:      Mon, 07 Dec 2026 01:15:21 +0000\n" +
		"      Finished:     Mon, 07 Dec 2026 01:15:21 +0000\n    Ready:          True\n    Restart Count:  5\n" +
		"$ kubectl logs app -n shop --previous\nexec /server: exec format error\n"
	for _, c := range []struct {
		name, current, root string
	}{
		{"the current run failed the same way", "exec /server: exec format error\n", "start-exec-format-error"},
		{"the current run got past the start", "listening on :8080\n", "runtime-crash-exit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := analyzePaste(t, map[string][]byte{"ticket.md": []byte(paste + "$ kubectl logs app -n shop\n" + c.current)})
			if root := firstRoot(rep); root == nil || root.Rule != c.root {
				t.Errorf("root %v, want %s", root, c.root)
			}
		})
	}
}
