package analyze

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// entries is the list's entries in one slice, for tests.
func (j *journalList) entries() []JournalEntry {
	var out []JournalEntry
	for _, b := range j.blocks {
		out = append(out, b...)
	}
	return out
}

// A load that leaves healthy pods' lines out keeps the kubelet journals of every node
// in one list, in file order, as a load that keeps every line does, and in room of
// about its own size: grown by appends, file after file, it held room for up to twice
// its entries for the whole analysis. The journals here fill more than one block.
func TestTroubleOnlyJournalInRoomOfItsOwnSize(t *testing.T) {
	const nodes, lines = 4, 3000
	files := map[string][]byte{}
	for n := range nodes {
		var text []string
		for i := range lines {
			text = append(text, fmt.Sprintf(`2026-11-29T10:%02d:%02d+0000 n%d kubelet[9]: E1129 10:%02d:%02d.000001       9 pod_workers.go:1301] "Error syncing pod, skipping" err="boom %d" pod="shop/p%d"`,
				i/60%60, i%60, n, i/60%60, i%60, i, n))
		}
		files[bundle.NodePath(fmt.Sprintf("n%d", n), bundle.NodeKubeletLog)] = []byte(strings.Join(text, "\n"))
	}
	got, want := loadFiles(t, files, LoadOptions{TroubleOnly: true}), loadFiles(t, files, LoadOptions{})
	if want.journal.len() != nodes*lines {
		t.Fatalf("%d entries, want %d", want.journal.len(), nodes*lines)
	}
	if !reflect.DeepEqual(got.journal.entries(), want.journal.entries()) {
		t.Error("the kubelet entries differ from those of a load that keeps every line")
	}
	for i := range got.journal.len() {
		if e := got.journal.at(i); !strings.HasSuffix(e.FieldText, fmt.Sprintf(`err="boom %d" pod="shop/p%d"`, i%lines, i/lines)) {
			t.Fatalf("entry %d is %q", i, e.FieldText)
		}
	}
	// Every block but the last is full, and the last has room for at most as many
	// entries again as it holds.
	room := 0
	for i, b := range got.journal.blocks {
		if i < len(got.journal.blocks)-1 && len(b) != journalBlockLen {
			t.Errorf("block %d of %d holds %d entries", i, len(got.journal.blocks), len(b))
		}
		room += cap(b)
	}
	if last := got.journal.blocks[len(got.journal.blocks)-1]; room > got.journal.len()+len(last) {
		t.Errorf("room for %d entries, %d kept", room, got.journal.len())
	}
}
