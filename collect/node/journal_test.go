package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

const kubeletLines = `2026-11-29T10:01:02+0000 worker-1 kubelet[812]: E1129 10:01:02.123456     812 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with CrashLoopBackOff" pod="shop/web-1" podUID="6f1c"
2026-11-29T10:01:03+0000 worker-1 kubelet[812]: I1129 10:01:03.000001     812 kubelet.go:2465] "SyncLoop (PLEG): event for pod" pod="shop/web-1"
`

// readCollection reads the collection record of worker-1, the node every test collects.
func readCollection(t *testing.T, b *bundle.Bundle) Collection {
	t.Helper()
	data, err := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeCollection))
	if err != nil {
		t.Fatal(err)
	}
	var c Collection
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("collection.json: %v", err)
	}
	return c
}

func stepsFor(c Collection, source string) []Step {
	var out []Step
	for _, s := range c.Steps {
		if s.Source == source {
			out = append(out, s)
		}
	}
	return out
}

func TestKubeletJournalFallsBackToIdentifier(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl -u kubelet":    stdout("-- No entries --\n"),
		"journalctl -t kubelet":    stdout(kubeletLines),
		"journalctl -u containerd": stdout("2026-11-29T10:00:00+0000 worker-1 containerd[500]: time=\"2026-11-29T10:00:00Z\" level=info msg=\"starting containerd\"\n"),
	}}
	opts := testOptions(t, r)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, err := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeKubeletLog))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != kubeletLines {
		t.Errorf("kubelet.log = %q, want the identifier query's output", got)
	}
	if src := sourceOf(t, b.Manifest, SourceKubeletJournal); src.Status != bundle.StatusOK || src.Error != "" ||
		!slices.Equal(src.Files, []string{"nodes/worker-1/kubelet.log"}) {
		t.Errorf("kubelet source = %+v", src)
	}
	if src := sourceOf(t, b.Manifest, SourceRuntimeJournal); src.Status != bundle.StatusOK {
		t.Errorf("runtime source = %+v", src)
	}

	steps := stepsFor(readCollection(t, b), SourceKubeletJournal)
	if len(steps) != 2 {
		t.Fatalf("kubelet steps = %+v, want the unit query then the identifier query", steps)
	}
	since := strconv.FormatInt(testClock.Add(-DefaultSince).Unix(), 10)
	wantFirst := []string{"journalctl", "-u", "kubelet", "-o", "short-iso", "--no-pager", "--since", "@" + since, "--root", opts.HostRoot}
	if !slices.Equal(steps[0].Command, wantFirst) {
		t.Errorf("first command = %q, want %q", steps[0].Command, wantFirst)
	}
	if steps[0].Used || steps[0].ExitCode == nil || *steps[0].ExitCode != 0 {
		t.Errorf("unit step = %+v, want an unused step with exit code 0", steps[0])
	}
	if !steps[1].Used || steps[1].Command[1] != "-t" || steps[1].Bytes != int64(len(kubeletLines)) || steps[1].Note == "" {
		t.Errorf("identifier step = %+v", steps[1])
	}
}

func TestJournalMissingFallsBackToLogFile(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	opts.KubeletLogFile = "/var/log/kubelet.log"
	writeHostFile(t, opts.HostRoot, "var/log/kubelet.log", "I1129 10:00:00.000000     812 server.go:487] \"Kubelet version\" kubeletVersion=\"v1.37.2\"\n")
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeKubeletLog))
	mustContain(t, "kubelet.log", string(got), `"Kubelet version"`)
	if src := sourceOf(t, b.Manifest, SourceKubeletJournal); src.Status != bundle.StatusOK {
		t.Errorf("kubelet source = %+v, want ok from the file", src)
	}
	rt := sourceOf(t, b.Manifest, SourceRuntimeJournal)
	if rt.Status != bundle.StatusFailed {
		t.Errorf("runtime source = %+v, want failed", rt)
	}
	mustContain(t, "runtime error", rt.Error, "journalctl is not installed", "no log file configured")
	if b.Has(bundle.NodePath("worker-1", bundle.NodeRuntimeLog)) {
		t.Error("containerd.log written although nothing was found")
	}
	// journalctl missing once means the identifier query is not tried.
	steps := stepsFor(readCollection(t, b), SourceKubeletJournal)
	if len(steps) != 2 || steps[0].Error == "" || steps[1].Read != filepath.Join(opts.HostRoot, "var/log/kubelet.log") || !steps[1].Used {
		t.Errorf("kubelet steps = %+v", steps)
	}
}

func TestJournalWithNoEntriesIsSkipped(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl": stdout("-- Journal begins at Mon 2026-11-02 08:00:00 UTC, ends at Sun 2026-11-29 10:14:00 UTC. --\n-- No entries --\n"),
	}}
	opts := testOptions(t, r)
	opts.RuntimeLogFile = "/var/log/containerd.log"
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rt := sourceOf(t, res.Manifest, SourceRuntimeJournal)
	if rt.Status != bundle.StatusSkipped {
		t.Fatalf("runtime source = %+v, want skipped", rt)
	}
	mustContain(t, "runtime reason", rt.Error, "journal -u containerd: no entries since 2026-11-28T10:15:00Z",
		"journal -t containerd: no entries", "no log file at "+filepath.Join(opts.HostRoot, "var/log/containerd.log"))
}

func TestJournalNoEntriesWithNonZeroExitIsEmptyNotFailed(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl -u kubelet": {out: Output{Stdout: []byte("-- No entries --\n"), ExitCode: 1}},
		"journalctl -t kubelet": stdout(kubeletLines),
	}}
	res, err := Collect(context.Background(), testOptions(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if src := sourceOf(t, res.Manifest, SourceKubeletJournal); src.Status != bundle.StatusOK {
		t.Errorf("kubelet source = %+v", src)
	}
}

func TestJournalErrorIsFailedWithStderr(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl -u kubelet": {out: Output{Stderr: []byte("Failed to open journal: Permission denied\n"), ExitCode: 1}},
		"journalctl -t kubelet": {out: Output{Stderr: []byte("Failed to open journal: Permission denied\n"), ExitCode: 1}},
	}}
	res, err := Collect(context.Background(), testOptions(t, r))
	if err != nil {
		t.Fatal(err)
	}
	src := sourceOf(t, res.Manifest, SourceKubeletJournal)
	if src.Status != bundle.StatusFailed {
		t.Fatalf("kubelet source = %+v, want failed", src)
	}
	mustContain(t, "error", src.Error, "journal -u kubelet: exit code 1: Failed to open journal: Permission denied")
	if !slices.ContainsFunc(res.Incomplete(), func(s bundle.Source) bool { return s.Name == SourceKubeletJournal }) {
		t.Errorf("Incomplete() = %+v, want the kubelet journal", res.Incomplete())
	}
}

func TestJournalByteCapKeepsNewestWholeLines(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("2026-11-29T10:00:%02d+0000 worker-1 kubelet[1]: line %02d", i, i))
	}
	full := strings.Join(lines, "\n") + "\n"
	r := &fakeRunner{answers: map[string]fakeAnswer{"journalctl -u kubelet": stdout(full)}}
	opts := testOptions(t, r)
	opts.MaxLogBytes = 200
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeKubeletLog))
	if len(got) > 200 || !strings.HasSuffix(full, string(got)) || !strings.HasPrefix(string(got), "2026-") {
		t.Fatalf("kubelet.log = %q, want whole newest lines within 200 bytes", got)
	}
	mustContain(t, "kubelet.log", string(got), "line 19")
	steps := stepsFor(readCollection(t, b), SourceKubeletJournal)
	if steps[0].TruncatedBytes != int64(len(full)-len(got)) {
		t.Errorf("truncatedBytes = %d, want %d", steps[0].TruncatedBytes, len(full)-len(got))
	}
}

func TestKeepTail(t *testing.T) {
	for _, tc := range []struct {
		in      string
		max     int64
		want    string
		dropped int64
	}{
		{"a\nb\nc\n", 0, "a\nb\nc\n", 0},
		{"a\nb\nc\n", 10, "a\nb\nc\n", 0},
		{"aaa\nbbb\nccc\n", 8, "bbb\nccc\n", 4}, // cut on a boundary keeps the line
		{"aaa\nbbb\nccc\n", 6, "ccc\n", 8},      // cut mid-line drops the fragment
		{"aaaaaaaaaaaa", 4, "aaaa", 8},          // one long line: a fragment beats nothing
		{"aaa\nbbbbbbbbbb\n", 5, "bbbb\n", 10},  // only a fragment fits
		{"", 5, "", 0},
	} {
		got, dropped := keepTail([]byte(tc.in), tc.max)
		if string(got) != tc.want || dropped != tc.dropped {
			t.Errorf("keepTail(%q, %d) = %q, %d; want %q, %d", tc.in, tc.max, got, dropped, tc.want, tc.dropped)
		}
	}
}

func TestTailBufferKeepsLastBytes(t *testing.T) {
	tb := &tailBuffer{max: 10}
	var all strings.Builder
	for i := range 50 {
		s := fmt.Sprintf("%d,", i)
		all.WriteString(s)
		if _, err := tb.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	want := all.String()[all.Len()-10:]
	if string(tb.Bytes()) != want || tb.dropped != int64(all.Len()-10) {
		t.Fatalf("tail = %q dropped %d, want %q dropped %d", tb.Bytes(), tb.dropped, want, all.Len()-10)
	}
	big := strings.Repeat("x", 25) + "0123456789"
	if _, err := tb.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	if string(tb.Bytes()) != "0123456789" {
		t.Fatalf("after a large write tail = %q", tb.Bytes())
	}
}

func TestReadTailOfLargeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kubelet.log")
	content := "first line\nsecond line\nthird line\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, dropped, err := readTail(p, 15)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "third line\n" || dropped != int64(len(content)-len("third line\n")) {
		t.Fatalf("readTail = %q, %d", got, dropped)
	}
	got, dropped, err = readTail(p, 1000)
	if err != nil || string(got) != content || dropped != 0 {
		t.Fatalf("readTail whole = %q, %d, %v", got, dropped, err)
	}
	if _, _, err := readTail(filepath.Dir(p), 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("readTail of a directory: %v", err)
	}
}

func TestExecRunnerReportsExitCodeAndMissingCommand(t *testing.T) {
	r := ExecRunner{MaxStdout: 4}
	out, err := r.Run(context.Background(), "sh", "-c", "printf 'hello world'; echo oops >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 3 || string(out.Stdout) != "orld" || out.Dropped != 7 || strings.TrimSpace(string(out.Stderr)) != "oops" {
		t.Fatalf("out = %+v (stdout %q)", out, out.Stdout)
	}
	if _, err := r.Run(context.Background(), "podflow-no-such-command"); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("missing command: %v, want exec.ErrNotFound", err)
	}
}
