package main

import "testing"

// The collector's target keeps a third of a large heap as headroom, at least 64 MB
// for a smaller one, and never more than Go's default doubling.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{10 << 20, 100},
		{64 << 20, 100},
		{128 << 20, 50},
		{192 << 20, evidenceGCPercent}, // a third is the headroom
		{400 << 20, evidenceGCPercent},
		{4 << 30, evidenceGCPercent},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}
