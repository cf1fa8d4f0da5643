package rules

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// An analysis that lets go of the lines of evidence text before the pods' reports are
// built (Options.LastRun) reports the same as one that keeps them, with the whole
// catalog and the floor on, for every test bundle; and an analysis of the same graph
// after it makes them again and reports the same too.
func TestTheLastRunReportsTheSame(t *testing.T) {
	user, err := LoadSignatures(nil)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := Catalog(user)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "bundles", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no test bundles: %v", err)
	}
	report := func(g *analyze.Graph, last bool) string {
		t.Helper()
		rep := analyze.Run(g, catalog, analyze.Options{Unexplained: true, Timelines: true, LastRun: last})
		data, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			load := func() *analyze.Graph {
				b, err := bundle.Open(dir, bundle.DefaultLimits())
				if err != nil {
					t.Fatal(err)
				}
				return analyze.Load([]*bundle.Bundle{b}, nil)
			}
			want := report(load(), false)
			g := load()
			if got := report(g, true); got != want {
				t.Errorf("the last run reports otherwise:\n%s\nwant\n%s", got, want)
			}
			if got := report(g, false); got != want {
				t.Errorf("a run after the last reports otherwise:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
