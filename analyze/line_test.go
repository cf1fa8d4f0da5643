package analyze

import (
	"testing"
	"unsafe"
)

// A line of evidence text is made of every journal entry and every event not about a
// healthy pod (200k at 20k pods), and all are held while the rules run: what it was
// read from is one pointer, not one field per source, and its kind is a byte.
func TestLineStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Line{}); n > 40 {
		t.Errorf("a line takes %d bytes, want at most 40", n)
	}
}

// A line's kind is kept as a byte and read back as the kind it was made with.
func TestLineKindRoundTrips(t *testing.T) {
	for _, k := range append([]TextKind{""}, TextKinds...) {
		if got := (&Line{kind: textKindOf(k)}).Kind(); got != k {
			t.Errorf("a line made with kind %q reads %q", k, got)
		}
	}
}

// An analysis of 20k pods holds 150k journal entries from the load to the report.
func TestJournalEntryStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(JournalEntry{}); n > 136 {
		t.Errorf("a journal entry takes %d bytes, want at most 136", n)
	}
}
