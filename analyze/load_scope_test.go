package analyze_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

// A scoped load skims what only other namespaces hold, and the scoped report is the
// one a full load gives, byte for byte: for every namespace and every pod of the demo
// bundle (four namespaces, each failing its own way) and of a set of recorded bundles
// loaded together.
func TestScopedLoadReportsTheSame(t *testing.T) {
	cat, err := rules.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]string{
		{"demo"},
		{"crash-exit-1", "node-not-ready", "oom-killed", "service-selector-mismatch", "secret-key-missing", "insufficient-cpu"},
	}
	for _, set := range sets {
		paths := make([]string, len(set))
		for i, name := range set {
			paths[i] = filepath.Join("..", "testdata", "bundles", name)
		}
		full := loadSet(t, paths, "")
		namespaces := map[string]bool{}
		for _, p := range full.PodRefs() {
			namespaces[p.Namespace] = true
		}
		if len(namespaces) < 4 {
			t.Fatalf("%v: %d namespaces, want a bundle of several", set, len(namespaces))
		}
		scopes := []analyze.Options{}
		for ns := range namespaces {
			scopes = append(scopes, analyze.Options{Namespace: ns})
		}
		for _, p := range full.PodRefs() {
			scopes = append(scopes, analyze.Options{Pod: p.Namespace + "/" + p.Name})
		}
		for _, scope := range scopes {
			name := scope.Namespace + scope.Pod
			ns, _, _ := strings.Cut(name, "/")
			want := scopedReport(t, loadSet(t, paths, ""), cat, scope)
			g := loadSet(t, paths, ns)
			if s := g.Scoped(); s == nil || s.Skipped == 0 {
				t.Fatalf("%v %s: the load skimmed nothing: %+v", set, name, s)
			}
			if got := scopedReport(t, g, cat, scope); !bytes.Equal(got, want) {
				t.Errorf("%v %s: the scoped load's report differs from the full load's: %s", set, name, firstDifference(want, got))
			}
		}
	}
}

// firstDifference names the first line where two texts differ, and the line in each.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// loadSet loads the bundles as analyze does: read once, keeping what explains
// trouble, scoped to ns when it is not empty.
func loadSet(t *testing.T, paths []string, ns string) *analyze.Graph {
	t.Helper()
	var bs []*bundle.Bundle
	for _, p := range paths {
		b, err := bundle.OpenReadOnce(context.Background(), p, bundle.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	g, err := analyze.LoadWith(context.Background(), bs, nil, analyze.LoadOptions{TroubleOnly: true, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func scopedReport(t *testing.T, g *analyze.Graph, cat []*analyze.Rule, scope analyze.Options) []byte {
	t.Helper()
	scope.Unexplained, scope.LastRun, scope.Alone = true, true, true
	r := analyze.Run(g, cat, scope)
	var out bytes.Buffer
	if err := analyze.Render(&out, r, analyze.FormatJSON, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
