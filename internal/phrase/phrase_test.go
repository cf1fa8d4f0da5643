package phrase

import (
	"slices"
	"testing"
	"time"
)

func TestPhrases(t *testing.T) {
	if got, want := QuoteJoin([]string{"a", `b"c`}), `"a" and "b\"c"`; got != want {
		t.Errorf("QuoteJoin = %s, want %s", got, want)
	}
	if got := LastTwo([]string{"a", "b", "c"}); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("LastTwo = %v", got)
	}
	if got := LastTwo([]string{"a"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("LastTwo of one = %v", got)
	}
	if got := FirstLine("  one\ntwo\n"); got != "one" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := JoinCapped([]string{"a", "b", "c"}, "nodes"); got != "a; b; c" {
		t.Errorf("JoinCapped of three = %q", got)
	}
	if got := JoinCapped([]string{"a", "b", "c", "d", "e"}, "nodes"); got != "a; b; c; and 2 more nodes" {
		t.Errorf("JoinCapped of five = %q", got)
	}
	if !ContainsAny("no space left", []string{"x", "space"}) || ContainsAny("ok", []string{"x"}) {
		t.Error("ContainsAny")
	}
	if got := Unique([]string{"b", "a", "b", "c", "a"}); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("Unique = %v", got)
	}
	if got := Stamp(time.Time{}); got != "never" {
		t.Errorf("Stamp of zero = %q", got)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	if got := Stamp(at); got != "2026-01-02T02:04:05Z" {
		t.Errorf("Stamp = %q", got)
	}
	if got := Selector(map[string]string{"tier": "web", "app": "shop"}); got != "app=shop,tier=web" {
		t.Errorf("Selector = %q", got)
	}
	if got := Selector(nil); got != "" {
		t.Errorf("Selector of none = %q", got)
	}
}

func TestReplaceName(t *testing.T) {
	for _, c := range []struct{ s, old, want string }{
		{"kubectl logs -n shop web-1 -c app", "web-1", "kubectl logs -n shop POD -c app"},
		{"web-10 and web-1, web-1.x", "web-1", "web-10 and POD, web-1.x"},
		{"pod shop/web-1: web-1x", "web-1", "pod shop/POD: web-1x"},
		{"nothing here", "", "nothing here"},
	} {
		if got := ReplaceName(c.s, c.old, "POD"); got != c.want {
			t.Errorf("ReplaceName(%q, %q) = %q, want %q", c.s, c.old, got, c.want)
		}
	}
}
