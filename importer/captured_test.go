package importer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCapturedPastesDiagnoseAsTheBundle reads testdata/captured/<scenario>/ticket.txt:
// what kubectl (get pods -o wide, describe pods, get events) and crictl (ps -a, pods)
// really printed about a scenario on the test bed, each behind its `$ command` prompt, as a
// user pastes it into a ticket (PODFLOW_CAPTURE=1 or PODFLOW_RECORD=1 writes them). The
// paste must give the root cause podflow finds in its own recorded bundle of the scenario:
// same rule, stage and pods.
func TestCapturedPastesDiagnoseAsTheBundle(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "captured", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no captured pastes under testdata/captured (%v)", err)
	}
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // the README
		}
		scenario := filepath.Base(dir)
		t.Run(scenario, func(t *testing.T) {
			want := podDiagnosis(diagnosis(analyzeBundles(t, openScenario(t, scenario))))
			b := importLooseDir(t, dir)
			if got := podDiagnosis(diagnosis(analyzeBundles(t, b))); got != want {
				t.Errorf("diagnosis differs\npaste:\n%s\npodflow bundle:\n%s", got, want)
			}
		})
	}
}
