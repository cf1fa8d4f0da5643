package main

import (
	"bytes"
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
	// ready, when set, says from stderr and the file system that podflow reached the
	// step to interrupt; otherwise the signal is sent after a fixed delay.
	ready func(stderr string) bool
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

// partialExists is a ready func: the writer has created its hidden partial of target.
func partialExists(target string) func(string) bool {
	return func(string) bool {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".partial-*"))
		return len(m) > 0
	}
}

// atWork reports whether process pid is reading its input: it has path (or a file
// under it) open, or has read more than a start-up's worth of bytes. Where /proc is
// not there to tell, it says yes.
func atWork(pid int, path string) bool {
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(io), "\n") {
		var n int64
		if _, err := fmt.Sscanf(l, "rchar: %d", &n); err == nil && n > 1<<20 {
			return true
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return true
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && (target == abs || strings.HasPrefix(target, abs+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// runInterrupted starts podflow, signals it once it is at work, and checks that it
// stops with the signal's exit status, one line on stderr, and nothing written.
func runInterrupted(t *testing.T, bin string, tc interruptCase, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, tc.args...)
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(delay)
	if tc.ready != nil {
		deadline = time.After(time.Minute)
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			t.Fatalf("%s finished before the signal (%v): the input is too small to interrupt\n%s", tc.name, err, errOut.String())
		case <-deadline:
			if tc.ready != nil {
				t.Fatalf("%s never got ready to interrupt\n%s", tc.name, errOut.String())
			}
			// On a loaded machine the process may not have reached main yet: wait
			// until it reads its input (its signal handler is in place by then).
			for until := time.Now().Add(time.Minute); !atWork(cmd.Process.Pid, tc.args[1]) && time.Now().Before(until); {
				time.Sleep(2 * time.Millisecond)
			}
			break wait
		case <-tick.C:
			if tc.ready != nil && tc.ready(errOut.String()) {
				break wait
			}
		}
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
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	// A second signal may end podflow before it says anything.
	if !tc.twice && (tc.ready == nil && len(lines) != 1 || !strings.Contains(lines[len(lines)-1], "interrupted by")) {
		t.Errorf("%s: want one line saying it was interrupted, got:\n%s", tc.name, errOut.String())
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
	big := bigBundle(t, dir, 300_000, 5000)
	// A first run loads the binary into the page cache, so that podflow has its signal
	// handler in place well before the signal below.
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil {
		t.Fatalf("podflow version: %v\n%s", err, out)
	}
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
		{name: "analyze while loading", args: []string{"analyze", big, "-v", "-o", "json"}, signal: syscall.SIGINT,
			ready: func(stderr string) bool { return strings.Contains(stderr, "input opened") }},
		{name: "convert while writing", args: []string{"convert", big, "-o", filepath.Join(dir, "writing.tar.gz")}, target: filepath.Join(dir, "writing.tar.gz"), signal: syscall.SIGINT,
			ready: partialExists(filepath.Join(dir, "writing.tar.gz"))},
		{name: "merge while writing", args: []string{"bundle", "merge", big, small, "-o", filepath.Join(dir, "mwriting")}, target: filepath.Join(dir, "mwriting"), signal: syscall.SIGINT,
			ready: partialExists(filepath.Join(dir, "mwriting"))},
		{name: "convert on SIGTERM", args: []string{"convert", big, "-o", filepath.Join(dir, "term")}, target: filepath.Join(dir, "term"), signal: syscall.SIGTERM},
		{name: "merge on a second Ctrl-C", args: []string{"bundle", "merge", big, small, "-o", filepath.Join(dir, "twice.tar.gz")}, target: filepath.Join(dir, "twice.tar.gz"), signal: syscall.SIGINT, twice: true},
	} {
		t.Run(tc.name, func(t *testing.T) { runInterrupted(t, bin, tc, 500*time.Millisecond) })
	}
}
