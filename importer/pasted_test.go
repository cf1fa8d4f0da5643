package importer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPastedTicketsDiagnoseAsTheBundle reads testdata/pasted/<scenario>/: the describe,
// events and describe services output the test bed's paste check diagnoses, with and
// without headers. Each must give the root cause podflow finds in its own recorded
// bundle of the scenario: same rule, stage and subjects other than pods and their
// owners (a Deployment's pods are named anew each run), none for a healthy one.
func TestPastedTicketsDiagnoseAsTheBundle(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "pasted", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no pasted tickets under testdata/pasted (%v)", err)
	}
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // the README
		}
		scenario := filepath.Base(dir)
		want := diagnosis(analyzeBundles(t, openScenario(t, scenario)), workloadKinds...)
		for _, variant := range []string{"ticket.txt", "ticket-no-headers.txt"} {
			t.Run(scenario+"/"+variant, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join(dir, variant))
				if err != nil {
					t.Fatal(err)
				}
				b, rep := importDir(t, map[string][]byte{variant: data}, FormatLoose)
				for _, f := range rep.Files {
					if f.Status != StatusUsed {
						t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
					}
				}
				if got := diagnosis(analyzeBundles(t, b), workloadKinds...); got != want {
					t.Errorf("diagnosis differs\npaste:\n%s\npodflow bundle:\n%s", got, want)
				}
			})
		}
	}
}

// workloadKinds are the subjects whose names change from run to run.
var workloadKinds = []string{"Pod", "ReplicaSet", "Deployment"}
