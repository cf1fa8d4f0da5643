package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	if _, smallErr := analyzeOn(true, filepath.Join("..", "..", "testdata", "bundles", "demo")); strings.Contains(smallErr, "rules") {
		t.Errorf("progress for a small bundle:\n%s", smallErr)
	}
}
