package analyze

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"podflow.dev/podflow/bundle"
)

// A bundle read once lets go of its manifest's lists of files as the load reads the
// manifest; the load reads the same from it (the bundle's time, type, cluster and
// collector) and the report says the same.
func TestABundleReadOnceLetsGoOfItsManifestsFileLists(t *testing.T) {
	load := func(once bool) (*Graph, *bundle.Bundle) {
		t.Helper()
		b, err := bundle.Open(filepath.Join("..", "testdata", "bundles", "demo"), bundle.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Manifest.Files) == 0 || len(b.Manifest.Sources) == 0 || len(b.Manifest.Sources[0].Files) == 0 {
			t.Fatal("the demo bundle's manifest lists no files")
		}
		if once {
			b.ReadOnce()
		}
		return Load([]*bundle.Bundle{b}, nil), b
	}
	g, b := load(true)
	whole, wb := load(false)
	if b.Manifest.Files != nil || b.Manifest.Sources[0].Files != nil {
		t.Errorf("the manifest of a bundle read once keeps its lists of files")
	}
	if wb.Manifest.Files == nil {
		t.Errorf("the manifest of a bundle read again lost its list of files")
	}
	if !reflect.DeepEqual(g.Bundles(), whole.Bundles()) || !g.CollectedAt().Equal(whole.CollectedAt()) || g.ClockSkew() != whole.ClockSkew() ||
		!reflect.DeepEqual(g.identity, whole.identity) {
		t.Errorf("read once the load reads %+v, else %+v", g.Bundles(), whole.Bundles())
	}
	report := func(g *Graph) string {
		data, err := json.Marshal(Run(g, nil, Options{Unexplained: true, Timelines: true}))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got, want := report(g), report(whole); got != want {
		t.Errorf("read once the report is\n%s\nwant\n%s", got, want)
	}
}
