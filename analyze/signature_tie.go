package analyze

import (
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"

	"podflow.dev/podflow/catalog"
)

// A signature knows one component's message in the wordings its patterns spell out; the
// catalog knows every release's wording of the same call site. A signature tie carries
// the signature's meaning to the other wordings (docs/signatures.md, "Ties to the
// catalog"): the firing examples are read through the catalog layer by layer, and each
// layer that carries the signature's meaning names a call site (catalog.Entry.Site). A line
// whose reading has a layer printed by that site, in any release, fires the signature,
// with its captures filled from the catalog's captures where they correspond.
//
// What keeps a tie from over-generalizing, all derived from the signatures' own examples:
//   - a layer that only wraps the meaning (a literal of the pattern lies deeper in the
//     chain: "Error syncing pod", failed to "StartContainer", "MountVolume.SetUp failed")
//     is no tie;
//   - a value the pattern spells out and the catalog captures (the resource of
//     `configmaps "cfg" not found`, the status of `unexpected status code …: 429 Too Many
//     Requests`) must be in the line's layer too;
//   - another entry of the same site ties only when its words are nearer to a firing
//     example's entry than to any near miss: the signature's quiet examples and the
//     firing examples of every other signature of the site (forbiddenMessage's "at the
//     cluster scope" against "in the namespace");
//   - the line's own reading must place it at the signature's stage, or where the
//     firing examples' readings place them.

// tieLabel is one reading of one example layer: a firing example's (a tie of sig) or a
// near miss (quiet, or another signature's tie).
type tieLabel struct {
	sig   *Signature
	quiet bool
	entry *catalog.Entry
	words map[string]bool
	// require are values the line's layer must hold (lower case).
	require []string
	// requireNames are the catalog captures the required values came from.
	requireNames []string
	// caps maps a signature capture to the catalog capture that holds its value; last
	// names the signature captures the entry's closing verb holds (the wrapped rest).
	caps map[string]string
	last []string
	// whole names the signature captures that hold the entry's whole message.
	whole []string
	// stages are the stages the firing examples' readings give.
	stages map[Stage]bool
	// ex is the firing example, at and text where the entry matched in it.
	ex, text string
	at       int
	// lits are the literal pieces of the pattern that matched the example.
	lits []string
	// context are the values the pattern spells out inside its captures that the
	// firing example holds outside the entry's text (the /pause of a sandbox image
	// around a registry's "pull access denied"): the line must hold them too.
	context []string
	// exact is set when the entry is the most specific reading of its layer of the
	// example (not a more general template of the same site that also matches it).
	exact bool
	// tokens are the catalog captures whose value in the example is one word (an image
	// reference, a name, a path): a line whose value there is several words (a shell's
	// "sh: 1: ld: not found" in "%s/%s not found") says something else.
	tokens []string
}

// shapeHolds reports whether the line's match m has one word in every capture the
// label's example had one word in.
func (l *tieLabel) shapeHolds(m *catalog.Match) bool {
	for _, n := range l.tokens {
		if v, ok := m.Captures[n]; ok && strings.ContainsAny(strings.TrimSpace(v), " \t") {
			return false
		}
	}
	return true
}

// sameValues reports whether text, read by the label's own entry, still fires the
// signature when it stands in the firing example in place of the text the entry matched
// there: a tie carries the meaning across wordings and wrappers, never to values the
// signature's pattern refuses (a node.kubernetes.io/ taint, another resource).
func (l *tieLabel) sameValues(text string) bool {
	if l.at < 0 {
		return false
	}
	return l.sig.patternMatches(l.ex[:l.at] + text + l.ex[l.at+len(l.text):])
}

// tieSet is the ties of a list of signatures.
type tieSet struct {
	bySite map[string][]*tieLabel
	// lits finds the lines that may hold an entry of a tied site.
	lits []string
	sigs []*Signature
	ac   *literalSet
}

var (
	tieMu    sync.Mutex
	tieCache = map[string]*tieSet{}
)

// signatureTies returns the ties of the signatures, derived once per list.
func signatureTies(sigs []*Signature) *tieSet {
	var key strings.Builder
	for _, s := range sigs {
		key.WriteString(s.File + "\x00" + s.ID + "\x00" + itoa(s.Line) + "\x01")
	}
	tieMu.Lock()
	defer tieMu.Unlock()
	if t, ok := tieCache[key.String()]; ok && sameSigs(t.sigs, sigs) {
		return t
	}
	t := deriveTies(sigs)
	tieCache[key.String()] = t
	return t
}

func sameSigs(a, b []*Signature) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tieMinLiterals is the least literal text an entry must have to tie a line to a
// signature on its own; a shorter one (`%s %q not found`) ties only with a required value.
const tieMinLiterals = minCatalogLiterals

// tieReadable reports whether a match may carry a tie: trouble, and specific enough (no
// name of its template holding a run of a sentence's words: "pod %s not found" is no
// tie for "pod is launched … secret "x" not found").
func tieReadable(m *catalog.Match) bool {
	e := m.Entry
	return e.Class != "info" && e.Literals() >= 6 && !wordyTail(m)
}

// deriveTies reads every signature's examples through the catalog.
func deriveTies(sigs []*Signature) *tieSet {
	t := &tieSet{bySite: map[string][]*tieLabel{}, sigs: sigs}
	cat := catalog.Default()
	if cat.Len() == 0 {
		return t
	}
	// A wrapper (a template that ends in the error it wraps) is generic when the
	// catalog places it on no one stage (printed in places of several: "Error syncing
	// pod", failed to "StartContainer") or when it wraps the firing examples of
	// signatures of two stages or more.
	stages := map[string]map[Stage]bool{}
	for _, s := range sigs {
		for _, ex := range s.Examples.Fires {
			for _, m := range tieMatches(ex) {
				site := m.Entry.Site()
				if stages[site] == nil {
					stages[site] = map[Stage]bool{}
				}
				stages[site][s.Stage] = true
			}
		}
	}
	generic := func(e *catalog.Entry) bool {
		return e.LastCapture() != "" && (e.Stage == "" || len(stages[e.Site()]) > 1)
	}
	for _, s := range sigs {
		var mine []*tieLabel
		for _, ex := range s.Examples.Fires {
			mine = append(mine, s.exampleTies(ex, generic)...)
		}
		for _, l := range mine {
			t.bySite[l.entry.Site()] = append(t.bySite[l.entry.Site()], l)
		}
		// The quiet examples are near misses of the sites the firing ones tie.
		for _, ex := range s.Examples.Quiet {
			if s.patternMatches(ex) {
				continue // quiet by an unless pattern, which a tie applies too
			}
			for _, m := range tieMatches(ex) {
				site := m.Entry.Site()
				for _, p := range mine {
					if p.entry.Site() != site {
						continue
					}
					q := &tieLabel{sig: s, quiet: true, entry: m.Entry, words: contentWords(m.Entry), requireNames: p.requireNames}
					for _, n := range p.requireNames {
						if v := normValue(m.Captures[n]); v != "" {
							q.require = append(q.require, v)
						}
					}
					// A near miss that reads as a firing example does is told apart
					// outside the tied layer (its wrapper, its stage), not by it.
					if !slices.ContainsFunc(t.bySite[site], func(o *tieLabel) bool {
						return o.sig == s && o.entry == q.entry && slices.Equal(o.require, q.require)
					}) {
						t.bySite[site] = append(t.bySite[site], q)
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, e := range cat.Entries() {
		if _, ok := t.bySite[e.Site()]; !ok {
			continue
		}
		if fs := e.Fragments(); len(fs) > 0 && !seen[fs[0]] {
			seen[fs[0]] = true
			t.lits = append(t.lits, fs[0])
		}
	}
	sort.Strings(t.lits)
	if len(t.lits) > 0 {
		t.ac = newFragmentSet(t.lits)
	}
	return t
}

// patternMatches reports whether a pattern matches text, unless or not.
func (s *Signature) patternMatches(text string) bool {
	for _, re := range s.res {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// tieMatches are the catalog's readings of text that may carry a tie, outermost first.
func tieMatches(text string) []catalog.Match {
	ms := catalog.Default().Read(text)
	return slices.DeleteFunc(ms, func(m catalog.Match) bool { return !tieReadable(&m) })
}

// exampleTies reads one firing example: the layers that carry the signature's meaning.
func (s *Signature) exampleTies(ex string, generic func(*catalog.Entry) bool) []*tieLabel {
	pi := -1
	var loc []int
	for i, re := range s.res {
		if loc = re.FindStringSubmatchIndex(ex); loc != nil {
			pi = i
			break
		}
	}
	if pi < 0 {
		return nil
	}
	lits := patternLiterals(s.Patterns[pi], 7)
	values := patternLiterals(s.Patterns[pi], 3)
	layers := catalog.Layers(ex)
	read := readChain(ex, "")
	var out []*tieLabel
	ms := tieMatches(ex)
	most := map[int]int{} // per layer, the most literal text an entry of it has
	for _, m := range ms {
		most[m.Layer] = max(most[m.Layer], m.Entry.Literals())
	}
	for _, m := range ms {
		if generic(m.Entry) {
			continue // a wrapper of many meanings carries none of them by itself
		}
		if len(m.Captures) == 0 {
			// A constant message ("connection refused", "Failed to pull image") reads
			// the same in every release: the pattern knows its wording already, and a
			// line the pattern refuses differs in the context the pattern asks for.
			continue
		}
		// The entry's own words are the text it matched (an entry may match only part
		// of a layer, as one reason of a scheduler summary does) without what it wraps:
		// the longest layer inside that text (a structured line's fields are layers of
		// their own, not nested in order).
		own, deeper := strings.ToLower(m.Text), ""
		for _, l := range layers {
			if l = strings.ToLower(l); len(l) > len(deeper) && len(l) < len(own) && strings.Contains(own, l) {
				deeper = l
			}
		}
		if deeper != "" {
			own = strings.Replace(own, deeper, "", 1)
		}
		// A literal below the entry's own words is the meaning going on in a deeper
		// layer when another entry reads it there; when none does, it is a value the
		// entry's closing verb holds (the status text of "unexpected status code %v:
		// %v"), which the line must hold too.
		speaks, wraps := false, false
		var held []string
		for _, l := range lits {
			switch {
			case strings.Contains(own, l):
				speaks = true
			case deeper != "" && strings.Contains(deeper, l):
				if slices.ContainsFunc(ms, func(o catalog.Match) bool {
					t := strings.ToLower(o.Text)
					return o.Entry != m.Entry && strings.Contains(deeper, t) && strings.Contains(t, l)
				}) {
					wraps = true
				} else {
					held = append(held, l)
				}
			}
		}
		speaks = speaks || len(held) > 0 && strings.TrimSpace(own) != ""
		// Nor is it this entry's when the message goes on after the entry's text and
		// another entry reads a literal of the pattern there ("ErrImagePull" in front
		// of a DNS failure).
		lowEx := strings.ToLower(ex)
		if at := strings.Index(lowEx, strings.ToLower(m.Text)); at >= 0 {
			after := at + len(m.Text)
			for _, l := range lits {
				if strings.Contains(own, l) {
					continue
				}
				if slices.ContainsFunc(ms, func(o catalog.Match) bool {
					t := strings.ToLower(o.Text)
					i := strings.Index(lowEx[after:], t)
					return o.Entry != m.Entry && i >= 0 && strings.Contains(t, l)
				}) {
					wraps = true
				}
			}
		}
		if !speaks || wraps {
			continue // the meaning is not in this layer, or goes on below it
		}
		lab := &tieLabel{sig: s, entry: m.Entry, words: contentWords(m.Entry), caps: map[string]string{}, stages: map[Stage]bool{},
			ex: ex, text: m.Text, at: strings.Index(ex, m.Text), exact: m.Entry.Literals() == most[m.Layer], lits: lits}
		if read.known() {
			lab.stages[read.stage()] = true
		}
		lab.context = outerValues(s.Patterns[pi], s.res[pi], ex, loc, lab.at, len(m.Text))
		names := make([]string, 0, len(m.Captures))
		for n := range m.Captures {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if v := strings.TrimSpace(m.Captures[n]); v != "" && !strings.ContainsAny(v, " \t") {
				lab.tokens = append(lab.tokens, n)
			}
		}
		for _, n := range names {
			v := normValue(m.Captures[n])
			if len(v) < 3 || !hasLetter(v) {
				continue
			}
			for _, l := range values {
				if strings.Contains(l, v) {
					lab.require = append(lab.require, v)
					lab.requireNames = append(lab.requireNames, n)
					break
				}
			}
		}
		for _, h := range held {
			lab.require = append(lab.require, h)
			lab.requireNames = append(lab.requireNames, "")
		}
		if m.Entry.Literals() < tieMinLiterals && len(lab.require) == 0 {
			continue // too little text to say the meaning without a value
		}
		// A signature capture corresponds to the catalog capture with its value, inside
		// the matched layer.
		at := strings.Index(ex, m.Text)
		last := m.Entry.LastCapture()
		for gi, gn := range s.res[pi].SubexpNames() {
			if gn == "" || loc[2*gi] < 0 {
				continue
			}
			gv := normValue(ex[loc[2*gi]:loc[2*gi+1]])
			if t := normValue(m.Text); len(t) > 0 && strings.HasSuffix(gv, t) {
				// The capture holds the entry's whole message (with what wraps it):
				// the line's message of the entry is the value it shows.
				lab.whole = append(lab.whole, gn)
				continue
			}
			if at < 0 || loc[2*gi] < at || loc[2*gi+1] > at+len(m.Text) {
				continue
			}
			// The catalog capture with the same value, else the one whose value the
			// signature's begins with (the part of it the entry's verb holds).
			pick := ""
			for _, n := range names {
				if cv := normValue(m.Captures[n]); gv != "" && cv == gv {
					pick = n
					break
				}
			}
			for _, n := range names {
				if cv := normValue(m.Captures[n]); pick == "" && len(cv) >= 3 && len(gv) > len(cv) && strings.HasPrefix(gv, cv) && !isWordChar(gv[len(cv)]) {
					pick = n
				}
			}
			if pick != "" {
				lab.caps[gn] = pick
				if pick == last {
					lab.last = append(lab.last, gn)
				}
			}
		}
		out = append(out, lab)
	}
	return out
}

// tieHit is a line a signature fires on through the catalog.
type tieHit struct {
	sig  *Signature
	caps map[string]string
	m    catalog.Match
}

// hits returns the signatures the line ties to, at most one hit each, outermost layer
// first. kindOK says whether a signature is tried on the line's kind of text.
func (t *tieSet) hits(text string, kindOK func(*Signature) bool) []tieHit {
	if len(t.bySite) == 0 || t.ac == nil || len(text) > 8<<10 {
		return nil
	}
	found := false
	t.ac.scan(text, func(int) { found = true })
	if !found {
		return nil
	}
	all := catalog.Default().Read(strings.TrimSpace(text))
	ms := slices.DeleteFunc(slices.Clone(all), func(m catalog.Match) bool { return !tieReadable(&m) })
	if len(ms) == 0 {
		return nil
	}
	layers := catalog.Layers(strings.TrimSpace(text))
	lowText := strings.ToLower(text)
	read := readMatches(strings.TrimSpace(text), "", "", all)
	var out []tieHit
	done := map[*Signature]bool{}
	for _, m := range ms {
		labels := t.bySite[m.Entry.Site()]
		if len(labels) == 0 {
			continue
		}
		lay := strings.ToLower(layers[m.Layer])
		words := contentWords(m.Entry)
		score := func(l *tieLabel) int { return nearness(m.Entry, words, l.entry, l.words) }
		for _, p := range labels {
			s := p.sig
			if p.quiet || done[s] || !kindOK(s) || !holdsAll(lay, p.require) || !holdsAll(lowText, p.context) {
				continue
			}
			if read.known() && read.stage() != s.Stage && !p.stages[read.stage()] {
				continue
			}
			if !read.known() && m.Layer > 0 {
				// An inner value under a wrapper no component is known to print: nothing
				// places the line on the signature's path.
				continue
			}
			pos, neg := 0, 0
			var best *tieLabel
			for _, l := range labels {
				if !holdsAll(lay, l.require) {
					continue
				}
				sc := score(l)
				switch {
				case l.sig == s && !l.quiet:
					if !l.shapeHolds(&m) {
						continue // the line's values are not of the example's shape
					}
					if l.entry == m.Entry && !l.exact && !containsAny(strings.ToLower(m.Text), l.lits) {
						// A general template that also reads the example ties a line
						// only when the line says the pattern's words too.
						continue
					}
					if sc > pos {
						pos, best = sc, l
					}
				case l.sig == s || l.quiet:
					// The signature's own near miss, or another's (which says nothing
					// about this one).
					if l.sig == s {
						neg = max(neg, sc)
					}
				case !l.sig.firesOnEntry(labels, l.entry, s):
					// A near miss: the signature's own, or another signature's reading
					// of the site that this signature's examples do not share.
					neg = max(neg, sc)
				}
			}
			if best == nil || pos <= neg || pos < 2 {
				continue
			}
			if best.entry == m.Entry && !slices.ContainsFunc(labels, func(l *tieLabel) bool {
				return l.sig == s && !l.quiet && l.entry == m.Entry && (!l.exact || l.sameValues(m.Text))
			}) {
				continue
			}
			done[s] = true
			out = append(out, tieHit{sig: s, caps: best.fill(m), m: m})
		}
	}
	return out
}

// firesOnEntry reports whether s ties the entry itself among labels: two signatures
// whose firing examples are the same message (a specific one and a general one) are not
// each other's near misses.
func (s *Signature) firesOnEntry(labels []*tieLabel, e *catalog.Entry, other *Signature) bool {
	for _, l := range labels {
		if l.sig == other && !l.quiet && l.entry == e {
			return true
		}
	}
	return false
}

// fill maps the line's catalog captures to the signature's captures: by the catalog
// capture's name, the wrapped rest by the closing verb of either template, and a capture
// that held the entry's whole message by the line's message of the entry.
func (l *tieLabel) fill(m catalog.Match) map[string]string {
	caps := map[string]string{}
	for sn, cn := range l.caps {
		if v, ok := m.Captures[cn]; ok {
			caps[sn] = unquoteValue(v)
		}
	}
	for _, sn := range l.whole {
		if _, ok := caps[sn]; !ok {
			caps[sn] = m.Text
		}
	}
	if last := m.Entry.LastCapture(); last != "" {
		for _, sn := range l.last {
			if _, ok := caps[sn]; !ok {
				caps[sn] = unquoteValue(m.Captures[last])
			}
		}
	}
	return caps
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// holdsAll reports whether layer (lower case) holds every value at a word's start; a
// value ending in "s" also matches without it (Kubernetes prints a resource singular or
// plural: `configmap "x" not found`, `configmaps "x" not found`).
func holdsAll(layer string, vals []string) bool {
	for _, v := range vals {
		if !holdsWord(layer, v) && !(len(v) > 4 && strings.HasSuffix(v, "s") && holdsWord(layer, v[:len(v)-1])) {
			return false
		}
	}
	return true
}

func holdsWord(s, v string) bool {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], v)
		if i < 0 {
			return false
		}
		at := from + i
		if at == 0 || !isWordChar(s[at-1]) || !isWordChar(v[0]) {
			return true
		}
		from = at + 1
	}
	return false
}

func isWordChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// normValue is a captured value compared across wordings: trimmed, unquoted, lower case.
func normValue(v string) string { return strings.ToLower(unquoteValue(v)) }

func unquoteValue(v string) string {
	v = strings.TrimSpace(v)
	for range 3 {
		t := strings.TrimSuffix(strings.TrimPrefix(v, `\"`), `\"`)
		t = strings.TrimSuffix(strings.TrimPrefix(t, `"`), `"`)
		t = strings.TrimSpace(t)
		if t == v {
			break
		}
		v = t
	}
	return v
}

// contentWords are the words of an entry's literal text that say something: four
// letters or more, and in at most one template in 200 of the catalog ("failed",
// "kubelet", "error" say nothing of which message it is).
// nearness is how near a line's entry (e, with its content words) is to a label's
// entry: the same entry is nearest of all, else the count of content words they share.
func nearness(e *catalog.Entry, words map[string]bool, label *catalog.Entry, labelWords map[string]bool) int {
	if label == e {
		return 1 << 20
	}
	n := 0
	for w := range words {
		if labelWords[w] {
			n++
		}
	}
	return n
}

func contentWords(e *catalog.Entry) map[string]bool {
	df := wordFrequency()
	limit := max(catalog.Default().Len()/200, 2)
	out := map[string]bool{}
	for _, w := range e.Words() {
		if len(w) >= 4 && df[w] <= limit {
			out[w] = true
		}
	}
	return out
}

var wordFrequency = sync.OnceValue(func() map[string]int {
	df := map[string]int{}
	for _, e := range catalog.Default().Entries() {
		seen := map[string]bool{}
		for _, w := range e.Words() {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	return df
})

// outerValues are the literal pieces (lower case, three characters or more) of the
// pattern's named captures whose values the example ex (matched at loc) holds outside
// its text [at, at+n): the values the meaning rests on around the entry that ties.
func outerValues(p string, re *regexp.Regexp, ex string, loc []int, at, n int) []string {
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil || at < 0 {
		return nil
	}
	index := map[string]int{}
	for i, name := range re.SubexpNames() {
		if name != "" {
			index[name] = i
		}
	}
	var out []string
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if r.Op == syntax.OpCapture && r.Name != "" {
			if gi, ok := index[r.Name]; ok && 2*gi+1 < len(loc) && loc[2*gi] >= 0 && (loc[2*gi+1] <= at || loc[2*gi] >= at+n) {
				value := strings.ToLower(ex[loc[2*gi]:loc[2*gi+1]])
				for _, l := range patternLiterals(r.Sub[0].String(), 3) {
					if strings.Contains(value, l) && !slices.Contains(out, l) {
						out = append(out, l)
					}
				}
			}
		}
		for _, sub := range r.Sub {
			walk(sub)
		}
	}
	walk(parsed)
	return out
}

// patternLiterals are the literal pieces of a pattern, lower case, of at least least
// characters with a letter (the words that carry a meaning need seven: "error", "taint"
// alone say too little; a value the pattern spells out needs three): the words the signature spells out.
func patternLiterals(p string, least int) []string {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if r.Op == syntax.OpLiteral {
			l := strings.ToLower(string(r.Rune))
			if t := strings.TrimSpace(l); len(t) >= least && hasLetter(t) {
				out = append(out, t)
			}
			return
		}
		for _, sub := range r.Sub {
			walk(sub)
		}
	}
	walk(re.Simplify())
	return out
}

// newFragmentSet is an automaton that finds any of frags (lower case), case ignored.
func newFragmentSet(frags []string) *literalSet {
	set := &literalSet{nsigs: 1}
	for range frags {
		set.sigs = append(set.sigs, []int{0})
	}
	set.ac = automaton(frags, true)
	return set
}

// signatureTieIndex is, per signature, the lines it fires on through the catalog.
type signatureTieIndex struct {
	mu    sync.Mutex
	done  map[*Signature]bool
	lines map[*Signature][]tiedLine
}

// tiedLine is one line a signature fires on through the catalog.
type tiedLine struct {
	line int
	tieHit
}

// tiedLines returns the lines s fires on through the catalog.
func (g *Graph) tiedLines(s *Signature) []tiedLine {
	g.sigTies.mu.Lock()
	defer g.sigTies.mu.Unlock()
	return g.sigTies.lines[s]
}

// tieSignatures finds, once per graph and list of signatures, the lines that tie to a
// signature through the catalog. A line one of the signatures' own patterns matches
// ties to none: an exact match comes first.
func (g *Graph) tieSignatures(sigs []*Signature) {
	g.sigTies.mu.Lock()
	defer g.sigTies.mu.Unlock()
	var todo []*Signature
	for _, s := range sigs {
		if !g.sigTies.done[s] {
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return
	}
	if g.sigTies.done == nil {
		g.sigTies.done, g.sigTies.lines = map[*Signature]bool{}, map[*Signature][]tiedLine{}
	}
	for _, s := range todo {
		g.sigTies.done[s] = true
	}
	t := signatureTies(sigs)
	if len(t.bySite) == 0 {
		return
	}
	want := map[*Signature]bool{}
	for _, s := range todo {
		want[s] = true
	}
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if !l.Fragment && (l.Kind() == TextLog || l.Kind() == TextJournal && !l.Warning) {
			continue // a container's own log, a journal's routine line
		}
		hits := t.hits(l.Text, func(s *Signature) bool { return want[s] && (s.where[l.Kind()] || l.Fragment) })
		if len(hits) == 0 || matchedByAny(sigs, l) {
			continue
		}
		for _, h := range hits {
			if h.sig.excluded(l.Text) {
				continue
			}
			g.sigTies.lines[h.sig] = append(g.sigTies.lines[h.sig], tiedLine{line: i, tieHit: h})
		}
	}
}

// matchedByAny reports whether a pattern of one of the signatures matches the line, as
// Signature.run tries it.
func matchedByAny(sigs []*Signature, l *Line) bool {
	for _, s := range sigs {
		if !s.where[l.Kind()] && !l.Fragment {
			continue
		}
		if _, ok := s.match(l.Text); ok {
			return true
		}
		if l.Reason() != "" && l.Kind() != TextLog {
			if _, ok := s.match(l.Reason() + ": " + l.Text); ok {
				return true
			}
		}
	}
	return false
}

// tieFinding is the signature's finding about a line it fires on through the catalog:
// its cause and fix with the captures the line's wording holds (one it does not hold is
// left a <placeholder>, never guessed), and the catalog entry the tie went through.
func (s *Signature) tieFinding(l *Line, t tiedLine) Finding {
	caps := t.caps
	for _, p := range rePlaceholder.FindAllStringSubmatch(reOptional.ReplaceAllString(s.Cause, ""), -1) {
		if _, ok := lookupValue(caps, p[1]); !ok && !builtinPlaceholders[p[1]] {
			caps = maps.Clone(caps)
			if im := reQuotedImage.FindStringSubmatch(l.Text); im != nil && slices.Contains(strings.Split(p[1], "|"), "image") {
				// The image the line quotes around the catalog's wording (containerd's
				// `failed to pull and unpack image "R": no match for platform in
				// manifest`): the reference, not the message.
				caps[p[1]] = im[1]
				continue
			}
			// A capture the catalog's wording does not hold: the message it printed
			// stands for it, rather than a <name> in the cause.
			caps[p[1]] = oneLine(t.m.Text)
		}
	}
	f := s.finding(l, caps)
	e := t.m.Entry
	rel := e.First
	if e.Last != "" && e.Last != e.First {
		rel += " – " + e.Last
	}
	f.Cause += " (this wording is printed by the same call site as the signature's, catalog entry " + e.ID + ", " + rel + ")"
	f.Catalog = []CatalogRef{{ID: e.ID, Component: e.Component, Layer: "signature", Stage: Stage(e.Stage), Template: e.Template,
		PrintedBy: e.Package + " " + e.Function + " (" + e.File + ":" + itoa(e.Line) + ")", Releases: rel, Text: oneLine(t.m.Text)}}
	return f
}

// SignatureTies lists, per signature ID, the catalog entries whose own example (the
// template with sample values) fires the signature through the catalog, and, per
// signature ID, the call sites its firing examples tie: what `podflow catalog` and the
// tests report.
func SignatureTies(sigs []*Signature) (entries, sites map[string][]string) {
	t := signatureTies(sigs)
	entries, sites = map[string][]string{}, map[string][]string{}
	for site, ls := range t.bySite {
		for _, l := range ls {
			if !l.quiet && !slices.Contains(sites[l.sig.ID], site) {
				sites[l.sig.ID] = append(sites[l.sig.ID], site)
			}
		}
	}
	for _, e := range catalog.Default().Entries() {
		if _, ok := t.bySite[e.Site()]; !ok {
			continue
		}
		for _, h := range t.hits(e.Example(), func(*Signature) bool { return true }) {
			if h.m.Entry == e {
				entries[h.sig.ID] = append(entries[h.sig.ID], e.ID)
			}
		}
	}
	for _, v := range sites {
		sort.Strings(v)
	}
	return entries, sites
}

// TieMatch is a signature a line fires through the catalog: the signature, the catalog
// entry of the line's layer that tied it, and the signature's captures filled.
type TieMatch struct {
	Signature string
	Entry     string
	Captures  map[string]string
}

// TieLine reads one line as the analysis does for a line no pattern of sigs matches: the
// signatures it fires through the catalog's call sites, outermost layer first. A line a
// pattern matches ties to none.
func TieLine(sigs []*Signature, text string) []TieMatch {
	l := &Line{Text: text, kind: textKindOf(TextText), Fragment: true}
	if matchedByAny(sigs, l) {
		return nil
	}
	var out []TieMatch
	for _, h := range signatureTies(sigs).hits(text, func(*Signature) bool { return true }) {
		if !h.sig.excluded(text) {
			out = append(out, TieMatch{Signature: h.sig.ID, Entry: h.m.Entry.ID, Captures: h.caps})
		}
	}
	return out
}
