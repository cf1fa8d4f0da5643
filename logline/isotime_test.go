package logline

import (
	"strings"
	"testing"
	"time"
)

// parseISOWithParse is what parseISOTime must agree with.
func parseISOWithParse(ts string) (time.Time, bool) {
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, ts); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var isoSeeds = []string{
	"2026-11-29T19:00:01+0000", "2026-11-29T19:00:01.123456+0000", "2026-11-29T19:00:01Z",
	"2026-11-29T19:00:01.5Z", "2026-11-29T19:00:01.123456789-0530", "2026-11-29T19:00:01.1234567891+0100",
	"2026-11-29T19:00:01+01:00", "2026-11-29T19:00:01-08:00", "2024-02-29T00:00:00+0000",
	"2026-02-29T00:00:00+0000", "2026-13-01T00:00:00+0000", "2026-11-29T24:00:00+0000",
	"2026-11-29T9:00:01+0000", "2026-11-29T19:00:60+0000", "2026-11-29T19:00:01+2400",
	"2026-11-29T19:00:01+0060", "2026-11-29T19:00:01 +0000", "2026-11-29T19:00:01+00000",
	"2026-11-29T19:00:01Zx", "2026-11-29T19:00:01,5+0000", "2026-11-29T19:00:01.+0000",
	"+026-11-29T19:00:01+0000", "2026-1a-29T19:00:01+0000", "2026-11-29T19:00:01+01:0a",
	"2026-11-29T19:00:01*0100", "2000-02-29T23:59:59.999999999+1400", "1900-02-29T00:00:00Z",
}

// sameTime reports whether a and b are the same instant in the same location: the
// same *Location, or fixed zones of the same name and offset (time.FixedZone makes a
// new one for an offset that is not a whole hour between -12 and +14).
func sameTime(a, b time.Time) bool {
	if a == b {
		return true
	}
	an, ao := a.Zone()
	bn, bo := b.Zone()
	shared := func(l *time.Location) bool { return l == time.Local || l == time.UTC }
	if shared(a.Location()) || shared(b.Location()) {
		return false // the same instant in the same shared location is a == b
	}
	return a.Equal(b) && an == bn && ao == bo && a.Location().String() == b.Location().String()
}

// checkISO fails t when parseISOTime reads ts to anything but what time.Parse does.
func checkISO(t *testing.T, ts string) {
	t.Helper()
	got, ok := parseISOTime(ts)
	want, wantOK := parseISOWithParse(ts)
	if ok && (!wantOK || !sameTime(got, want)) {
		t.Errorf("parseISOTime(%q) = %v (%p), time.Parse gives %v (%p) ok=%v", ts, got, got.Location(), want, want.Location(), wantOK)
	}
	if !ok && len(ts) >= 20 && ts[4] == '-' && ts[10] == 'T' && !strings.Contains(ts, " ") {
		if got, _, gotOK := parseISOPrefix(ts + " x"); gotOK != wantOK || !sameTime(got, want) {
			t.Errorf("parseISOPrefix(%q) = %v, %v; time.Parse gives %v, %v", ts, got, gotOK, want, wantOK)
		}
	}
}

// The short-iso time read without time.Parse is the time time.Parse reads, its
// location too, whether the local zone has the line's offset or not.
func TestParseISOTimeAsTimeParse(t *testing.T) {
	local := time.Local
	defer func() { time.Local = local }()
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("X", -5*3600-30*60)} {
		time.Local = loc
		for _, ts := range isoSeeds {
			checkISO(t, ts)
		}
	}
	for _, ts := range []string{"2026-11-29T19:00:01+0000", "2026-11-29T19:00:01.123456Z", "2026-11-29T19:00:01-0530"} {
		if _, ok := parseISOTime(ts); !ok {
			t.Errorf("parseISOTime(%q) left to time.Parse", ts)
		}
	}
}

func FuzzParseISOTime(f *testing.F) {
	for _, s := range isoSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ts string) { checkISO(t, ts) })
}
