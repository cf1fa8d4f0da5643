package analyze

import (
	"testing"
	"unsafe"
)

// A quiet event is what a big cluster keeps of most of its events (200k at 20k pods):
// it stays within 48 bytes, what its message, times, count and three indexes take.
func TestQuietEventStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(quietEvent{}); n > 48 {
		t.Errorf("a quiet event takes %d bytes, want at most 48: a field of its own per event belongs in its shape", n)
	}
}
