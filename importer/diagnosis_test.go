package importer

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

// diagnosis renders the root findings of a report: rule, stage and subjects, leaving
// out subjects of the kinds in drop.
func diagnosis(rep *analyze.Report, drop ...string) string {
	var lines []string
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		var subjects []string
		for _, s := range f.Subjects {
			if !slices.Contains(drop, s.Kind) {
				subjects = append(subjects, s.Kind+" "+s.Namespace+"/"+s.Name)
			}
		}
		lines = append(lines, fmt.Sprintf("%s %s [%s]", f.Stage, f.Rule, strings.Join(subjects, ", ")))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func analyzeBundles(t testing.TB, bs ...*bundle.Bundle) *analyze.Report {
	t.Helper()
	g := analyze.Load(bs, nil)
	return analyze.Run(g, rules.All(), analyze.Options{})
}

// analyzePaste imports files as a loose paste and analyzes them with the built-in rules
// and signatures and the unexplained floor, as podflow analyze does.
func analyzePaste(t testing.TB, files map[string][]byte) *analyze.Report {
	t.Helper()
	b, _ := importDir(t, files, FormatLoose)
	catalog, err := rules.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	return analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), catalog, analyze.Options{Unexplained: true})
}

// firstRoot is the report's first root finding, nil when there is none.
func firstRoot(rep *analyze.Report) *analyze.Finding {
	for _, f := range rep.Findings {
		if f.Root {
			return f
		}
	}
	return nil
}

func importDir(t testing.TB, files map[string][]byte, format Format) (*bundle.Bundle, *Report) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	b, rep, err := Open(dir, Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	return b, rep
}

func scenarios(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "bundles", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Base(d))
	}
	return out
}

// notCarried lists scenarios whose deciding evidence a format does not hold, with the
// rule that must then be skipped for want of its input rather than fire or pass silently.
// subjectsNotCarried lists, per format, the kinds of subject a finding can only name
// from objects the format does not hold: a rule still fires from the events, naming
// fewer subjects.
var subjectsNotCarried = map[Format][]string{
	FormatClusterInfoDump: {"LimitRange", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"},
}

var notCarried = map[Format]map[string]string{
	FormatClusterInfoDump: {
		"pvc-unbound":                   "volume-pvc-unbound",            // no PVCs in a dump
		"pvc-no-storageclass":           "volume-pvc-unbound",            // no PVCs in a dump
		"job-backoff-limit":             "controller-job-backoff-limit",  // no Jobs in a dump
		"statefulset-stuck":             "controller-statefulset-stuck",  // no StatefulSets in a dump
		"volume-node-affinity-conflict": "volume-node-affinity-conflict", // no PVCs or PVs in a dump
	},
}

// timeMeasured lists scenarios with a root cause that measures time against the
// collection, which most imported formats do not record (a must-gather's timestamp file
// does): without it the import dates itself by the latest timestamp in the data, so the
// rule rightly stays quiet there, and the rest of the diagnosis must still match.
var timeMeasured = map[string]string{
	"finalizer-stuck":      "termination-finalizers-stuck", // a minute past deletionTimestamp
	"grace-period-overrun": "termination-finalizers-stuck",
}

// without drops a rule's lines from a rendered diagnosis.
func without(diagnosis, rule string) string {
	var keep []string
	for _, l := range strings.Split(diagnosis, "\n") {
		if l != "" && !strings.Contains(l, " "+rule+" [") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestDiagnosisMatchesPodflowBundle(t *testing.T) {
	exports := []struct {
		name   string
		format Format
		files  func(t testing.TB, scenario string) map[string][]byte
	}{
		{"troubleshoot", FormatTroubleshoot, troubleshootExport},
		{"cluster-info-dump-json", FormatClusterInfoDump, func(t testing.TB, s string) map[string][]byte { return clusterInfoDumpExport(t, s, "json") }},
		{"cluster-info-dump-yaml", FormatClusterInfoDump, func(t testing.TB, s string) map[string][]byte { return clusterInfoDumpExport(t, s, "yaml") }},
		{"must-gather", FormatMustGather, mustGatherExport},
	}
	for _, s := range scenarios(t) {
		rep := analyzeBundles(t, openScenario(t, s))
		for _, e := range exports {
			want := diagnosis(rep, subjectsNotCarried[e.format]...)
			t.Run(s+"/"+e.name, func(t *testing.T) {
				b, rep := importDir(t, e.files(t, s), FormatAuto)
				if rep == nil || Format(rep.Format) != e.format {
					t.Fatalf("detected %v, want %s", rep, e.format)
				}
				got := analyzeBundles(t, b)
				if rule, ok := notCarried[e.format][s]; ok {
					if !skipped(got, rule) {
						t.Errorf("%s: rule %s was not skipped for want of input; diagnosis:\n%s", s, rule, diagnosis(got))
					}
					return
				}
				want := want
				if rule, ok := timeMeasured[s]; ok && rep.CollectedAt == nil {
					want = without(want, rule)
				}
				if d := diagnosis(got, subjectsNotCarried[e.format]...); d != want {
					t.Errorf("diagnosis differs\nimport:\n%s\npodflow bundle:\n%s", d, want)
				}
			})
		}
	}
}

func skipped(rep *analyze.Report, rule string) bool {
	for _, s := range rep.Skipped {
		if s.Rule == rule && s.Reason != "" {
			return true
		}
	}
	return false
}
