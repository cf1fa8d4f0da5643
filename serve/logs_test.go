package serve

import (
	"bufio"
	"bytes"
	"runtime"
	"testing"
	"time"
)

// referenceApply is the plain reading of the kubelet's order (since, tail, limit)
// over a split log, the oracle apply must agree with.
func referenceApply(o logOptions, data []byte) []byte {
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	for sc.Scan() {
		line := sc.Bytes()
		ts, rest, stamped := splitTimestamp(line)
		if !o.since.IsZero() && stamped && ts.Before(o.since) {
			continue
		}
		if !o.timestamps && stamped {
			line = rest
		}
		lines = append(lines, line)
	}
	if o.tail >= 0 && o.tail < len(lines) {
		lines = lines[len(lines)-o.tail:]
	}
	var out bytes.Buffer
	for _, l := range lines {
		out.Write(l)
		out.WriteByte('\n')
		if o.limitBytes > 0 && out.Len() >= o.limitBytes {
			return out.Bytes()[:o.limitBytes]
		}
	}
	return out.Bytes()
}

func TestLogApplyMatchesReference(t *testing.T) {
	since := time.Date(2026, 11, 29, 20, 25, 0, 0, time.UTC)
	logs := []string{
		"",
		"\n",
		"\n\n\n",
		"one",
		"one\n",
		"one\ntwo",
		"one\r\ntwo\r\n",
		"one\n\ntwo\n\n",
		"2026-11-29T20:24:59Z early\n2026-11-29T20:25:01.5Z late\nplain\n2026-11-29T20:25:02Z last",
		"2026-11-29T20:25:01Z a\n2026-11-29T20:24:00Z b\n\n2026-11-29T20:26:00Z c\n",
	}
	for _, data := range logs {
		for _, tail := range []int{-1, 0, 1, 2, 3, 10} {
			for _, limit := range []int{0, 1, 2, 5, 9, 100} {
				for _, ts := range []bool{false, true} {
					for _, s := range []time.Time{{}, since} {
						o := logOptions{tail: tail, limitBytes: limit, timestamps: ts, since: s}
						got, want := o.apply([]byte(data)), referenceApply(o, []byte(data))
						if !bytes.Equal(got, want) {
							t.Errorf("%q with %+v: got %q, want %q", data, o, got, want)
						}
					}
				}
			}
		}
	}
}

// TestLogTailCostsWhatItReturns is the log made only of newlines: a tail of one
// line must not cost an index of every line (it cost about 95 times the log).
func TestLogTailCostsWhatItReturns(t *testing.T) {
	data := bytes.Repeat([]byte{'\n'}, 4<<20)
	data = append(data, "2026-11-29T20:25:26Z last line\n"...)
	for _, o := range []logOptions{
		{tail: 1},
		{tail: 1, limitBytes: 4},
		{tail: -1, limitBytes: 16},
		{tail: 2, since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := o.apply(data)
		runtime.ReadMemStats(&after)
		if len(out) == 0 {
			t.Fatalf("%+v: empty answer", o)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%+v on a %d-byte log allocated %d bytes for %d returned", o, len(data), alloc, len(out))
		}
	}
	if got := (logOptions{tail: 1}).apply(data); string(got) != "last line\n" {
		t.Errorf("tail 1: %q", got)
	}
}
