package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

// buildPodflow builds the binary once per test run: signals are only seen by a real process.
func buildPodflow(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds podflow and works on a large input")
	}
	bin := filepath.Join(t.TempDir(), "podflow")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// bigBundle writes a directory bundle, with a manifest, large enough that reading,
// verifying, loading and writing it each take seconds: a long kubelet journal and many
// container logs.
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
}

// runInterrupted starts podflow, signals it once it is at work, and checks that it
// stops with the signal's exit status, one line on stderr, and nothing written.
func runInterrupted(t *testing.T, bin string, tc interruptCase, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, tc.args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("%s finished before the signal (%v): the input is too small to interrupt\n%s", tc.name, err, errOut.String())
	case <-time.After(delay):
	}
	sent := time.Now()
	if err := cmd.Process.Signal(tc.signal); err != nil {
		t.Fatal(err)
	}
	if tc.twice {
		time.Sleep(20 * time.Millisecond)
		_ = cmd.Process.Signal(tc.signal) // the process may be gone already
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s still running 30s after %v", tc.name, tc.signal)
	}
	took := time.Since(sent)
	t.Logf("%s: exited %v after %v", tc.name, took.Round(time.Millisecond), tc.signal)
	want := 128 + int(tc.signal)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != want {
		t.Fatalf("%s: exit %v, want status %d\nstderr:\n%s", tc.name, err, want, errOut.String())
	}
	if took > 10*time.Second {
		t.Errorf("%s: took %v to stop after %v", tc.name, took, tc.signal)
	}
	if lines := strings.Split(strings.TrimSpace(errOut.String()), "\n"); !tc.twice && (len(lines) != 1 || !strings.Contains(lines[0], "interrupted by")) {
		t.Errorf("%s: want one line saying it was interrupted, got:\n%s", tc.name, errOut.String())
	}
	if out.Len() > 0 {
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
	big := bigBundle(t, dir, 300_000, 3000)
	small := filepath.Join("..", "..", "testdata", "bundles", "oom-killed")
	for _, tc := range []interruptCase{
		{name: "analyze", args: []string{"analyze", big, "-o", "json"}, signal: syscall.SIGINT},
		{name: "verify", args: []string{"verify", big}, signal: syscall.SIGINT},
		{name: "convert", args: []string{"convert", big, "-o", filepath.Join(dir, "converted.tar.gz")}, target: filepath.Join(dir, "converted.tar.gz"), signal: syscall.SIGINT},
		{name: "merge", args: []string{"bundle", "merge", big, small, "-o", filepath.Join(dir, "merged.tar.gz")}, target: filepath.Join(dir, "merged.tar.gz"), signal: syscall.SIGINT},
		{name: "explain", args: []string{"explain", big, "big/web-1"}, signal: syscall.SIGINT},
		{name: "inspect", args: []string{"inspect", big}, signal: syscall.SIGINT},
		{name: "scan", args: []string{"scan", big}, signal: syscall.SIGINT},
		{name: "redact", args: []string{"redact", big, "-o", filepath.Join(dir, "redacted.tar.gz")}, target: filepath.Join(dir, "redacted.tar.gz"), signal: syscall.SIGINT},
		{name: "convert on SIGTERM", args: []string{"convert", big, "-o", filepath.Join(dir, "term")}, target: filepath.Join(dir, "term"), signal: syscall.SIGTERM},
		{name: "merge on a second Ctrl-C", args: []string{"bundle", "merge", big, small, "-o", filepath.Join(dir, "twice.tar.gz")}, target: filepath.Join(dir, "twice.tar.gz"), signal: syscall.SIGINT, twice: true},
	} {
		t.Run(tc.name, func(t *testing.T) { runInterrupted(t, bin, tc, time.Second) })
	}
}
