package catalog

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	ahocorasick "github.com/petar-dambovaliev/aho-corasick"
)

// Match is one entry that prints one layer of a message.
type Match struct {
	Entry    *Entry
	Layer    int               // index into Layers(msg)
	Text     string            // the matched text of that layer
	Captures map[string]string // capture name -> value ("arg1", … or a name from the template's verb context)
}

// index finds candidate entries for a message. Each entry is filed under one word of its
// literal text, the rarest among the catalog's templates; the few entries with no whole
// word are found by their longest literal piece with an Aho-Corasick automaton. A
// candidate is matched only when every literal piece of its template is in the layer.
type index struct {
	words map[string][]*Entry
	ac    ahocorasick.AhoCorasick
	acOf  [][]*Entry // per automaton pattern, its entries
}

func (c *Catalog) index() *index {
	c.indexOnce.Do(func() {
		x := &index{words: map[string][]*Entry{}}
		df := map[string]int{}
		for _, e := range c.entries {
			p := e.prep()
			seen := map[string]bool{}
			for _, w := range p.words {
				if !seen[w] {
					seen[w] = true
					df[w]++
				}
			}
		}
		ids := map[string]int{}
		var pats []string
		for _, e := range c.entries {
			p := e.prep()
			best := ""
			for _, w := range p.words {
				if best == "" || df[w] < df[best] || df[w] == df[best] && len(w) > len(best) {
					best = w
				}
			}
			if best != "" {
				x.words[best] = append(x.words[best], e)
				// Up to three more of its words, rarest first, looked up before any text
				// search: most candidates lack one.
				var more []string
				for _, w := range p.words {
					if w != best && !slices.Contains(more, w) {
						more = append(more, w)
					}
				}
				sort.SliceStable(more, func(i, j int) bool { return df[more[i]] < df[more[j]] })
				if len(more) > 3 {
					more = more[:3]
				}
				e.checks = more
				continue
			}
			k := ""
			for _, f := range p.frags {
				if len(f) > len(k) {
					k = f
				}
			}
			if len(k) < 3 {
				continue // nothing literal to look for: never matched
			}
			id, ok := ids[k]
			if !ok {
				id = len(pats)
				ids[k] = id
				pats = append(pats, k)
				x.acOf = append(x.acOf, nil)
			}
			x.acOf[id] = append(x.acOf[id], e)
		}
		b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true,
			MatchKind: ahocorasick.StandardMatch, DFA: true})
		x.ac = b.Build(pats)
		c.idx = x
	})
	return c.idx
}

// candidates calls add for each entry filed under a word of text or found by the
// automaton; words, when not nil, receives every word of text (ASCII lower case).
func (x *index) candidates(text string, add func(*Entry), words map[string]struct{}) {
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && isWordByte(text[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if i-start >= 3 {
				w := text[start:i]
				if hasUpper(w) {
					w = lowerASCII(w)
				}
				es := x.words[w]
				if words != nil {
					words[w] = struct{}{}
				}
				for _, e := range es {
					add(e)
				}
			}
			start = -1
		}
	}
	if len(x.acOf) > 0 {
		it := x.ac.IterOverlappingByte(unsafe.Slice(unsafe.StringData(text), len(text)))
		for m := it.Next(); m != nil; m = it.Next() {
			for _, e := range x.acOf[m.Pattern()] {
				add(e)
			}
		}
	}
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// Candidates returns how many entries the literal index proposes for msg, without
// splitting it into layers or running any matcher: the floor under Read.
func (c *Catalog) Candidates(msg string) int {
	n := 0
	c.index().candidates(msg, func(*Entry) { n++ }, nil)
	return n
}

// Read matches every layer of msg against the catalog and returns the matches, outermost
// layer first, and within a layer the most specific entry (most literal characters) first,
// ties broken by the stage precedence table, then by ID. An entry is reported once, at the
// innermost layer it matches: that is where its text begins.
func (c *Catalog) Read(msg string) []Match {
	if len(c.entries) == 0 || msg == "" {
		return nil
	}
	x := c.index()
	layers := Layers(msg)
	// Look up each text that is not part of one already looked at; each layer is lowered
	// as a slice of the lowered text that holds it.
	var scanned, scannedLow []string
	lower := make([]string, len(layers))
	sc := scratchPool.Get().(*scratch)
	defer func() {
		clear(sc.seen)
		clear(sc.words)
		clear(sc.cand)
		sc.cand = sc.cand[:0]
		scratchPool.Put(sc)
	}()
	seen := sc.seen
	add := func(e *Entry) {
		if _, ok := seen[e]; !ok {
			seen[e] = struct{}{}
			sc.cand = append(sc.cand, e)
		}
	}
	for i, l := range layers {
		for j, s := range scanned {
			if k := strings.Index(s, l); k >= 0 {
				lower[i] = scannedLow[j][k : k+len(l)]
				break
			}
		}
		if lower[i] != "" {
			continue
		}
		lower[i] = lowerASCII(l)
		scanned, scannedLow = append(scanned, l), append(scannedLow, lower[i])
		x.candidates(l, add, sc.words)
	}
	if len(sc.cand) == 0 {
		return nil
	}
	var out []Match
	for _, e := range sc.cand {
		if !allIn(sc.words, e.checks) {
			continue
		}
		p := e.prep()
		// Every literal piece must be in one looked-up text before any layer is tried.
		in := false
		for _, s := range scannedLow {
			if containsAll(s, p.frags) {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		for i := len(layers) - 1; i >= 0; i-- {
			if !containsAll(lower[i], p.frags) {
				continue
			}
			span, caps, ok := e.match(layers[i], lower[i])
			if !ok {
				continue
			}
			out = append(out, Match{Entry: e, Layer: i, Text: layers[i][span[0]:span[1]], Captures: caps})
			break
		}
	}
	sortMatches(out)
	return out
}

// scratch is the candidate set of one Read, reused.
type scratch struct {
	seen  map[*Entry]struct{}
	words map[string]struct{}
	cand  []*Entry
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{seen: make(map[*Entry]struct{}, 128), words: make(map[string]struct{}, 64)}
}}

func allIn(set map[string]struct{}, words []string) bool {
	for _, w := range words {
		if _, ok := set[w]; !ok {
			return false
		}
	}
	return true
}

func sortMatches(ms []Match) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		if la, lb := a.Entry.Literals(), b.Entry.Literals(); la != lb {
			return la > lb
		}
		if ra, rb := stageRank(a.Entry.Stage), stageRank(b.Entry.Stage); ra != rb {
			return ra < rb
		}
		return a.Entry.ID < b.Entry.ID
	})
}

func containsAll(s string, frags []string) bool {
	for _, f := range frags {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}
