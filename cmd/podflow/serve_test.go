package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// serveInBackground runs podflow serve until the returned stop is called; stop returns
// its exit code and stderr.
func serveInBackground(t *testing.T, args ...string) (kubeconfig string, stop func() (int, string)) {
	t.Helper()
	kubeconfig = filepath.Join(t.TempDir(), "serve.kubeconfig")
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var errOut syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--kubeconfig-out", kubeconfig}, args...),
			streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}()
	stopped := false
	stop = func() (int, string) {
		cancel()
		c := <-code
		stopped = true
		return c, errOut.String()
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			return kubeconfig, stop
		}
		select {
		case c := <-code:
			t.Fatalf("podflow serve exited with %d before writing its kubeconfig: %s", c, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("podflow serve wrote no kubeconfig")
		}
	}
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

func TestServeImportedPaste(t *testing.T) {
	kubeconfig, _ := serveInBackground(t, filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed"))
	pods, err := clientFromKubeconfig(t, kubeconfig).CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods of a pasted describe: %v (%d)", err, len(pods.Items))
	}
}

func TestServeKubeconfigOnStdout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", filepath.Join("..", "..", "testdata", "bundles", "demo")},
			streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}()
	// The kubeconfig is printed before the server says it listens.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "serving") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
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
