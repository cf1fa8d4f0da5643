package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// copyBundle copies a recorded fixture so a test may damage it.
func copyBundle(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "b")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p) // p is under src by construction
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestVerifyIntactAndDamaged(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	if code, out, errOut := runPodflow(t, "verify", b); code != exitOK || !strings.Contains(out, "intact") {
		t.Fatalf("intact bundle: exit %d\n%s%s", code, out, errOut)
	}
	pods := filepath.Join(b, filepath.FromSlash(bundle.NamespacedResourcePath(bundle.KindPods, "oom-killed")))
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods, append(data, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "stray.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "verify", b)
	if code != exitError || !strings.Contains(out, "size: cluster-resources/pods/oom-killed.json") ||
		!strings.Contains(out, "extra: stray.txt") || !strings.Contains(errOut, "2 problem(s)") {
		t.Fatalf("damaged bundle: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestInspectSummarizes(t *testing.T) {
	b := filepath.Join("..", "..", "testdata", "bundles", "oom-killed")
	code, out, errOut := runPodflow(t, "inspect", b, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s bundle.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("inspect -o json is not a summary: %v\n%s", err, out)
	}
	if s.Kinds[bundle.KindPods] != 1 || strings.Join(s.Namespaces, ",") != "oom-killed" || strings.Join(s.Nodes, ",") != "podflow-gpu-node,podflow-node" || strings.Join(s.NodeEvidence, ",") != "podflow-node" || s.FormatVersion != bundle.FormatVersion {
		t.Fatalf("summary = %+v", s)
	}
	code, out, _ = runPodflow(t, "inspect", b)
	if code != exitOK || !strings.Contains(out, "Namespaces:  oom-killed") || !strings.Contains(out, "Sources:") {
		t.Fatalf("text summary: exit %d\n%s", code, out)
	}
	if code, _, _ := runPodflow(t, "inspect", b, "-o", "xml"); code != exitUsage {
		t.Fatalf("unknown output: exit %d, want %d", code, exitUsage)
	}
}
