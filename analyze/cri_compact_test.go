package analyze

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestCRIRecordsMadeAgainEqualTheLoadedOnes loads every recorded bundle as analyze
// does, with the CRI containers and sandboxes held as records and as loaded, and checks
// that every pod's are the same both ways and that records hold nearly all of them.
func TestCRIRecordsMadeAgainEqualTheLoadedOnes(t *testing.T) {
	load := func(dir string, compact bool) *Graph {
		t.Helper()
		defer func(was bool) { compactCRIWhileLoading = was }(compactCRIWhileLoading)
		compactCRIWhileLoading = compact
		return loadTroubleOnly(t, dir)
	}
	records, whole := 0, 0
	for _, dir := range recordedBundles(t) {
		compact, loaded := load(dir, true), load(dir, false)
		for _, p := range loaded.pods {
			uid := string(p.meta.UID)
			got, want := compact.containersOf(uid), loaded.containersOf(uid)
			if len(got) != len(want) {
				t.Errorf("%s: pod %s has %d CRI containers held as records, %d as loaded", filepath.Base(dir), p.meta.Name, len(got), len(want))
				continue
			}
			for j := range got {
				if !reflect.DeepEqual(got[j], want[j]) {
					t.Errorf("%s: pod %s: container %s made again as %+v, loaded as %+v", filepath.Base(dir), p.meta.Name, want[j].ID, *got[j], *want[j])
				}
			}
			if got, want := compact.sandboxesOf(uid), loaded.sandboxesOf(uid); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: pod %s: sandboxes made again unlike the loaded ones", filepath.Base(dir), p.meta.Name)
			}
		}
		for _, r := range compact.sbRecords {
			if r.whole != nil {
				whole++
			} else {
				records++
			}
		}
		for _, r := range compact.contRecords {
			if r.whole != nil {
				whole++
			} else {
				records++
			}
		}
	}
	t.Logf("%d held as records, %d as loaded", records, whole)
	if records == 0 || whole > records/10 {
		t.Errorf("%d CRI containers held as records and %d as loaded, want nearly all as records", records, whole)
	}
}

// TestCRIRecordKeepsWhatItCannotGiveBack checks that a container whose fields a record
// cannot hold exactly (a time in another zone, an attempt past int32, a location
// that is not a crictl ps item) is kept as loaded.
func TestCRIRecordKeepsWhatItCannotGiveBack(t *testing.T) {
	base := Location{Path: "nodes/n1/crictl/ps.json"}
	ok := &CRIContainer{Node: "n1", ID: "c1", PodUID: "uid-a", Name: "app", State: "CONTAINER_RUNNING",
		CreatedAt: time.Unix(1700000000, 5).UTC(), Loc: base.withPointer("/containers/3")}
	zone := *ok
	zone.CreatedAt = time.Unix(1700000000, 5).In(time.FixedZone("x", 3600))
	big := *ok
	big.Attempt = 1 << 40
	other := *ok
	other.Loc = base.withPointer("/items/3")
	c := &criCompactor{g: newGraph(), words: map[string]uint16{}, ps: map[Location]*Location{}}
	if r := c.record(ok); r.whole != nil {
		t.Error("a plain container is kept as loaded")
	}
	for name, cc := range map[string]*CRIContainer{"zone": &zone, "attempt": &big, "location": &other} {
		if r := c.record(cc); r.whole != cc {
			t.Errorf("%s: a container a record cannot give back is not kept as loaded", name)
		}
	}
}
