package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkIndexAdd measures `podflow index add` of a collected bundle side by side
// with its floor, `podflow analyze -o json` of the same bundle (the target:
// index add ≤ 1.1× analyze). Each iteration runs both, in alternating order, so a
// loaded machine weighs on both alike; it reports the median of each one's wall and
// CPU time and of the ratio of each pair (-count gives the spread). The index is a
// fresh file each time (a new index's schema is part of the cost).
func BenchmarkIndexAdd(b *testing.B) {
	in := filepath.Join("..", "..", "testdata", "bundles", "demo")
	dir := b.TempDir()
	db := filepath.Join(dir, "index.db")
	quiet := streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	commands := [2][]string{
		{"analyze", in, "-o", "json", "--fail-on", "none"},
		{"index", "add", "--db", db, in},
	}
	var wall, cpu [2][]time.Duration
	var ratio []float64
	i := 0
	for b.Loop() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(db + suffix)
		}
		var w [2]time.Duration
		for k := range 2 {
			which := (i + k) % 2
			start, cpu0 := time.Now(), cpuTime(b)
			if code := run(context.Background(), commands[which], quiet); code != exitOK {
				b.Fatalf("%s: exit %d", strings.Join(commands[which], " "), code)
			}
			w[which] = time.Since(start)
			wall[which] = append(wall[which], w[which])
			cpu[which] = append(cpu[which], cpuTime(b)-cpu0)
		}
		ratio = append(ratio, float64(w[1])/float64(w[0]))
		i++
	}
	ms := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	slices.Sort(ratio)
	b.ReportMetric(ms(wall[0]), "analyze-ms")
	b.ReportMetric(ms(wall[1]), "add-ms")
	b.ReportMetric(ms(cpu[0]), "analyze-cpu-ms")
	b.ReportMetric(ms(cpu[1]), "add-cpu-ms")
	b.ReportMetric(ratio[len(ratio)/2], "add/analyze")
}
