package analyze

import (
	"testing"
	"unsafe"
)

// A line of evidence text is made of every journal entry and every event not about a
// healthy pod (200k at 20k pods), and all are held while the rules run: what it was
// read from is one pointer, not one field per source.
func TestLineStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Line{}); n > 56 {
		t.Errorf("a line takes %d bytes, want at most 56", n)
	}
}

// An analysis of 20k pods holds 150k journal entries from the load to the report.
func TestJournalEntryStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(JournalEntry{}); n > 136 {
		t.Errorf("a journal entry takes %d bytes, want at most 136", n)
	}
}
