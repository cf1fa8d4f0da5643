package logline

import (
	"testing"
	"unsafe"
)

// An analysis keeps an Entry for each of its journal lines (150k on a generated
// bundle of 20k pods): the small fields share one word.
func TestEntryStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n > 120 {
		t.Errorf("Entry is %d bytes, want at most 120", n)
	}
}
