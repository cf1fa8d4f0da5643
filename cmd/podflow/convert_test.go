package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDump writes a small `kubectl cluster-info dump` directory: one node, one pod in
// CrashLoopBackOff with its log, and an events list.
func writeDump(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "bundles", "crash-exit-1", "cluster-resources")
	return copyTree(t, map[string]string{
		"nodes.json":               filepath.Join(src, "nodes.json"),
		"crash-exit-1/pods.json":   filepath.Join(src, "pods", "crash-exit-1.json"),
		"crash-exit-1/events.json": filepath.Join(src, "events", "crash-exit-1.json"),
	})
}

func TestConvertThenAnalyzeCitesOriginal(t *testing.T) {
	dump := writeDump(t)
	out := filepath.Join(t.TempDir(), "converted.tar.gz")
	code, stdout, stderr := runPodflow(t, "convert", dump, "-o", out)
	if code != exitOK || strings.TrimSpace(stdout) != out {
		t.Fatalf("convert exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runPodflow(t, "verify", out); code != exitOK {
		t.Fatalf("converted bundle does not verify: %s%s", stdout, stderr)
	}
	for _, input := range []string{dump, out} {
		code, stdout, stderr := runPodflow(t, "analyze", input, "-o", "json", "--fail-on", "none")
		if code != exitOK {
			t.Fatalf("analyze %s: exit %d: %s", input, code, stderr)
		}
		var rep struct {
			Findings []struct {
				Rule     string
				Root     bool
				Evidence []struct{ Path, Locator string }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range rep.Findings {
			if f.Rule != "runtime-crash-exit" || !f.Root {
				continue
			}
			found = true
			for _, e := range f.Evidence {
				if strings.HasPrefix(e.Path, "cluster-resources/") {
					t.Errorf("%s: evidence cites produced path %s:%s", input, e.Path, e.Locator)
				}
			}
		}
		if !found {
			t.Errorf("%s: no root runtime-crash-exit finding in\n%s", input, stdout)
		}
	}
}

func TestConvertAndAnalyzeUsage(t *testing.T) {
	dump := writeDump(t)
	unknown := t.TempDir()
	// Text is always read as pasted evidence; only empty or binary input is undetectable.
	if err := os.WriteFile(filepath.Join(unknown, "core"), []byte("\x7fELF\x00\x00\x01\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The recorded scenario names its pod after a generated suffix: read it, so
	// re-recording keeps the test meaningful.
	logs, err := os.ReadDir(filepath.Join("..", "..", "testdata", "bundles", "crash-exit-1", "cluster-resources", "pods", "logs", "crash-exit-1"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("recorded crash-exit-1 bundle has no pod logs: %v", err)
	}
	pod := "crash-exit-1/" + logs[0].Name()
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no output", []string{"convert", dump}, exitUsage},
		{"unknown format", []string{"convert", dump, "-o", filepath.Join(t.TempDir(), "x.tar.gz"), "--format", "supportconfig"}, exitUsage},
		{"analyze unknown format", []string{"analyze", dump, "--format", "supportconfig"}, exitUsage},
		{"undetectable input", []string{"analyze", unknown}, exitError},
		{"forced format", []string{"analyze", dump, "--format", "cluster-info-dump", "--fail-on", "none"}, exitOK},
		{"explain imported", []string{"explain", dump, pod}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runPodflow(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
		})
	}
}
