package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// evidenceGCPercent is the garbage collector's target while an analysis holds the
// evidence: nearly all of it stays live until the report, so collecting when the heap
// has grown by a third instead of doubled (Go's default) keeps the peak near what is
// live. On generated bundles of 1k and 5k pods 35 and 50 measure the same; at 20k pods
// 35 peaks at 0.98 GB instead of 1.06 GB, for 8% more wall time and 18% more CPU.
// GOGC, when set, wins.
const evidenceGCPercent = 35

// evidenceGCHeadroom is the least the heap may grow by between collections while the
// evidence is small: a third of a small heap is a few megabytes, and collecting that
// often was a tenth of the CPU time of an analysis of a thousand pods, to keep a peak
// of about a hundred megabytes. The headroom never exceeds Go's default (the heap
// doubling), and from 192 MB live a third is more than it.
const evidenceGCHeadroom = 64 << 20

// evidenceGCGrowthMax is the most the heap may grow by between collections once a
// third of the live heap is more: past a few hundred megabytes live, a third of it is
// memory the process holds for garbage alone: at 80k pods (about 1 GB live) the peak
// went from 1.45 GB to 1.28 GB, for about a third more CPU time. At 80k pods (now
// about 800 MB live) 96 MB instead of 128 MB took the peak from 985-990 MB to 957 MB,
// for a tenth more CPU time.
// The percent it gives never falls below evidenceGCPercentMin.
// Up to about 275 MB live (20k pods are about 215 MB) the target stays a third.
const evidenceGCGrowthMax = 96 << 20

// evidenceGCPercentMin is the least target evidenceGCGrowthMax gives: a collection
// marks the whole live heap, and below a tenth of it the collections would cost more
// than the memory they save.
const evidenceGCPercentMin = 10

// evidenceLimitSlack is how far above the collector's goal the process's memory may go
// while the live heap is large (the percent at its floor), as a fraction of the goal:
// 1/evidenceLimitSlack. Without a limit Go keeps up to a tenth more than the goal
// mapped, and the room left unfilled in the spans in use and the pages freed and not
// yet returned come on top: at 20k pods the peak RSS was 1.7 times the live heap. A
// soft limit near the goal counts that memory against it, and the scavenger returns
// what is above: at 20k pods (about 360 MB live) the peak went from 625-645 MB to
// 550-560 MB, for a fifth more collections (44 to 54) and 3 to 8% more CPU. A limit of
// the goal itself gave 530 MB for half again as many collections (65). Smaller
// analyses, whose heap may grow by evidenceGCHeadroom, run without a limit; GOMEMLIMIT,
// when set, wins.
const evidenceLimitSlack = 16

var evidenceGCOnce sync.Once

func evidenceGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(evidenceGCPercent)
	evidenceGCOnce.Do(armGCTarget)
}

// gcSentinel is collected by every collection after it is made: its cleanup sets the
// target for the next one from what the last found live, and makes the next sentinel.
type gcSentinel struct{ _ [64]byte }

func armGCTarget() {
	ownLimit := os.Getenv("GOMEMLIMIT") == ""
	runtime.AddCleanup(&gcSentinel{}, func(struct{}) {
		live := liveHeap()
		percent := gcPercentFor(live)
		debug.SetGCPercent(percent)
		if ownLimit {
			debug.SetMemoryLimit(memoryLimitFor(live, percent))
		}
		armGCTarget()
	}, struct{}{})
}

// memoryLimitFor is the soft memory limit for a live heap of live bytes collected at
// percent: none while the heap may grow by more than a third of itself, else the goal
// and 1/evidenceLimitSlack of it.
func memoryLimitFor(live uint64, percent int) int64 {
	if live == 0 || percent > evidenceGCPercent {
		return math.MaxInt64
	}
	goal := live + live*uint64(percent)/100
	return int64(goal + goal/evidenceLimitSlack)
}

// gcPercentFor is the target for a live heap of live bytes: a third of it, or
// evidenceGCHeadroom when that is more, or the heap doubling when that is less, or
// evidenceGCGrowthMax when a third is more than that (never below evidenceGCPercentMin).
func gcPercentFor(live uint64) int {
	if live == 0 {
		return 100
	}
	if live*evidenceGCPercent/100 > evidenceGCGrowthMax {
		return int(max(evidenceGCPercentMin, evidenceGCGrowthMax*100/live))
	}
	return int(max(evidenceGCPercent, min(100, evidenceGCHeadroom*100/live)))
}

// liveHeap is what the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// letEvidenceGo collects the evidence once the report is built from it: nothing points
// at the graph any more, but the collector last found it live and set its goal from
// it, so the report's rendering would grow the heap past that peak before the next
// collection let the graph go (at 20k pods the heap grew from 350 to 375 MB while the
// JSON was written, and RSS by 13 MB over the rules' peak). Collected now, the graph's memory is what the rendering reuses; the
// collection marks only the report and costs a few milliseconds.
func letEvidenceGo() {
	runtime.GC()
}
