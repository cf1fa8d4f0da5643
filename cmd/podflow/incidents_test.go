package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// The incident corpus is the test suite of podflow's diagnosis on evidence as real
// tickets carry it: every folder of testdata/incidents is a public incident whose cause
// its thread confirmed. These are the bars the corpus must clear, set a little under
// what podflow reaches today (stage 99%, cause 97% of 299 cases) so that nothing falls back:
// 97% of stages, the cause at 93%, fewer than 5% of cases whose root no rule or
// signature explains, and a finding for every case.
const (
	minIncidents      = 200
	minStageAccuracy  = 0.97
	minCauseAccuracy  = 0.93
	maxNoFinding      = 0
	maxUnexplainedPct = 0.05
)

// corpusDir is the incident corpus, relative to this package.
var corpusDir = filepath.Join("..", "..", "testdata", "incidents")

// incidentsDir is the folder TestIncidents scores: the corpus, or the folder named by
// PODFLOW_INCIDENTS (`make incidents INCIDENTS=DIR`), so that anyone can score their own
// incident folders with the same code. The bars hold only for the corpus.
func incidentsDir() (dir string, corpus bool) {
	dir = os.Getenv("PODFLOW_INCIDENTS")
	if dir == "" {
		return corpusDir, true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, false
	}
	corpusAbs, err := filepath.Abs(corpusDir)
	return dir, err == nil && abs == corpusAbs
}

// scoreDir reads the incident folders under dir and scores each with every rule and
// signature.
func scoreDir(t *testing.T, dir string) ([]*incidentCase, []caseResult, []string) {
	t.Helper()
	cases, err := readCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := selectRules(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	results, failures := scoreCases(t, cases, catalog)
	return cases, results, failures
}

// TestIncidents runs podflow over every incident of the corpus and checks, per case,
// the root finding's stage, rule and cause mentions; it fails when accuracy falls
// under the bars or any case yields no finding. `make incidents` prints the table;
// `make incidents INCIDENTS=DIR` prints it, and the cases missed, for the incident
// folders under DIR and checks no bar.
func TestIncidents(t *testing.T) {
	dir, corpus := incidentsDir()
	cases, results, failures := scoreDir(t, dir)
	rows := stageTable(results)
	var b strings.Builder
	writeStageTable(&b, rows)
	t.Logf("incident corpus %s, %d cases:\n%s", dir, len(cases), b.String())
	if len(failures) > 0 {
		t.Logf("cases not diagnosed as expected:\n  %s", strings.Join(failures, "\n  "))
	}
	if corpus {
		checkBars(t, cases, rows)
	}
}

// scoreCases runs every case and says, one line each, the cases whose root is not the
// expected one; a case whose evidence cannot be read fails t.
func scoreCases(t *testing.T, cases []*incidentCase, catalog []*analyze.Rule) ([]caseResult, []string) {
	t.Helper()
	var results []caseResult
	var failures []string
	for _, c := range cases {
		r := runCase(c, catalog)
		results = append(results, r)
		name := filepath.Base(c.Dir)
		switch {
		case r.Err != nil:
			t.Errorf("%s: %v", name, r.Err)
		case r.Root == nil:
			failures = append(failures, fmt.Sprintf("%s: no finding (want %s %s)", name, c.Stage, c.Rule))
		case !r.CauseOK:
			failures = append(failures, fmt.Sprintf("%s: want %s %s %q, got %s %s: %s", name, c.Stage, c.Rule,
				c.CauseMentions, r.Root.Stage, r.Root.Rule, r.Root.Cause))
		}
	}
	return results, failures
}

// checkBars fails t when the corpus's results fall under the bars.
func checkBars(t *testing.T, cases []*incidentCase, rows []stageRow) {
	t.Helper()
	total := rows[len(rows)-1]
	if total.Cases < minIncidents && os.Getenv("PODFLOW_INCIDENTS_PARTIAL") == "" {
		t.Errorf("the corpus holds %d cases, want at least %d", total.Cases, minIncidents)
	}
	if total.NoFind > maxNoFinding {
		t.Errorf("%d cases yield no finding, at most %d may", total.NoFind, maxNoFinding)
	}
	if got := float64(total.StageOK) / float64(total.Cases); got < minStageAccuracy {
		t.Errorf("stage accuracy %.1f%%, want at least %.0f%%", 100*got, 100*minStageAccuracy)
	}
	if got := float64(total.CauseOK) / float64(total.Cases); got < minCauseAccuracy {
		t.Errorf("cause accuracy %.1f%%, want at least %.0f%%", 100*got, 100*minCauseAccuracy)
	}
	if got := float64(total.Unexplained) / float64(total.Cases); got >= maxUnexplainedPct {
		t.Errorf("%d cases (%.1f%%) have an unexplained root, want fewer than %.0f%%", total.Unexplained, 100*got, 100*maxUnexplainedPct)
	}
	expectUnexplained := 0
	for _, c := range cases {
		if c.Rule == analyze.UnexplainedRule {
			expectUnexplained++
		}
	}
	if got := float64(expectUnexplained) / float64(total.Cases); got >= maxUnexplainedPct {
		t.Logf("%d cases (%.1f%%) expect an unexplained root; the catalog should know them", expectUnexplained, 100*got)
	}
}

// TestIncidentsDirOverride checks that PODFLOW_INCIDENTS chooses the folder scored and
// that the bars hold for the corpus only, however its path is spelled.
func TestIncidentsDirOverride(t *testing.T) {
	t.Setenv("PODFLOW_INCIDENTS", "")
	if dir, corpus := incidentsDir(); dir != corpusDir || !corpus {
		t.Errorf("without PODFLOW_INCIDENTS: got %q corpus=%v, want %q corpus=true", dir, corpus, corpusDir)
	}
	own := t.TempDir()
	t.Setenv("PODFLOW_INCIDENTS", own)
	if dir, corpus := incidentsDir(); dir != own || corpus {
		t.Errorf("PODFLOW_INCIDENTS=%s: got %q corpus=%v, want the folder and corpus=false", own, dir, corpus)
	}
	abs, err := filepath.Abs(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PODFLOW_INCIDENTS", abs+string(filepath.Separator))
	if _, corpus := incidentsDir(); !corpus {
		t.Errorf("PODFLOW_INCIDENTS=%s names the corpus: got corpus=false", abs)
	}
}

// TestScoreOwnIncidents scores a folder outside the corpus, as `make incidents
// INCIDENTS=DIR` does: a case podflow diagnoses and one it misses, each counted.
func TestScoreOwnIncidents(t *testing.T) {
	dir := t.TempDir()
	write := func(name, caseYAML, file, evidence string) {
		t.Helper()
		sub := filepath.Join(dir, name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, caseFile), []byte(caseYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, file), []byte(evidence), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	events := "  Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n"
	write("001-cpu", "source: https://example.com/1\nestablished: no node has the cpu the pod requests\n"+
		"stage: scheduling\nrule: scheduling-insufficient-resources\ncause_mentions: [\"Insufficient cpu\"]\n",
		"events.txt", events)
	write("002-wrong-stage", "source: https://example.com/2\nestablished: a case whose expectation podflow does not meet\n"+
		"stage: termination\nrule: termination-finalizers-stuck\ncause_mentions: [\"finalizer\"]\n",
		"events.txt", events)
	// A case may name the signature that reads the message for the rule the report
	// names: the same cause.
	write("003-by-signature", "source: https://example.com/3\nestablished: no node has the cpu the pod requests\n"+
		"stage: scheduling\nrule: scheduling-insufficient-resources-message\ncause_mentions: [\"Insufficient cpu\"]\n",
		"events.txt", events)
	t.Setenv("PODFLOW_INCIDENTS", dir)
	got, corpus := incidentsDir()
	if corpus {
		t.Fatalf("PODFLOW_INCIDENTS=%s is taken for the corpus", dir)
	}
	_, results, failures := scoreDir(t, got)
	rows := stageTable(results)
	total := rows[len(rows)-1]
	if total.Cases != 3 || total.StageOK != 2 || total.CauseOK != 2 {
		t.Errorf("scored %d cases, %d at the right stage, %d with the right cause; want 3, 2 and 2:\n%v",
			total.Cases, total.StageOK, total.CauseOK, rows)
	}
	if len(failures) != 1 || !strings.HasPrefix(failures[0], "002-wrong-stage: ") {
		t.Errorf("misses %q, want only 002-wrong-stage", failures)
	}
}
