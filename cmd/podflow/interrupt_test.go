package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/internal/checkpoint"
)

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// buildPodflow builds the binary once per test process (signals are only seen by a
// real process); -count=N reuses it.
func buildPodflow(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds podflow")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "podflow-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "podflow")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// bigBundle writes a directory bundle, with a manifest: pods and services to load, a
// kubelet journal and container logs, so that each step has many files to work on.
func bigBundle(t *testing.T, dir string, journalLines, logs int) string {
	t.Helper()
	target := filepath.Join(dir, "big")
	w, err := bundle.Create(target, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var j bytes.Buffer
	start := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	for i := range journalLines {
		at := start.Add(time.Duration(i) * time.Millisecond)
		fmt.Fprintf(&j, "%s big-node kubelet[23188]: E%s   23188 pod_workers.go:1301] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"app\\\" with CrashLoopBackOff: \\\"back-off 5m0s restarting failed container=app pod=web-%d_big(uid-%d)\\\"\" pod=\"big/web-%d\" podUID=\"uid-%d\"\n",
			at.Format("2006-01-02T15:04:05-0700"), at.Format("0102 15:04:05.000000"), i%997, i%997, i%997, i%997)
	}
	// Pods and services for analyze to load, so that loading is a step of more than one
	// list; no cluster-wide list, which would conflict with the other bundle of a merge.
	var pods []string
	for i := range 50 {
		pods = append(pods, fmt.Sprintf(`{"metadata":{"name":"web-%d","namespace":"big","uid":"uid-%d"},"spec":{"nodeName":"big-node","containers":[{"name":"app","image":"web:1"}]},"status":{"phase":"Running"}}`, i, i))
	}
	for _, f := range []struct{ path, body string }{
		{bundle.NamespacedResourcePath(bundle.KindPods, "big"), `{"kind":"PodList","apiVersion":"v1","items":[` + strings.Join(pods, ",") + `]}`},
		{bundle.NamespacedResourcePath(bundle.KindServices, "big"), `{"kind":"ServiceList","apiVersion":"v1","items":[]}`},
	} {
		if err := w.WriteFile(f.path, []byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile("nodes/big-node/kubelet.log", j.Bytes()); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("2026-11-29T20:00:00.000000000Z stdout F request served in 12ms path=/api/v1/items status=200\n", 200)
	for i := range logs {
		if err := w.WriteFile(fmt.Sprintf("cluster-resources/pods/logs/big/web-%d/app.log", i), []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&bundle.Manifest{PodflowVersion: "test", CollectedAt: start.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return target
}

type interruptCase struct {
	name   string
	args   []string
	target string // must not exist afterwards; "" when results go to stdout
	signal syscall.Signal
	twice  bool
	// step is the checkpoint podflow waits at for the signal: "read" (reading the
	// input), "load" (analyze building its graph) or "write" (writing the output).
	step string
}

// syncBuffer is a bytes.Buffer that the test reads while the process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runInterrupted starts podflow with a checkpoint armed at tc.step, signals it once
// it waits there (its signal handler is in place by then, and its work is half done),
// and checks that it stops with the signal's exit status, one line on stderr, and
// nothing written. No timing decides the outcome: podflow cannot finish before the
// signal, because it waits at the checkpoint until the signal has cancelled its work.
func runInterrupted(t *testing.T, bin string, tc interruptCase) {
	t.Helper()
	outText, errText, err := signalAtCheckpoint(t, bin, tc.step, tc.signal, tc.twice, tc.args...)
	out, errOut := stringer(outText), stringer(errText)
	want := 128 + int(tc.signal)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != want {
		t.Fatalf("%s: exit %v, want status %d\nstderr:\n%s", tc.name, err, want, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	// A second signal may end podflow before it says anything.
	if !tc.twice && !strings.Contains(lines[len(lines)-1], "interrupted by") {
		t.Errorf("%s: want a last line saying it was interrupted, got:\n%s", tc.name, errOut.String())
	}
	if !tc.twice && !strings.Contains(lines[len(lines)-1], "nothing written") {
		t.Errorf("%s: finished its work after the signal instead of stopping:\n%s", tc.name, errOut.String())
	}
	if out.String() != "" {
		t.Errorf("%s: wrote to stdout after the signal:\n%.500s", tc.name, out.String())
	}
	if tc.target != "" {
		if _, err := os.Lstat(tc.target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s exists after the signal (%v)", tc.name, tc.target, err)
		}
		leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(tc.target), "."+filepath.Base(tc.target)+".partial-*"))
		if len(leftovers) > 0 && !tc.twice {
			t.Errorf("%s: left %v", tc.name, leftovers)
		}
	}
}

func TestSignalStopsLongCommands(t *testing.T) {
	bin := buildPodflow(t)
	dir := t.TempDir()
	big := bigBundle(t, dir, 20_000, 200)
	small := filepath.Join("..", "..", "testdata", "bundles", "oom-killed")
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []interruptCase{
		{name: "analyze", args: []string{"analyze", big, "-o", "json"}, step: "read", signal: syscall.SIGINT},
		{name: "verify", args: []string{"verify", big}, step: "read", signal: syscall.SIGINT},
		{name: "convert", args: []string{"convert", big, "-o", out("converted.tar.gz")}, target: out("converted.tar.gz"), step: "read", signal: syscall.SIGINT},
		{name: "merge", args: []string{"bundle", "merge", big, small, "-o", out("merged.tar.gz")}, target: out("merged.tar.gz"), step: "read", signal: syscall.SIGINT},
		{name: "explain", args: []string{"explain", big, "big/web-1"}, step: "read", signal: syscall.SIGINT},
		{name: "inspect", args: []string{"inspect", big}, step: "read", signal: syscall.SIGINT},
		{name: "scan", args: []string{"scan", big}, step: "read", signal: syscall.SIGINT},
		{name: "redact", args: []string{"redact", big, "-o", out("redacted.tar.gz")}, target: out("redacted.tar.gz"), step: "read", signal: syscall.SIGINT},
		{name: "analyze while loading", args: []string{"analyze", big, "-o", "json"}, step: "load", signal: syscall.SIGINT},
		{name: "explain while loading", args: []string{"explain", big, "big/web-1"}, step: "load", signal: syscall.SIGINT},
		{name: "convert while writing", args: []string{"convert", big, "-o", out("writing.tar.gz")}, target: out("writing.tar.gz"), step: "write", signal: syscall.SIGINT},
		{name: "merge while writing", args: []string{"bundle", "merge", big, small, "-o", out("mwriting")}, target: out("mwriting"), step: "write", signal: syscall.SIGINT},
		{name: "redact while writing", args: []string{"redact", big, "-o", out("rwriting")}, target: out("rwriting"), step: "write", signal: syscall.SIGINT},
		{name: "convert on SIGTERM", args: []string{"convert", big, "-o", out("term")}, target: out("term"), step: "write", signal: syscall.SIGTERM},
		{name: "merge on a second Ctrl-C", args: []string{"bundle", "merge", big, small, "-o", out("twice.tar.gz")}, target: out("twice.tar.gz"), step: "write", signal: syscall.SIGINT, twice: true},
	} {
		t.Run(tc.name, func(t *testing.T) { runInterrupted(t, bin, tc) })
	}
}

// A signal that arrives as a command finishes still ends podflow with the signal's
// status: a script waiting on it must not read success after a Ctrl-C.
func TestSignalAfterTheWorkStillExitsWithItsStatus(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&interruptedError{signal: os.Interrupt})
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"version"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130\nstderr: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "interrupted by SIGINT") {
		t.Errorf("stderr does not say the signal was received: %q", errOut.String())
	}
}

// signalAtCheckpoint starts podflow with a checkpoint armed at step, signals it once it
// waits there (twice when twice is set), and returns how it exited with its stdout and
// stderr. No timing decides the outcome: podflow waits at the checkpoint until the
// signal has cancelled its work. The two-minute bounds only end a run that would hang.
func signalAtCheckpoint(t *testing.T, bin, step string, sig syscall.Signal, twice bool, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "at-checkpoint")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), checkpoint.EnvStep+"="+step, checkpoint.EnvFile+"="+marker)
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			t.Fatalf("%v finished without reaching checkpoint %q (%v)\n%s", args, step, err, errOut.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("%v never reached checkpoint %q\n%s", args, step, errOut.String())
		case <-tick.C:
			if _, err := os.Stat(marker); err == nil {
				break wait
			}
		}
	}
	if err = cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if twice {
		_ = cmd.Process.Signal(sig) // the process may be gone already
	}
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%v still running 2m after %v", args, sig)
	}
	return out.String(), errOut.String(), err
}

// stringer gives captured output the String method the checks call.
type stringer string

func (s stringer) String() string { return string(s) }
