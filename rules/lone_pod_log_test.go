package rules

import (
	"strings"
	"testing"
)

// A ticket pastes `kubectl get pods` and, in another file, the crashing container's log
// without saying whose it is. When the evidence holds one pod and its container crashed,
// the log is that container's: the finding names the pod and no second root says the pod
// is broken for reasons nobody knows. With a second pod in the evidence, or a pod that
// runs fine, the log stays nobody's.

// The log line as runc's standard_init_linux.go prints an exec failure (runc v1.0).
const execFormatLog = "standard_init_linux.go:228: exec user process caused: exec format error\n"

func TestALoneCrashedPodOwnsTheUnnamedLog(t *testing.T) {
	getRows := func(rows ...string) string {
		return "$ kubectl get pods\nNAME                        READY   STATUS             RESTARTS   AGE\n" + strings.Join(rows, "\n") + "\n"
	}
	crashing := "shop-api-5d8f7c9b6-x2kq7    0/1     CrashLoopBackOff   12         40m"
	running := "shop-web-6f9d8c7b5-m4pz2    1/1     Running            0          40m"
	cases := []struct {
		name     string
		rows     []string
		joined   bool
		wantRoot int
	}{
		{"one crashing pod", []string{crashing}, true, 1},
		{"two pods", []string{crashing, running}, false, 2},
		{"one running pod", []string{running}, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roots := catalogRoots(t, map[string]string{"pods.txt": getRows(c.rows...), "container.log": execFormatLog})
			var exec *struct{ cause string }
			for _, f := range roots {
				if f.Rule == "start-exec-format-error" {
					exec = &struct{ cause string }{f.Cause}
				}
			}
			if exec == nil {
				t.Fatalf("no start-exec-format-error root among %d roots", len(roots))
			}
			if named := strings.Contains(exec.cause, "shop-api-5d8f7c9b6-x2kq7"); named != c.joined {
				t.Errorf("cause %q names the pod: %v, want %v", exec.cause, named, c.joined)
			}
			if len(roots) != c.wantRoot {
				for _, f := range roots {
					t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
				}
				t.Errorf("%d roots, want %d", len(roots), c.wantRoot)
			}
		})
	}
}

// A ticket pastes a Pending pod's describe cut above its Events and quotes the
// scheduler's message in its own words: the message explains that pod, the one pod of
// the evidence, whose describe shows it unscheduled.
func TestALonePodTakesTheFindingOfItsStage(t *testing.T) {
	describe := `Name:           ingress-lb-92p9s
Namespace:      edge
Priority:       0
Node:           <none>
Labels:         app=ingress-lb
Status:         Pending
IP:
Controlled By:  DaemonSet/ingress-lb
Containers:
  lb-port-80:
    Image:      registry.example/lb:1.0
    Port:       80/TCP
    Host Port:  80/TCP
`
	quote := "The pod stays Pending: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"describe.txt": describe, "ticket.txt": quote}), "scheduling-host-port-conflict", "ingress-lb-92p9s")
	// With a second pod in the evidence, the message stays nobody's.
	other := strings.NewReplacer("ingress-lb-92p9s", "ingress-lb-x7k2q").Replace(describe)
	for _, f := range catalogRoots(t, map[string]string{"describe.txt": describe, "describe-2.txt": other, "ticket.txt": quote}) {
		if f.Rule == "scheduling-host-port-conflict" && strings.Contains(f.Cause, "ingress-lb-92p9s") {
			t.Errorf("with two pods the message was given to one: %s", f.Cause)
		}
	}
}

// runc's exec error names the binary, not the image; a ticket names the image it ran.
// The cause names the one image reference the evidence holds, and none when it holds two.
func TestExecFormatNamesTheOneImageTheTicketNames(t *testing.T) {
	ticket := "After the upgrade the operator pod crashes on our arm64 nodes; it runs quay.io/example/operator:v0.9.0 from the chart.\n\n" +
		"exec /usr/bin/operator: exec format error\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"issue.txt": ticket}), "start-exec-format-error", "quay.io/example/operator:v0.9.0")
	two := "We tried quay.io/example/operator:v0.9.0 and quay.io/example/operator:v0.8.2.\n\nexec /usr/bin/operator: exec format error\n"
	for _, f := range catalogRoots(t, map[string]string{"issue.txt": two}) {
		if strings.Contains(f.Cause, "quay.io/example/operator:v0") {
			t.Errorf("with two images the cause named one: %s", f.Cause)
		}
	}
}

// A module missing from the image (CPython's "ModuleNotFoundError: No module named
// %R") names the one image the evidence shows: the fix is that image's build or tag.
func TestAMissingPythonModuleNamesTheImage(t *testing.T) {
	ticket := "Since the upgrade the hub runs quay.io/example/hub:2.0.0 and crashes at start:\n\n" +
		"Traceback (most recent call last):\n  File \"/srv/hub/config.py\", line 3, in <module>\n    import kubernetes\n" +
		"ModuleNotFoundError: No module named 'kubernetes'\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"issue.txt": ticket}), "runtime-python-import-error", "image quay.io/example/hub:2.0.0")
}

// runc's exec format error says the binary is for another platform; the cause names the
// node's architecture when the evidence names one, and none when it names two.
func TestExecFormatNamesTheArchitectureTheTicketNames(t *testing.T) {
	one := "The pod crash-loops on our new arm64 nodes:\n\nexec /app/server: exec format error\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"issue.txt": one}), "start-exec-format-error", "CPU architecture (arm64)")
	two := "The image is amd64 only and our nodes are arm64:\n\nexec /app/server: exec format error\n"
	for _, f := range catalogRoots(t, map[string]string{"issue.txt": two}) {
		if strings.Contains(f.Cause, "(arm64)") || strings.Contains(f.Cause, "(amd64)") {
			t.Errorf("two architectures, one named: %s", f.Cause)
		}
	}
}
