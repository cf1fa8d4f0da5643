package catalog

import (
	"sort"
	"strings"
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

// index finds candidate entries by their longest literal fragment.
type index struct {
	ac      ahocorasick.AhoCorasick
	entries [][]*Entry // per pattern, the entries whose key it is
	keys    []string
}

// minKey is the shortest literal fragment an entry is indexed by; shorter ones are not
// matched at all (the generator drops them).
const minKey = 4

func (c *Catalog) index() *index {
	c.indexOnce.Do(func() {
		ids := map[string]int{}
		x := &index{}
		for _, e := range c.entries {
			k := key(parseTemplate(e.Template, e.Plain))
			e.key = k
			if len(k) < minKey {
				continue
			}
			id, ok := ids[k]
			if !ok {
				id = len(x.keys)
				ids[k] = id
				x.keys = append(x.keys, k)
				x.entries = append(x.entries, nil)
			}
			x.entries[id] = append(x.entries[id], e)
		}
		b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true,
			MatchKind: ahocorasick.StandardMatch, DFA: false})
		x.ac = b.Build(x.keys)
		c.idx = x
	})
	return c.idx
}

// Candidates returns how many entries the literal index proposes for msg, without running
// any matcher: the floor under Read.
func (c *Catalog) Candidates(msg string) int {
	x := c.index()
	n := 0
	it := x.ac.IterOverlappingByte(unsafe.Slice(unsafe.StringData(msg), len(msg)))
	for m := it.Next(); m != nil; m = it.Next() {
		n += len(x.entries[m.Pattern()])
	}
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
	// Scan each text that is not part of one already scanned.
	var scanned []string
	cand := map[*Entry]struct{}{}
	for _, l := range layers {
		inside := false
		for _, s := range scanned {
			if strings.Contains(s, l) {
				inside = true
				break
			}
		}
		if inside {
			continue
		}
		scanned = append(scanned, l)
		it := x.ac.IterOverlappingByte(unsafe.Slice(unsafe.StringData(l), len(l)))
		for m := it.Next(); m != nil; m = it.Next() {
			for _, e := range x.entries[m.Pattern()] {
				cand[e] = struct{}{}
			}
		}
	}
	if len(cand) == 0 {
		return nil
	}
	lower := make([]string, len(layers))
	for i, l := range layers {
		lower[i] = strings.ToLower(l)
	}
	var out []Match
	for e := range cand {
		k := e.key
		for i := len(layers) - 1; i >= 0; i-- {
			if !strings.Contains(lower[i], k) {
				continue
			}
			span, caps, ok := e.match(layers[i])
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
