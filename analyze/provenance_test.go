package analyze_test

import (
	"reflect"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// importedBundle is a bundle as an import writes it: produced files plus an import
// report naming, for each, the original file, its line offset and the lines items
// start on.
func importedBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	journal := `2026-11-29T10:00:01+0000 n1 kubelet[9]: I1129 10:00:01.000000       9 kubelet.go:1] "ok" pod="shop/a"` + "\n" +
		"2026-11-29T10:00:0\n"
	return memBundle(t, map[string]any{
		"cluster-resources/pods/shop.json":                         list(podObj("shop", "a", "n1", nil), obj{"metadata": obj{"namespace": "shop"}}),
		"cluster-resources/pods/ops.json":                          list(podObj("ops", "b", "n1", nil)),
		bundle.LogPath("shop", "a", "app", false):                  "starting\npanic: boom\n",
		bundle.FragmentPath(bundle.FragmentText, "ticket-L12.txt"): "first\nsecond\nthird\n",
		bundle.NodePath("n1", bundle.NodeKubeletLog):               journal,
		bundle.ImportReportPath: bundle.ImportReport{Version: bundle.ImportReportVersion, Format: "loose", Input: "ticket",
			NotCarried: []string{"kubelet configuration"},
			Files: []bundle.ImportedFile{
				{Path: "broken.yaml", Detected: "YAML objects", Status: bundle.ImportUnreadable, Reason: "line 3: bad indentation"},
				{Path: "ticket.txt", Detected: "describe pod", Status: bundle.ImportUsed},
			},
			Origins: map[string]bundle.Origin{
				// describe output: an item's line is known, a pointer means nothing there
				"cluster-resources/pods/shop.json": {Path: "ticket.txt", ItemLines: []int{40, 50}},
				// a dump's own List: pointers keep their meaning
				"cluster-resources/pods/ops.json":                          {Path: "dump/ops/pods.json", ItemLines: []int{3}, SameShape: true},
				bundle.LogPath("shop", "a", "app", false):                  {Path: "ticket.txt", LineOffset: 100},
				bundle.FragmentPath(bundle.FragmentText, "ticket-L12.txt"): {Path: "ticket.txt", LineOffset: 11},
				bundle.NodePath("n1", bundle.NodeKubeletLog):               {Path: "sos/journal", LineOffset: 7},
			}},
	})
}

func TestLoadStampsImportedLocationsWithTheirOrigin(t *testing.T) {
	g := analyze.Load([]*bundle.Bundle{importedBundle(t)}, nil)
	a, b := g.FindPod("shop", "a"), g.FindPod("ops", "b")
	if a == nil || b == nil {
		t.Fatal("pods did not load")
	}
	for _, c := range []struct {
		got  analyze.Location
		want string
	}{
		{a.Loc, "ticket.txt:40"},
		{a.Loc.At("status", "phase"), "ticket.txt:40"},
		{b.Loc, "dump/ops/pods.json:3#/items/0"},
		{b.Loc.At("status"), "dump/ops/pods.json:3#/items/0/status"},
	} {
		if c.got.String() != c.want {
			t.Errorf("location %s, want %s", c.got, c.want)
		}
	}
	if ev := a.Loc.At("spec").Evidence("x", g.CollectedAt()); ev.Locator != "40" || ev.Path != "ticket.txt" {
		t.Errorf("evidence cites %s (locator %q), want ticket.txt:40", ev.Location, ev.Locator)
	}

	lines := map[string]string{}
	for _, l := range g.Lines() {
		lines[l.Text] = l.Evidence().Location.String()
	}
	for text, want := range map[string]string{
		"panic: boom": "ticket.txt:102", // line 2 of the log, 100 lines into the ticket
		"second":      "ticket.txt:13",  // line 2 of the fragment that starts at line 12
		"ok":          "sos/journal:8",
	} {
		if lines[text] != want {
			t.Errorf("line %q cited at %q, want %s", text, lines[text], want)
		}
	}

	want := []analyze.Warning{
		{Path: "ticket.txt", Line: 50, Message: "pod without metadata.name"},
		{Path: "sos/journal", Line: 9, Message: "1 unreadable line(s), first at line 2: unreadable timestamp"},
		{Path: "ticket", Message: "imported as loose; evidence this input does not hold: kubelet configuration"},
		{Path: "broken.yaml", Message: "not imported, YAML objects unreadable: line 3: bad indentation"},
	}
	if got := g.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %#v\nwant %#v", got, want)
	}
}

// Evidence from two places of the produced files stays two pieces of evidence even
// where both cite the same original line: the report groups by where evidence is.
func TestImportedEvidenceKeepsItsPlaceInTheBundle(t *testing.T) {
	g := analyze.Load([]*bundle.Bundle{importedBundle(t)}, nil)
	rep := analyze.Run(g, []*analyze.Rule{{
		ID: "two-fields", Stage: analyze.StageRuntime, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
		Run: func(v *analyze.View) []analyze.Finding {
			p := v.Pod("shop", "a")
			return []analyze.Finding{{Subjects: []analyze.ObjectRef{p.Ref()}, Cause: "c", Remediation: "r",
				Evidence: []analyze.Evidence{
					p.Loc.At("status").Evidence("pod a", v.CollectedAt()),
					p.Loc.At("spec").Evidence("pod a", v.CollectedAt()),
					p.Loc.At("spec").Evidence("pod a", v.CollectedAt()),
				}}}
		},
	}}, analyze.Options{})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	var cited []string
	for _, e := range rep.Findings[0].Evidence {
		cited = append(cited, e.Location.String())
	}
	if got := strings.Join(cited, ", "); got != "ticket.txt:40, ticket.txt:40" {
		t.Errorf("evidence cites %s, want the status and the spec of pod a, both at ticket.txt:40", got)
	}
}

func TestSeveralBundlesStampEachWithItsOwnOrigins(t *testing.T) {
	imported := importedBundle(t)
	imported.Source = "ticket"
	own := memBundle(t, map[string]any{"cluster-resources/pods/shop.json": list(podObj("shop", "c", "n1", nil))})
	g := analyze.Load([]*bundle.Bundle{imported, own}, nil)
	if got := g.FindPod("shop", "a").Loc.String(); got != "ticket!ticket.txt:40" {
		t.Errorf("imported pod at %s, want ticket!ticket.txt:40", got)
	}
	if got := g.FindPod("shop", "c").Loc.String(); got != "mem!cluster-resources/pods/shop.json:/items/0" {
		t.Errorf("collected pod at %s, want its bundle path", got)
	}
	ws := g.Warnings()
	if n := len(ws); n < 2 || ws[n-2].Bundle != "ticket" || ws[n-1].Path != "broken.yaml" {
		t.Errorf("the import's own warnings do not close the list, labelled: %+v", ws)
	}
}

func TestUnreadableImportReportIsAWarning(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(podObj("shop", "a", "n1", nil)),
		bundle.ImportReportPath:            "{not json",
	})
	if got := g.FindPod("shop", "a").Loc.String(); got != "cluster-resources/pods/shop.json:/items/0" {
		t.Errorf("pod at %s, want its bundle path", got)
	}
	if ws := g.Warnings(); len(ws) != 1 || ws[0].Path != bundle.ImportReportPath || !strings.Contains(ws[0].Message, "imported originals") {
		t.Errorf("warnings = %+v, want one on %s", ws, bundle.ImportReportPath)
	}
}
