package importer

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// findingsText renders every finding with its cause and the excerpts of its evidence, so
// evidence taken from node files is compared too, whatever file it is cited from.
func findingsText(rep *analyze.Report) string {
	var out []string
	for _, f := range rep.Findings {
		var ex []string
		for _, e := range f.Evidence {
			ex = append(ex, "  "+e.Excerpt)
		}
		sort.Strings(ex)
		out = append(out, fmt.Sprintf("%s root=%t: %s\n%s", f.Rule, f.Root, f.Cause, strings.Join(ex, "\n")))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestSosreportDiagnosis analyzes each scenario's cluster evidence together with a
// sosreport of its node instead of podflow's node bundle: every finding, its cause and
// the excerpts of its evidence must be the same.
func TestSosreportDiagnosis(t *testing.T) {
	for _, s := range scenarios(t) {
		t.Run(s, func(t *testing.T) {
			want := findingsText(analyzeBundles(t, openScenario(t, s)))
			sos, rep := importDir(t, sosreportExport(t, s), FormatAuto)
			if rep.Format != FormatSosreport {
				t.Fatalf("detected %s, want %s", rep.Format, FormatSosreport)
			}
			for _, f := range rep.Files {
				if f.Status == StatusUnreadable || (f.Status == StatusIgnored && strings.HasPrefix(f.Path, sosCommands+"/crio/")) || (f.Status == StatusUsed && f.Reason != "" && f.Detected != "host name") {
					t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
				}
			}
			got := findingsText(analyzeBundles(t, clusterPart(t, s), sos))
			if got != want {
				t.Errorf("findings differ\ncluster + sosreport:\n%s\n\npodflow bundle:\n%s", got, want)
			}
		})
	}
}
