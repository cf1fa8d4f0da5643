package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// serveInBackground runs podflow serve until the returned stop is called; stop returns
// its exit code and stderr.
func serveInBackground(t *testing.T, args ...string) (kubeconfig string, stop func() (int, string)) {
	return serveUntil(t, nil, args...)
}

// serveUntil is serveInBackground whose stop cancels with stopCause (a signal's, say).
func serveUntil(t *testing.T, stopCause error, args ...string) (kubeconfig string, stop func() (int, string)) {
	t.Helper()
	kubeconfig = filepath.Join(t.TempDir(), "serve.kubeconfig")
	ctx, cancel := context.WithCancelCause(context.Background())
	var out bytes.Buffer
	var errOut syncBuffer
	code := make(chan int, 1)
	// serve says when it is ready: no polling for the kubeconfig, no clock.
	ready := make(chan struct{})
	ctx = withServeReady(ctx, func(string) { close(ready) })
	go func() {
		code <- run(ctx, append([]string{"serve", "--kubeconfig-out", kubeconfig}, args...),
			streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}()
	stopped := false
	stop = func() (int, string) {
		cancel(stopCause)
		c := <-code
		stopped = true
		return c, errOut.String()
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	select {
	case <-ready:
		return kubeconfig, stop
	case c := <-code:
		stopped = true
		t.Fatalf("podflow serve exited with %d before it was ready: %s", c, errOut.String())
	}
	return "", nil
}

func clientFromKubeconfig(t *testing.T, path string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestServeBundleUntilStopped(t *testing.T) {
	kubeconfig, stop := serveInBackground(t, filepath.Join("..", "..", "testdata", "bundles", "demo"))
	if st, err := os.Stat(kubeconfig); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v (%v), want 0600: it holds the token", st.Mode().Perm(), err)
	}
	cs := clientFromKubeconfig(t, kubeconfig)
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods: %v (%d)", err, len(pods.Items))
	}
	if err := cs.CoreV1().Pods(pods.Items[0].Namespace).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("delete: %v, want MethodNotAllowed", err)
	}
	// A watch the client keeps open does not keep the server from stopping.
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	code, stderr := stop()
	if code != exitOK {
		t.Fatalf("exit %d after stop: %s", code, stderr)
	}
	if !strings.Contains(stderr, "server stopped") || !strings.Contains(stderr, "127.0.0.1:") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the server still answers after it stopped")
	}
}

// TestServeImportedFormats serves what other tools wrote, imported as analyze imports
// it: a must-gather, a Troubleshoot support bundle, a cluster-info dump and a pasted
// kubectl describe. The pod is listed, fetched by name, and its events are found with
// the selector kubectl describe sends.
func TestServeImportedFormats(t *testing.T) {
	rec := filepath.Join("..", "..", "testdata", "bundles", "crash-exit-1")
	res := filepath.Join(rec, "cluster-resources")
	mustGather := copyTree(t, map[string]string{
		"must-gather.local.1/image/timestamp":                                      filepath.Join(rec, "version.yaml"),
		"must-gather.local.1/image/cluster-scoped-resources/core/nodes/nodes.yaml": filepath.Join(res, "nodes.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/core/pods.yaml":         filepath.Join(res, "pods", "crash-exit-1.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/core/events.yaml":       filepath.Join(res, "events", "crash-exit-1.json"),
	})
	troubleshoot := copyTree(t, map[string]string{
		"support-bundle/cluster-resources/nodes.json":               filepath.Join(res, "nodes.json"),
		"support-bundle/cluster-resources/pods/crash-exit-1.json":   filepath.Join(res, "pods", "crash-exit-1.json"),
		"support-bundle/cluster-resources/events/crash-exit-1.json": filepath.Join(res, "events", "crash-exit-1.json"),
		"support-bundle/cluster-resources/pods/logs/crash-exit-1/worker-89b5c5d5-chzvn/worker.log": filepath.Join(res, "pods", "logs", "crash-exit-1",
			"worker-89b5c5d5-chzvn", "worker.log"),
	})
	if err := os.WriteFile(filepath.Join(troubleshoot, "support-bundle", "version.yaml"),
		[]byte("apiVersion: troubleshoot.sh/v1beta2\nkind: SupportBundle\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, input, format string
	}{
		{"must-gather", mustGather, "must-gather"},
		{"troubleshoot", troubleshoot, "auto"},
		{"cluster-info-dump", writeDump(t), "cluster-info-dump"},
		{"pasted describe", filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed"), "auto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig, _ := serveInBackground(t, tc.input, "--format", tc.format)
			cs := clientFromKubeconfig(t, kubeconfig)
			ctx := context.Background()
			pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			if err != nil || len(pods.Items) == 0 {
				t.Fatalf("pods: %v (%d)", err, len(pods.Items))
			}
			p := pods.Items[0]
			if _, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			events, err := cs.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name +
				",involvedObject.namespace=" + p.Namespace + ",involvedObject.kind=Pod,involvedObject.uid=" + string(p.UID)})
			if err != nil || len(events.Items) == 0 {
				t.Errorf("events of %s/%s: %v (%d)", p.Namespace, p.Name, err, len(events.Items))
			}
		})
	}
}

func TestServeKubeconfigOnStdout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var errOut syncBuffer
	done := make(chan int, 1)
	ready := make(chan struct{})
	go func() {
		done <- run(withServeReady(ctx, func(string) { close(ready) }),
			[]string{"serve", filepath.Join("..", "..", "testdata", "bundles", "demo")},
			streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}()
	// The kubeconfig is printed before the server says it is ready.
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("exit %d before serving: %s", code, errOut.String())
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	cfg, err := clientcmd.Load(out.Bytes())
	if err != nil {
		t.Fatalf("stdout is not a kubeconfig: %v\n%s", err, out.String())
	}
	ctxCfg := cfg.Contexts[cfg.CurrentContext]
	if ctxCfg == nil || !strings.HasPrefix(cfg.Clusters[ctxCfg.Cluster].Server, "https://127.0.0.1:") || len(cfg.AuthInfos[ctxCfg.AuthInfo].Token) != 64 {
		t.Errorf("kubeconfig:\n%s", out.String())
	}
}

func TestServeUsage(t *testing.T) {
	if code, _, _ := runPodflow(t, "serve"); code != exitUsage {
		t.Errorf("no input: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runPodflow(t, "serve", "--port", "70000", "x"); code != exitUsage {
		t.Errorf("bad port: exit %d, want %d", code, exitUsage)
	}
	if code, _, stderr := runPodflow(t, "serve", filepath.Join(t.TempDir(), "missing.tar.gz")); code != exitError {
		t.Errorf("missing input: exit %d, want %d: %s", code, exitError, stderr)
	}
}

func TestServeSaysWhenThereIsNothingToServe(t *testing.T) {
	node := copyTree(t, map[string]string{
		"nodes/podflow-node/kubelet.log": filepath.Join("..", "..", "testdata", "bundles", "demo", "nodes", "podflow-node", "kubelet.log"),
	})
	_, stop := serveInBackground(t, node)
	code, stderr := stop()
	if code != exitOK || !strings.Contains(stderr, "the inputs hold no API objects") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestServeShellRunsOneCommandAgainstTheBundle(t *testing.T) {
	t.Setenv("SHELL", "/bin/sh")
	paste := filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", paste, "-c", `cat "$KUBECONFIG"; echo "at=$KUBECONFIG"; exit 7`},
		streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != 7 {
		t.Fatalf("exit %d, want the command's 7\nstderr: %s", code, errOut.String())
	}
	cfg, err := clientcmd.Load(out.Bytes()[:bytes.LastIndex(out.Bytes(), []byte("at="))])
	if err != nil {
		t.Fatalf("the command saw no kubeconfig: %v\n%s", err, out.String())
	}
	ctxName := cfg.CurrentContext
	if cfg.Contexts[ctxName] == nil || !strings.HasPrefix(cfg.Clusters[cfg.Contexts[ctxName].Cluster].Server, "https://127.0.0.1:") {
		t.Fatalf("kubeconfig %+v", cfg)
	}
	// The paste is about one pod: its namespace is the context's.
	cs := clientcmd.NewDefaultClientConfig(*cfg, nil)
	ns, _, err := cs.Namespace()
	if err != nil || ns == "default" || ns == "" {
		t.Errorf("context namespace %q (%v), want the pasted pod's", ns, err)
	}
	at := strings.TrimSpace(out.String()[bytes.LastIndex(out.Bytes(), []byte("at="))+3:])
	if _, err := os.Stat(at); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig %s outlived the server (%v)", at, err)
	}
	// Status 0 is podflow's 0.
	out.Reset()
	if code := run(context.Background(), []string{"serve", paste, "-c", "true"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != 0 {
		t.Errorf("exit %d after a command that succeeded", code)
	}
}

// TestServeStopsCleanlyOnSignal: Ctrl-C is serve's normal end, so it exits 0, where a
// command doing work that a signal lands on exits 130.
func TestServeStopsCleanlyOnSignal(t *testing.T) {
	_, stop := serveUntil(t, &interruptedError{signal: syscall.SIGINT}, filepath.Join("..", "..", "testdata", "bundles", "demo"))
	if c, errOut := stop(); c != exitOK {
		t.Errorf("serve stopped by SIGINT exits %d, want %d: %s", c, exitOK, errOut)
	}
}
