package redact

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestScanInQuartersFindsWhatOnePassFinds plants keywords across the places where
// scan4 splits the data, and compares with one automaton over all of it.
func TestScanInQuartersFindsWhatOnePassFinds(t *testing.T) {
	p := testPolicy(t)
	m := p.matcher
	r := rand.New(rand.NewPCG(7, 8))
	var kws [][]byte
	for _, d := range p.detectors {
		kws = append(kws, d.keywords...)
	}
	kws = append(kws, envNameKeywords...)
	for _, size := range []int{minSplitScan, minSplitScan + 3, 100_003, 1 << 20} {
		data := syntheticKubeletJournal(size)[:size]
		// Keywords over each quarter's start, at every offset from it.
		q := size / 4
		for k := 1; k < 4; k++ {
			kw := kws[r.IntN(len(kws))]
			at := k*q - r.IntN(len(kw)+1)
			copy(data[at:], bytes.ToUpper(kw))
		}
		var want keywordHits
		m.scanRange(data, 0, 0, len(data), &want)
		got := m.scan(data)
		if !slices.Equal(got.any, want.any) || !slices.Equal(got.states, want.states) || !slices.Equal(got.names, want.names) {
			t.Fatalf("size %d: scan found %d/%d/%d hits, one pass %d/%d/%d", size, len(got.any), len(got.states), len(got.names), len(want.any), len(want.states), len(want.names))
		}
		if len(want.any) == 0 {
			t.Fatalf("size %d: no keywords in the test data", size)
		}
	}
}

func TestSearchFromAgreesWithSearchInts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		list := make([]int, r.IntN(50))
		for i := range list {
			list[i] = r.IntN(200)
		}
		sort.Ints(list)
		at := 0
		for range 100 {
			x := r.IntN(220) - 10
			if got, want := searchFrom(list, x, &at), sort.SearchInts(list, x); got != want {
				t.Fatalf("searchFrom(%v, %d) = %d, want %d", list, x, got, want)
			}
		}
	}
}

// TestSubHitsAreTheStringsOwn checks that the hits a JSON string without escapes takes
// from its file are those a scan of the string alone finds.
func TestSubHitsAreTheStringsOwn(t *testing.T) {
	p := testPolicy(t)
	if !p.matcher.quoteSafe {
		t.Fatal("the built-in keywords are expected to be quote-safe")
	}
	data := syntheticPodList(64 << 10)
	root, doc, err := parseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	file := p.matcher.scan(data)
	n := 0
	var visit func(*jnode)
	visit = func(v *jnode) {
		kids := doc.kids(v)
		for i := range kids {
			visit(&kids[i])
		}
		if v.kind != jString || v.esc {
			return
		}
		got := file.sub(v.start+1, v.end-1)
		want := p.matcher.scan(data[v.start+1 : v.end-1])
		if !slices.Equal(got.any, want.any) || !slices.Equal(got.names, want.names) {
			t.Fatalf("%s: sub hits %v %v, own %v %v", data[v.start:v.end], got.any, got.names, want.any, want.names)
		}
		got.byDetector(p.matcher)
		want.byDetector(p.matcher)
		if !slices.Equal(got.dets, want.dets) {
			t.Fatalf("%s: sub detectors %v, own %v", data[v.start:v.end], got.dets, want.dets)
		}
		n += len(got.any)
	}
	visit(root)
	if n == 0 {
		t.Fatal("no string of the test data holds a keyword")
	}
}
