package analyze

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	ahocorasick "github.com/petar-dambovaliev/aho-corasick"
)

// signatureIndex is, for each signature, the lines that may match it: those that hold
// one of its patterns' literals. The literals of every signature of a run are found in
// one pass over the lines with an Aho-Corasick automaton, instead of each signature
// searching every line for its own literal; a signature with a pattern that has no
// literal is tried on every line. The lines found are a superset of the lines that
// match: Signature.match still checks each one exactly.
type signatureIndex struct {
	mu    sync.Mutex
	lines map[*Signature][]int32
}

// signatureLines returns the candidate lines of s and true, or false when s was not
// indexed (it is then tried on every line).
func (g *Graph) signatureLines(s *Signature) ([]int32, bool) {
	g.sigIndex.mu.Lock()
	defer g.sigIndex.mu.Unlock()
	idx, ok := g.sigIndex.lines[s]
	return idx, ok
}

// indexSignatures finds the candidate lines of the signatures not indexed yet. keep
// keeps the automaton it builds for the next analysis that asks for the same set
// (automata).
func (g *Graph) indexSignatures(sigs []*Signature, keep bool) {
	g.sigIndex.mu.Lock()
	defer g.sigIndex.mu.Unlock()
	var todo []*Signature
	for _, s := range sigs {
		if _, done := g.sigIndex.lines[s]; !done && s.indexable() {
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return
	}
	if g.sigIndex.lines == nil {
		g.sigIndex.lines = map[*Signature][]int32{}
	}
	for s, idx := range findLiterals(g.Lines(), todo, keep) {
		g.sigIndex.lines[s] = idx
	}
}

// indexable reports whether every pattern of s has a literal every match holds.
func (s *Signature) indexable() bool {
	if len(s.res) == 0 {
		return false
	}
	for i, l := range s.lits {
		if l.s == "" && (i >= len(s.alts) || len(s.alts[i]) == 0) {
			return false
		}
	}
	return true
}

// literalSet is the automaton over the literals of some signatures, and which
// signatures each literal stands for.
type literalSet struct {
	ac    ahocorasick.AhoCorasick
	sigs  [][]int // per literal, the signatures (indexes into the list) that need it
	nsigs int
	fold  bool // some literal ignores case
	// joinable says no literal is empty or holds scanSeparator: lines' texts can be
	// scanned joined (findIn).
	joinable bool
}

// newLiteralSet builds the automaton over sigs' literals; dfa makes it a DFA, which
// takes longer to build and scans faster (dfaMinText); keep keeps it for the next
// analysis (automaton).
func newLiteralSet(sigs []*Signature, dfa, keep bool) *literalSet {
	set := &literalSet{nsigs: len(sigs)}
	ids := map[string]int{}
	var pats []string
	for si, s := range sigs {
		for _, l := range signatureLiterals(s) {
			// The automaton ignores ASCII case for every literal: a literal that
			// respects case then finds a superset, which match narrows. A literal
			// with a quote is also looked for with the quote escaped, as a message
			// quoted once more prints it (matchText reads that form unescaped).
			keys := []string{strings.ToLower(l.s)}
			if strings.Contains(l.s, `"`) {
				keys = append(keys, strings.ReplaceAll(keys[0], `"`, `\"`))
			}
			for _, key := range keys {
				id, ok := ids[key]
				if !ok {
					id = len(pats)
					ids[key] = id
					pats = append(pats, key)
					set.sigs = append(set.sigs, nil)
				}
				if n := len(set.sigs[id]); n == 0 || set.sigs[id][n-1] != si {
					set.sigs[id] = append(set.sigs[id], si)
				}
			}
			set.fold = set.fold || l.fold
		}
	}
	set.joinable = !slices.ContainsFunc(pats, func(p string) bool { return p == "" || strings.IndexByte(p, scanSeparator) >= 0 })
	set.ac = automatonKept(pats, dfa, keep)
	return set
}

// signatureLiterals lists the literals that find a signature's candidate lines: each
// pattern's required literal, or its alternatives.
func signatureLiterals(s *Signature) []literal {
	var out []literal
	for i, l := range s.lits {
		if l.s != "" {
			out = append(out, l)
		} else if i < len(s.alts) {
			out = append(out, s.alts[i]...)
		}
	}
	return out
}

// automata keeps the automata built for the sets of literals an analysis asked for. Building
// a DFA is most of a small analysis's CPU (the signatures' literals make one of thousands
// of states; dfaMinText), and it depends only on the literals: a re-analysis of many tickets, or the next
// analysis of a long-running process, asks for the same sets again. An automaton is only
// read once built, so analyses running side by side share it, and those that ask for a set
// while it is being built wait for that build rather than each making their own.
var automata struct {
	sync.Mutex
	m map[string]*builtAutomaton
}

// builtAutomaton is one set's automaton, built by the first caller.
type builtAutomaton struct {
	once sync.Once
	ac   ahocorasick.AhoCorasick
}

// maxAutomata bounds the sets kept: the built-in signatures, their ties' fragments, and
// a few sets with a user's --signatures.
const maxAutomata = 8

// dfaMinText is the text of lines from which the signatures' literals are found with a
// DFA rather than the NFA it is made from. Made for the built-in signatures, the DFA
// takes about 0.12 s of CPU to build, most of a small analysis's, and scans about
// 10 ns a byte faster: it pays off from about 12 MB of text (a cluster of 20k pods
// gives 25 MB, 1k pods 1.2 MB). Both find the same literals. Only an automaton kept
// for later analyses is made a DFA (findLiterals).
const dfaMinText = 16 << 20

// automaton returns the case-insensitive automaton of pats, built once per set; dfa
// asks for a DFA, and a set already built as one is handed out as it is.
func automaton(pats []string, dfa bool) ahocorasick.AhoCorasick {
	return automatonKept(pats, dfa, true)
}

// automatonKept is automaton, but when keep is false and the set is not kept yet it
// is built for the caller alone and not kept: a process that runs one analysis would
// otherwise hold it (the signatures' DFA is 8 MB) while its rules run, when its
// memory peaks, for no analysis to come.
func automatonKept(pats []string, dfa, keep bool) ahocorasick.AhoCorasick {
	set := strings.Join(pats, "\x00")
	key := set + "\x00dfa"
	automata.Lock()
	a, ok := automata.m[key]
	if !ok && !dfa {
		key = set + "\x00nfa"
		a, ok = automata.m[key]
	}
	if !ok && !keep {
		automata.Unlock()
		return buildAutomaton(pats, dfa)
	}
	if !ok {
		if automata.m == nil || len(automata.m) >= maxAutomata {
			automata.m = map[string]*builtAutomaton{}
		}
		a = &builtAutomaton{}
		automata.m[key] = a
	}
	automata.Unlock()
	a.once.Do(func() { a.ac = buildAutomaton(pats, dfa) })
	return a.ac
}

func buildAutomaton(pats []string, dfa bool) ahocorasick.AhoCorasick {
	b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true,
		MatchKind: ahocorasick.StandardMatch, DFA: dfa})
	return b.Build(pats)
}

// scan calls hit for each signature with a literal in text, possibly more than once.
func (set *literalSet) scan(text string, hit func(sig int)) {
	set.scanBytes(unsafe.Slice(unsafe.StringData(text), len(text)), hit)
	if set.fold && !isASCII(text) {
		// A literal that ignores case is compared with the text in lower case
		// (literal.in), which for text beyond ASCII the automaton's folding does
		// not cover.
		lower := strings.ToLower(text)
		set.scanBytes(unsafe.Slice(unsafe.StringData(lower), len(lower)), hit)
	}
}

func (set *literalSet) scanBytes(text []byte, hit func(sig int)) {
	it := set.ac.IterOverlappingByte(text)
	for m := it.Next(); m != nil; m = it.Next() {
		for _, si := range set.sigs[m.Pattern()] {
			hit(si)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// findLiterals returns, for each signature, the lines that hold one of its literals, in
// line order. The lines are split between the cores; each part is scanned on its own
// and the parts are joined in order.
func findLiterals(lines []Line, sigs []*Signature, keep bool) map[*Signature][]int32 {
	text := 0
	for i := range lines {
		text += len(lines[i].Text)
	}
	// An analysis alone in its process (keep false) builds its automaton when its
	// memory peaks and for this one scan: building the DFA allocated about 60 MB that
	// went at once, and scanned in chunks (findIn) the NFA took no more CPU on 20k pods.
	set := newLiteralSet(sigs, keep && text >= dfaMinText, keep)
	parts := min(runtime.GOMAXPROCS(0), max(1, len(lines)/20000))
	found := make([][][]int32, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(lines)/parts, (p+1)*len(lines)/parts
		wg.Go(func() { found[p] = set.findIn(lines, lo, hi) })
	}
	wg.Wait()
	out := make(map[*Signature][]int32, len(sigs))
	for si, s := range sigs {
		n := 0
		for p := range parts {
			n += len(found[p][si])
		}
		idx := make([]int32, 0, n)
		for p := range parts {
			idx = append(idx, found[p][si]...)
			found[p][si] = nil // joined: its room, grown by appends, can go
		}
		out[s] = idx
	}
	return out
}

// findIn scans lines[lo:hi] for every literal: per signature, the lines found.
func (set *literalSet) findIn(lines []Line, lo, hi int) [][]int32 {
	found := make([][]int32, set.nsigs)
	hit := func(si int, at int32) {
		if n := len(found[si]); n == 0 || found[si][n-1] != at {
			found[si] = append(found[si], at)
		}
	}
	var buf []byte
	text := func(l *Line) string {
		if r := l.Reason(); r != "" && l.Kind() != TextLog {
			// match also tries "Reason: text"; that string holds the text too.
			buf = append(append(append(buf[:0], r...), ": "...), l.Text...)
			return unsafe.String(unsafe.SliceData(buf), len(buf))
		}
		return l.Text
	}
	if !set.joinable {
		for i := lo; i < hi; i++ {
			at := int32(i)
			set.scan(text(&lines[i]), func(si int) { hit(si, at) })
		}
		return found
	}
	var c scanChunk
	for i := lo; i < hi; i++ {
		t := text(&lines[i])
		c.add(t, int32(i))
		if set.fold && !isASCII(t) {
			// As scan does: the text in lower case too, for the literals that
			// ignore case beyond ASCII.
			c.add(strings.ToLower(t), int32(i))
		}
		if len(c.text) >= scanChunkSize {
			set.scanChunk(&c, hit)
		}
	}
	set.scanChunk(&c, hit)
	return found
}

// scanChunkSize is about how much text findIn scans at a time. The automaton's
// iterator is allocated for each text it scans: scanned line by line, a cluster of
// 80k pods allocated over 100 MB of iterators while the index was built, when the
// analysis's memory peaks, and the collector counted what it allocated meanwhile as
// live.
const scanChunkSize = 64 << 10

// scanSeparator ends each text of a chunk. A byte no literal holds (joinable) ends
// every match of the automaton, so what it finds in a chunk is what it finds in each
// text on its own.
const scanSeparator = 0

// scanChunk is texts of lines joined by scanSeparator, and which line each is of.
type scanChunk struct {
	text []byte
	ends []int // where each text ends in text
	line []int32
}

func (c *scanChunk) add(t string, line int32) {
	c.text = append(c.text, t...)
	c.ends = append(c.ends, len(c.text))
	c.line = append(c.line, line)
	c.text = append(c.text, scanSeparator)
}

// scanChunk calls hit for each signature with a literal in one of c's texts, with that
// text's line, in the order of the texts, and empties c.
func (set *literalSet) scanChunk(c *scanChunk, hit func(sig int, line int32)) {
	if len(c.ends) == 0 {
		return
	}
	at := 0
	it := set.ac.IterOverlappingByte(c.text)
	for m := it.Next(); m != nil; m = it.Next() {
		// Matches come in the order they end, and none spans a separator.
		for c.ends[at] < m.End() {
			at++
		}
		for _, si := range set.sigs[m.Pattern()] {
			hit(si, c.line[at])
		}
	}
	c.text, c.ends, c.line = c.text[:0], c.ends[:0], c.line[:0]
}
