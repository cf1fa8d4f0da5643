package e2e

// This test needs no cluster and no root: it runs the test bed's pinned kubectl against
// podflow serve on a recorded bundle. It is built without the e2e tag so that
//
//	go test ./testbed/e2e -run Serve
//
// runs it alone; e2e.sh runs it before bringing the test bed up. The kubectl binary is
// the one testbed/build-tools.sh builds into the machine cache (PODFLOW_TESTBED_BIN,
// else PODFLOW_CACHE/testbed/bin); podflow is PODFLOW_BIN, else one built from this checkout.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	serveBundle    = "crash-exit-1"
	serveNamespace = "crash-exit-1"
	servePod       = "worker-89b5c5d5-chzvn"
	serveNode      = "podflow-node"
)

func TestServeWithKubectl(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	kubectl := serveKubectlPath(t)
	podflow := servePodflowPath(t, repo)
	bundleDir := filepath.Join(repo, "testdata", "bundles", serveBundle)
	kubeconfig := filepath.Join(t.TempDir(), "bundle.kubeconfig")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, podflow, "serve", bundleDir, "--kubeconfig-out", kubeconfig)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Process.Kill()
			if err := <-exited; err != nil {
				t.Logf("podflow serve, killed: %v", err)
			}
		}
	}()
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("podflow serve exited (%v): %s", err, srvErr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("podflow serve wrote no kubeconfig: %s", srvErr.String())
		}
	}

	kc := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		// No cache of discovery from another server, no user kubeconfig around it.
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		t.Logf("$ kubectl %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
		return out.String(), errOut.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, err := kc(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	wantLines := func(what, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, out)
			}
		}
	}

	// kubectl get pods -A: the namespace column kubectl adds, and the server's columns.
	all := must("get", "pods", "-A")
	header := strings.Fields(firstLine(all))
	if strings.Join(header, " ") != "NAMESPACE NAME READY STATUS RESTARTS AGE" {
		t.Errorf("get pods -A header %v", header)
	}
	pod := readPod(t, filepath.Join(bundleDir, "cluster-resources", "pods", serveNamespace+".json"), servePod)
	wantLines("get pods -A", all, serveNamespace, servePod, fmt.Sprintf("0/%d", len(pod.Spec.Containers)))

	wide := must("get", "pods", "-n", serveNamespace, "-o", "wide")
	wantLines("get pods -o wide", wide, "NODE", "IP", servePod, serveNode, pod.Status.PodIP)

	asJSON := must("get", "pod", "-n", serveNamespace, servePod, "-o", "json")
	var got struct {
		Metadata struct{ UID string }
	}
	if err := json.Unmarshal([]byte(asJSON), &got); err != nil || got.Metadata.UID != pod.Metadata.UID {
		t.Errorf("get pod -o json: uid %q (%v), want %q", got.Metadata.UID, err, pod.Metadata.UID)
	}

	// describe pod: the pod's fields and its events, found with the field selector
	// kubectl sends (involvedObject name, namespace, kind and uid).
	describe := must("describe", "pod", "-n", serveNamespace, servePod)
	wantLines("describe pod", describe, "Name:", servePod, "Node:", serveNode, "Events:", "BackOff", "Started")
	if strings.Contains(describe, "ScalingReplicaSet") {
		t.Error("describe pod shows the deployment's events")
	}

	events := must("get", "events", "-n", serveNamespace, "--field-selector", "involvedObject.name="+servePod)
	rows := strings.Split(strings.TrimSpace(events), "\n")[1:]
	if len(rows) != 5 {
		t.Errorf("events of the pod: %d rows, want 5 (Scheduled, Pulled, Created, Started, BackOff)", len(rows))
	}
	for _, row := range rows {
		if !strings.Contains(row, "pod/"+servePod) {
			t.Errorf("event row not about the pod: %q", row)
		}
	}

	logs := must("logs", "-n", serveNamespace, servePod)
	wantLog := withoutTimestamps(t, filepath.Join(bundleDir, "cluster-resources", "pods", "logs", serveNamespace, servePod, "worker.log"))
	if logs != wantLog {
		t.Errorf("kubectl logs = %q, want %q", logs, wantLog)
	}
	previous := must("logs", "-p", "-n", serveNamespace, servePod)
	wantPrev := withoutTimestamps(t, filepath.Join(bundleDir, "cluster-resources", "pods", "logs", serveNamespace, servePod, "worker-previous.log"))
	if previous != wantPrev || previous == logs {
		t.Errorf("kubectl logs -p = %q, want %q", previous, wantPrev)
	}

	nodes := must("get", "nodes")
	wantLines("get nodes", nodes, "STATUS", "VERSION", serveNode)

	// kubectl explain reads the schema serve publishes (OpenAPI v3, v2 for older clients).
	explain := must("explain", "pods.spec.containers.livenessProbe")
	wantLines("explain", explain, "KIND:", "Pod", "VERSION:", "v1", "FIELD:", "livenessProbe", "<Probe>", "DESCRIPTION:")

	// auth can-i and whoami ask the SelfSubject reviews: reads allowed, writes denied.
	if out, errOut, err := kc("auth", "can-i", "list", "pods", "-n", serveNamespace); err != nil || strings.TrimSpace(out) != "yes" {
		t.Errorf("auth can-i list pods: %q %q %v, want yes", out, errOut, err)
	}
	if out, _, err := kc("auth", "can-i", "delete", "pods", "-n", serveNamespace); err == nil || !strings.HasPrefix(out, "no") {
		t.Errorf("auth can-i delete pods: %q %v, want no (exit 1)", out, err)
	}
	wantLines("auth whoami", must("auth", "whoami"), "Username")

	// v1 Endpoints are derived from the EndpointSlices the bundle holds: the list is
	// served (this scenario has no Service, so it is empty), never 404.
	must("get", "endpoints", "-n", serveNamespace)

	// Writes are refused and nothing changes.
	_, errOut, err := kc("delete", "pod", "-n", serveNamespace, servePod)
	if err == nil || !strings.Contains(errOut, "MethodNotAllowed") {
		t.Errorf("kubectl delete pod: %v, stderr %q; want a MethodNotAllowed error", err, errOut)
	}
	wantLines("get pods after the refused delete", must("get", "pods", "-n", serveNamespace), servePod)

	// A wrong token is refused: kubectl says so for a 401.
	_, errOut, err = kc("--token", "not-the-token", "get", "pods", "-A")
	if err == nil || !strings.Contains(errOut, "You must be logged in to the server") {
		t.Errorf("wrong token: %v, stderr %q; want kubectl's words for 401 Unauthorized", err, errOut)
	}
	_, errOut, err = kc("--token", "not-the-token", "get", "--raw", "/api/v1/namespaces/"+serveNamespace+"/pods")
	if err == nil || !strings.Contains(errOut, "the bearer token is missing or wrong") {
		t.Errorf("wrong token, raw request: %v, stderr %q; want the server's 401 Status", err, errOut)
	}

	// Ctrl-C stops the server cleanly.
	if err := srv.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("podflow serve after SIGINT: %v\n%s", err, srvErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("podflow serve still runs 30s after SIGINT")
	}
}

type servedPod struct {
	Metadata struct{ Name, UID string }
	Spec     struct{ Containers []struct{ Name string } }
	Status   struct{ PodIP string }
}

func readPod(t *testing.T, path, name string) servedPod {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l struct{ Items []servedPod }
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if p.Metadata.Name == name {
			return p
		}
	}
	t.Fatalf("%s holds no pod %s", path, name)
	return servedPod{}
}

// withoutTimestamps is a collected log as kubectl logs prints it: without the
// timestamp kubelet put before each line.
func withoutTimestamps(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if ts, rest, ok := strings.Cut(line, " "); ok {
			if _, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				line = rest
			}
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// serveKubectlPath is the test bed's pinned kubectl. Without it the test is skipped,
// unless PODFLOW_E2E_STRICT=1 (e2e.sh) makes that a failure.
func serveKubectlPath(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PODFLOW_TESTBED_BIN")
	if dir == "" {
		cache := os.Getenv("PODFLOW_CACHE")
		if cache == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				t.Fatalf("locate the cache folder (set PODFLOW_CACHE): %v", err)
			}
			cache = filepath.Join(base, "podflow")
		}
		dir = filepath.Join(cache, "testbed", "bin")
	}
	p := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("PODFLOW_E2E_STRICT") == "1" {
			t.Fatalf("the pinned kubectl is not built (%v): testbed/build-tools.sh builds it", err)
		}
		t.Skipf("the pinned kubectl is not built (%v): testbed/build-tools.sh builds it", err)
	}
	return p
}

// servePodflowPath is the podflow under test: PODFLOW_BIN (make e2e builds it), else
// one built now from this checkout.
func servePodflowPath(t *testing.T, repo string) string {
	t.Helper()
	if p := os.Getenv("PODFLOW_BIN"); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), "podflow")
	cmd := exec.Command("go", "build", "-o", p, "./cmd/podflow")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build podflow: %v\n%s", err, out)
	}
	return p
}
