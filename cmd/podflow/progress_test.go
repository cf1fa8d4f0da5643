package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/collect/node"
)

// largeBundle is the demo bundle with a sparse log that takes it past largeInput.
func largeBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "large")
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "testdata", "bundles", "demo"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy demo bundle: %v\n%s", err, out)
	}
	f, err := os.Create(filepath.Join(dir, "nodes", "podflow-node", "padding.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(largeInput + 1); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestProgressOnlyOnATerminalAndNeverOnStdout(t *testing.T) {
	large := largeBundle(t)
	analyzeOn := func(errTTY bool, args ...string) (string, string) {
		var out, errOut bytes.Buffer
		run(context.Background(), append([]string{"analyze", "--fail-on", "none", "-o", "json"}, args...),
			streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, ErrTTY: errTTY})
		return out.String(), errOut.String()
	}
	plainOut, plainErr := analyzeOn(false, large)
	if strings.Contains(plainErr, "rules") {
		t.Errorf("progress when stderr is not a terminal:\n%s", plainErr)
	}
	ttyOut, ttyErr := analyzeOn(true, large)
	for _, want := range []string{"read large (50 MB)", "decode", "rules"} {
		if !strings.Contains(ttyErr, want) {
			t.Errorf("stderr on a terminal lacks %q:\n%s", want, ttyErr)
		}
	}
	if ttyOut != plainOut {
		t.Error("progress changed stdout")
	}
	if _, quietErr := analyzeOn(true, "-q", large); strings.Contains(quietErr, "rules") {
		t.Errorf("progress despite -q:\n%s", quietErr)
	}
	// A small input shows its progress only once its work has lasted progressDelay.
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = time.Hour
	if _, smallErr := analyzeOn(true, filepath.Join("..", "..", "testdata", "bundles", "demo")); strings.Contains(smallErr, "rules") {
		t.Errorf("progress for a small bundle before its delay:\n%s", smallErr)
	}
	progressDelay = 0
	if _, smallErr := analyzeOn(true, filepath.Join("..", "..", "testdata", "bundles", "demo")); !strings.Contains(smallErr, "rules") {
		t.Errorf("no progress for a small bundle whose work outlasted the delay:\n%s", smallErr)
	}
}

// runOn runs podflow with stderr taken for a terminal or not (ErrTTY is the forced
// terminal of the tests) and returns its exit code, stdout and stderr.
func runOn(errTTY bool, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, ErrTTY: errTTY})
	return code, out.String(), errOut.String()
}

// TestWriteProgressOnlyOnATerminal drives collect, redact and convert with stderr a
// terminal, then piped, then with -q: the display (a line per finished source with its
// file count, bars with counts) shows only in the first case, and stdout is the same.
func TestWriteProgressOnlyOnATerminal(t *testing.T) {
	kubeconfig := writeKubeconfig(t, fakeAPI(t, false))
	demo := filepath.Join("..", "..", "testdata", "bundles", "demo")
	dump := writeDump(t)
	cases := []struct {
		name string
		args func(out string) []string
		// shown is what the display holds; silent is the part that must not be there
		// without it.
		shown  []string
		silent string
	}{
		{"collect", func(out string) []string { return []string{"collect", "--kubeconfig", kubeconfig, "-o", out} },
			[]string{"sources", "pods/shop", "logs/shop/web-1/app", " files"}, " files"},
		{"redact", func(out string) []string { return []string{"redact", demo, "-o", out} },
			[]string{"redact", " files"}, " files"},
		{"convert", func(out string) []string { return []string{"convert", dump, "-o", out} },
			[]string{"import ", "write"}, "write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, ttyOut, ttyErr := runOn(true, tc.args(filepath.Join(dir, "tty.tar.gz"))...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, ttyErr)
			}
			for _, want := range tc.shown {
				if !strings.Contains(ttyErr, want) {
					t.Errorf("stderr on a terminal lacks %q:\n%s", want, ttyErr)
				}
			}
			code, pipedOut, pipedErr := runOn(false, tc.args(filepath.Join(dir, "piped.tar.gz"))...)
			if code != exitOK || strings.Contains(pipedErr, tc.silent) {
				t.Errorf("piped: exit %d, progress on stderr:\n%s", code, pipedErr)
			}
			code, _, quietErr := runOn(true, append(tc.args(filepath.Join(dir, "quiet.tar.gz")), "-q")...)
			if code != exitOK || strings.Contains(quietErr, tc.silent) {
				t.Errorf("-q: exit %d, progress on stderr:\n%s", code, quietErr)
			}
			if strings.ReplaceAll(ttyOut, "tty", "piped") != pipedOut {
				t.Errorf("progress changed stdout: %q vs %q", ttyOut, pipedOut)
			}
		})
	}
}

func TestCollectNodeProgressOnlyOnATerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		s, _, errOut := testStreams()
		s.ErrTTY = tty
		_, g := newRootCmd(s)
		g.logger.SetOutput(errOut)
		root := t.TempDir()
		o := &collectNodeOptions{globalOptions: g, node: node.Options{
			NodeName: "w1", HostRoot: root, Since: time.Hour, MaxLogBytes: 1 << 20, StepTimeout: time.Minute,
			Runner: journalOnlyRunner{}, KmsgPath: filepath.Join(root, "kmsg"), Target: filepath.Join(t.TempDir(), "node.tar.gz"),
		}}
		_ = runCollectNode(context.Background(), o) // exit 4: the runtime and dmesg are missing
		shown := strings.Contains(errOut.String(), "node sources") && strings.Contains(errOut.String(), "5/5") &&
			strings.Contains(errOut.String(), "kubelet")
		if shown != tty {
			t.Errorf("stderr a terminal: %v; progress shown: %v:\n%s", tty, shown, errOut.String())
		}
	}
}

// TestProgressByPods: analyze counts the pods it reads, on the display of a terminal,
// as log lines with -v when stderr is not one, and not at all with -q or in a pipe
// without -v. The counts are the bundle's pods (the demo has 5).
func TestProgressByPods(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "bundles", "demo")
	defer func(d time.Duration, every int) { progressDelay, podLogEvery = d, every }(progressDelay, podLogEvery)
	progressDelay, podLogEvery = 0, 2
	_, ttyOut, ttyErr := runOn(true, "analyze", "--fail-on", "none", "-o", "json", demo)
	if !strings.Contains(ttyErr, "pods") || !strings.Contains(ttyErr, "5 pods") {
		t.Errorf("no pod count on a terminal:\n%s", ttyErr)
	}
	_, _, verboseErr := runOn(false, "analyze", "--fail-on", "none", "-o", "json", "-v", demo)
	for _, want := range []string{"analyze: 2 pods read", "analyze: 4 pods read", "analyze: 5 pods read in all"} {
		if !strings.Contains(verboseErr, want) {
			t.Errorf("-v in a pipe lacks %q:\n%s", want, verboseErr)
		}
	}
	_, plainOut, plainErr := runOn(false, "analyze", "--fail-on", "none", "-o", "json", demo)
	if strings.Contains(plainErr, "pods read") {
		t.Errorf("pod counts in a pipe without -v:\n%s", plainErr)
	}
	if plainOut != ttyOut {
		t.Error("the pod count changed stdout")
	}
	if _, _, quietErr := runOn(true, "analyze", "--fail-on", "none", "-o", "json", "-q", demo); strings.Contains(quietErr, "pods") {
		t.Errorf("pod count despite -q:\n%s", quietErr)
	}
}
