package main

import (
	"math"
	"runtime/metrics"
	"testing"
)

// The collector's target keeps a third of a large heap as headroom, at least 64 MB
// for a smaller one, never more than Go's default doubling, and at most 96 MB (but
// a tenth) once a third is more.
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
		{272 << 20, evidenceGCPercent},
		{288 << 20, 33},
		{384 << 20, 25},
		{512 << 20, 18},
		{1 << 30, evidenceGCPercentMin},
		{4 << 30, evidenceGCPercentMin},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// While the live heap is large the process's memory is held near the collector's
// goal; a smaller analysis runs without a limit.
func TestMemoryLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, math.MaxInt64},
		{64 << 20, math.MaxInt64},
		{128 << 20, math.MaxInt64},
		{272 << 20, int64(272<<20*135/100) + int64(272<<20*135/100)/evidenceLimitSlack},
		{512 << 20, int64(512<<20*118/100) + int64(512<<20*118/100)/evidenceLimitSlack},
		{4 << 30, int64(4<<30*110/100) + int64(4<<30*110/100)/evidenceLimitSlack},
	} {
		if got := memoryLimitFor(c.live, gcPercentFor(c.live)); got != c.want {
			t.Errorf("memoryLimitFor(%d MB) = %d MB, want %d MB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

func TestAnalyzeCollectsTheEvidenceBeforeRendering(t *testing.T) {
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	if code, out, errOut := runPodflow(t, "analyze", fixture("runtime-oom-killed", "fires-memory-limit"), "--fail-on", "none"); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if after := forced(); after == before {
		t.Error("the analysis rendered its report without collecting the evidence first")
	}
}
