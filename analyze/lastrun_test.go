package analyze

import (
	"path/filepath"
	"testing"

	"podflow.dev/podflow/bundle"
)

// The last analysis of a graph (Options.LastRun) lets go of its lines once the rules
// and the floor have read them; another keeps them for the next.
func TestTheLastRunLetsTheLinesGo(t *testing.T) {
	b, err := bundle.Open(filepath.Join("..", "testdata", "bundles", "demo"), bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	g := Load([]*bundle.Bundle{b}, nil)
	Run(g, nil, Options{Unexplained: true})
	if len(g.lines) == 0 {
		t.Fatal("an analysis with the floor made no lines")
	}
	Run(g, nil, Options{Unexplained: true, LastRun: true})
	if g.lines != nil || g.sigIndex.lines != nil || g.paragraphOf != nil {
		t.Errorf("the last run kept %d lines", len(g.lines))
	}
}
