package analyze

import (
	"path/filepath"
	"reflect"
	"testing"
)

// recordedBundles are the recorded bundles of testdata/bundles, ten or more.
func recordedBundles(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	if len(dirs) < 10 {
		t.Fatalf("only %d recorded bundles", len(dirs))
	}
	return dirs
}

// loadTroubleOnly loads a recorded bundle as analyze does (LoadOptions.TroubleOnly).
func loadTroubleOnly(t *testing.T, dir string) *Graph {
	t.Helper()
	return loadRecordedWith(t, dir, LoadOptions{TroubleOnly: true})
}

// The runs of a quiet pod are left out of the facts and made when asked: every
// recorded bundle, loaded as analyze loads it, yields the runs containerRunFacts would
// have kept for every pod, and ContainerRun finds each of them.
func TestRunsMadeAgainEqualTheKeptOnes(t *testing.T) {
	rule := &Rule{ID: "test", Needs: Needs{Optional: []Kind{Pods, Events, KubeletJournal, RuntimeJournal, CRI, ContainerLogs, Dmesg}}}
	madeAgain := 0
	for _, dir := range recordedBundles(t) {
		g := loadTroubleOnly(t, dir)
		v := newView(g, rule)
		var got []ContainerRun
		for r := range v.ContainerRuns() {
			got = append(got, r)
		}
		byID := g.runtimeLinesByID()
		var want []ContainerRun
		for _, p := range g.pods {
			want = g.appendRuns(want, p, Containers(p), byID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ContainerRuns yields %d runs unlike the %d made at once", filepath.Base(dir), len(got), len(want))
		}
		for _, w := range want {
			if r, ok := v.ContainerRun(w.Subject.Pod, w.Container.Name); !ok || r.Container.Name != w.Container.Name || r.Subject.Pod != w.Subject.Pod {
				t.Errorf("%s: ContainerRun does not find %s of %s", filepath.Base(dir), w.Container.Name, w.Subject.Name)
			}
		}
		madeAgain += len(want) - len(v.factsOf().runs)
	}
	if madeAgain == 0 {
		t.Error("no recorded bundle has a quiet pod whose runs are made when asked")
	}
}
