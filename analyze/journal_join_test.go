package analyze

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// A load that leaves healthy pods' lines out keeps the kubelet journals of every node
// in one list, in file order, as a load that keeps every line does, and in room of
// about its own size: grown by appends, file after file, it held room for up to twice
// its entries for the whole analysis.
func TestTroubleOnlyJournalInRoomOfItsOwnSize(t *testing.T) {
	files := map[string][]byte{}
	for n := range 4 {
		var lines []string
		for i := range 300 {
			lines = append(lines, fmt.Sprintf(`2026-11-29T10:%02d:%02d+0000 n%d kubelet[9]: E1129 10:%02d:%02d.000001       9 pod_workers.go:1301] "Error syncing pod, skipping" err="boom %d" pod="shop/p%d"`,
				i/60, i%60, n, i/60, i%60, i, n))
		}
		files[bundle.NodePath(fmt.Sprintf("n%d", n), bundle.NodeKubeletLog)] = []byte(strings.Join(lines, "\n"))
	}
	got, want := loadFiles(t, files, LoadOptions{TroubleOnly: true}), loadFiles(t, files, LoadOptions{})
	if len(want.journal) != 1200 {
		t.Fatalf("%d entries, want 1200", len(want.journal))
	}
	if !reflect.DeepEqual(got.journal, want.journal) {
		t.Error("the kubelet entries differ from those of a load that keeps every line")
	}
	// Room is rounded up to the allocator's size classes: a few entries at most.
	if spare := cap(got.journal) - len(got.journal); spare > 64 {
		t.Errorf("room for %d entries more than the %d kept", spare, len(got.journal))
	}
}
