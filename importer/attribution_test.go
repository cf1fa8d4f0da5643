package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// TestJournalLinesGoToTheirPod: two pods on one node fail to pull for different
// reasons, and the kubelet's journal holds both. Each pod's root cause must be its own
// (a node journal line belongs to a pod only through its name, UID, sandbox or
// container ID), never the other's.
func TestJournalLinesGoToTheirPod(t *testing.T) {
	rep := analyzeTestdata(t, "attribution", "journal.txt", "pods.txt")
	want := map[string]struct{ own, other string }{
		"api-5d8f9c7b6-abcde": {"registry.example/api:9.9", "private.example"},
		"web-7c6b5d4f3-fghij": {"private.example", "registry.example/api"},
	}
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		for _, s := range f.Pods() {
			w, ok := want[s.Name]
			if !ok {
				continue
			}
			seen[s.Name] = true
			if f.Stage != analyze.StageImage || !strings.Contains(f.Cause, w.own) || strings.Contains(f.Cause, w.other) {
				t.Errorf("pod %s: root %s %s: %s; want its own pull failure (%s), not the other pod's (%s)", s.Name, f.Stage, f.Rule, f.Cause, w.own, w.other)
			}
			for _, e := range f.Evidence {
				if strings.Contains(e.Excerpt, w.other) {
					t.Errorf("pod %s cites the other pod's line: %s", s.Name, e.Excerpt)
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("pod %s has no root finding", name)
		}
	}
}

// analyzeTestdata imports the named files of testdata/DIR as a paste and analyzes them
// with the built-in rules and signatures, as podflow analyze does.
func analyzeTestdata(t *testing.T, dir string, names ...string) *analyze.Report {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return analyzePaste(t, files)
}
