package analyze

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"podflow.dev/podflow/catalog"
	"podflow.dev/podflow/untrusted"
)

// A Go rule reads a component's messages through its facts: a classifier on the fact
// (a pull's kind, a sandbox's failing part, a scheduler's reason) says which rule a
// message is. A message of another release, runtime or form the classifier does not know
// reaches no rule, and the floor's bare `catalog` finding stands where the rule's was
// expected. A rule tie carries the rule's finding to those wordings (docs/signatures.md,
// "Ties of Go rules"), derived the way signature ties are (signature_tie.go):
//
//   - a rule's examples are its own (Rule.Examples) and the firing and quiet examples of
//     its companion signatures (a signature whose rule field names it); each firing
//     example is read through the catalog, and every layer that carries a meaning of its
//     own names a call site (catalog.Entry.Site): a layer read by an entry that is not a
//     generic wrapper, under which no such entry reads a deeper part of the message;
//   - a value the entry captures bare (not quoted) that is a plain word (the resource of
//     `configmaps "cfg" not found`) is required in the line's layer;
//   - a line no signature's pattern matches and no signature ties is read through the
//     catalog; a layer read by an entry of a tied site ties the rule when the entry is
//     nearer to one of the rule's firing entries than to any near miss of the site (the
//     rule's quiet examples, the other rules' ties of the same site) and the line's own
//     reading places it at the rule's stage, or where the examples' readings place them.
//     Unlike a signature's, a rule's tie asks that the line be known at a stage, and an
//     inner layer that a layer outside it be known: a rule has no pattern to say a bare
//     inner value is its own;
//   - a line ties one rule at most: the nearest; between equally near ties the rule whose
//     stage comes first in the catalog's stage precedence, then the rule's ID.

// ruleLabel is one reading of one layer of a rule's example: a firing one or a near miss.
type ruleLabel struct {
	rule    *Rule
	quiet   bool
	entry   *catalog.Entry
	words   map[string]bool
	require []string
	stages  map[Stage]bool
	// outer is the call site of the outermost known layer of the firing example.
	outer string
}

// ruleTieSet is the ties of a list of Go rules.
type ruleTieSet struct {
	bySite map[string][]*ruleLabel
	// quietOuter are, per rule, the outermost call sites of its quiet examples that no
	// firing example has: a line under one of them is a near miss told apart by its
	// wrapper ("Error deleting network" around what "Error adding network" wraps).
	quietOuter map[*Rule]map[string]bool
	ac         *literalSet
	rules      []*Rule
	sigs       []*Signature
}

var (
	ruleTieMu    sync.Mutex
	ruleTieCache = map[string]*ruleTieSet{}
)

// ruleTies returns the ties of the Go rules among rules, with the examples of their
// companion signatures among sigs, derived once per list.
func ruleTies(rules []*Rule, sigs []*Signature) *ruleTieSet {
	var key strings.Builder
	var goRules []*Rule
	for _, r := range rules {
		if r.signature == nil {
			goRules = append(goRules, r)
			key.WriteString(r.ID + "\x01")
		}
	}
	key.WriteString("\x02")
	for _, s := range sigs {
		key.WriteString(s.File + "\x00" + s.ID + "\x00" + itoa(s.Line) + "\x01")
	}
	ruleTieMu.Lock()
	defer ruleTieMu.Unlock()
	if t, ok := ruleTieCache[key.String()]; ok && sameSigs(t.sigs, sigs) && slices.Equal(t.rules, goRules) {
		return t
	}
	t := deriveRuleTies(goRules, sigs)
	ruleTieCache[key.String()] = t
	return t
}

// ruleExamples are a Go rule's own examples and its companion signatures'.
func ruleExamples(r *Rule, sigs []*Signature) (fires, quiet []string) {
	fires = append(fires, r.Examples.Fires...)
	quiet = append(quiet, r.Examples.Quiet...)
	for _, s := range sigs {
		if s.ForRule == r.ID {
			fires = append(fires, s.Examples.Fires...)
			quiet = append(quiet, s.Examples.Quiet...)
		}
	}
	return fires, quiet
}

func deriveRuleTies(rules []*Rule, sigs []*Signature) *ruleTieSet {
	t := &ruleTieSet{bySite: map[string][]*ruleLabel{}, quietOuter: map[*Rule]map[string]bool{}, rules: rules, sigs: sigs}
	if catalog.Default().Len() == 0 || len(rules) == 0 {
		return t
	}
	// A wrapper is generic when the catalog places it on no one stage, or when it wraps
	// the examples of two meanings or more: two Go rules, a Go rule and a signature of
	// its own, two signatures ("Failed to pull image %q: %v" wraps every pull rule's).
	meanings := map[string]map[string]bool{}
	note := func(family, ex string, span [2]int) {
		for _, m := range tieMatches(ex) {
			if at := strings.Index(ex, m.Text); at < 0 || at >= span[1] || at+len(m.Text) <= span[0] {
				continue // another reason of a summary the example's message is one of
			}
			key := meaningKey(m)
			if meanings[key] == nil {
				meanings[key] = map[string]bool{}
			}
			meanings[key][family] = true
		}
	}
	for _, r := range rules {
		for _, ex := range r.Examples.Fires {
			note(r.ID, ex, [2]int{0, len(ex)})
		}
	}
	for _, s := range sigs {
		family := s.ID
		if s.ForRule != "" {
			family = s.ForRule
		}
		for _, ex := range s.Examples.Fires {
			if span, ok := s.messageSpan(ex); ok {
				note(family, ex, span)
			}
		}
	}
	// An entry read, with the same plain words in its captures, in the examples of two
	// meanings or more (a reason every pull failure shows, "ErrImagePull"; the
	// scheduler's "FailedScheduling") carries neither.
	shared := func(m catalog.Match) bool {
		return len(meanings[meaningKey(m)]) > 1 || m.Entry.LastCapture() != "" && m.Entry.Stage == ""
	}
	for _, r := range rules {
		var mine []*ruleLabel
		for _, ex := range r.Examples.Fires {
			mine = append(mine, exampleRuleTies(r, ex, [2]int{0, len(ex)}, shared)...)
		}
		for _, s := range sigs {
			if s.ForRule != r.ID {
				continue
			}
			for _, ex := range s.Examples.Fires {
				// A companion signature's pattern says where in the example the rule's
				// message is (one reason of a scheduler summary that lists several).
				if span, ok := s.messageSpan(ex); ok {
					mine = append(mine, exampleRuleTies(r, ex, span, shared)...)
				}
			}
		}
		_, quiet := ruleExamples(r, sigs)
		t.quietOuter[r] = map[string]bool{}
		for _, ex := range quiet {
			if rd := readChain(ex, ""); rd.known() && !slices.ContainsFunc(mine, func(p *ruleLabel) bool { return p.outer == rd.outer.Entry.Site() }) {
				t.quietOuter[r][rd.outer.Entry.Site()] = true
			}
		}
		for _, l := range mine {
			site := l.entry.Site()
			if !slices.ContainsFunc(t.bySite[site], func(o *ruleLabel) bool {
				return o.rule == r && !o.quiet && o.entry == l.entry && slices.Equal(o.require, l.require)
			}) {
				t.bySite[site] = append(t.bySite[site], l)
			}
		}
		for _, ex := range quiet {
			for _, m := range tieMatches(ex) {
				site := m.Entry.Site()
				if !slices.ContainsFunc(mine, func(p *ruleLabel) bool { return p.entry.Site() == site }) {
					continue
				}
				q := &ruleLabel{rule: r, quiet: true, entry: m.Entry, words: contentWords(m.Entry), require: bareWords(m)}
				// A near miss that reads as a firing example does is told apart outside
				// the tied layer, not by it.
				if !slices.ContainsFunc(t.bySite[site], func(o *ruleLabel) bool {
					return o.rule == r && o.entry == q.entry && slices.Equal(o.require, q.require)
				}) {
					t.bySite[site] = append(t.bySite[site], q)
				}
			}
		}
	}
	seen := map[string]bool{}
	var lits []string
	for _, e := range catalog.Default().Entries() {
		if _, ok := t.bySite[e.Site()]; !ok {
			continue
		}
		if fs := e.Fragments(); len(fs) > 0 && !seen[fs[0]] {
			seen[fs[0]] = true
			lits = append(lits, fs[0])
		}
	}
	sort.Strings(lits)
	if len(lits) > 0 {
		t.ac = newFragmentSet(lits)
	}
	return t
}

// exampleRuleTies reads one firing example of r: the layers that carry a meaning of
// their own.
// messageSpan is the part of ex that s's pattern says is its message: what its named
// captures hold, else its whole match.
func (s *Signature) messageSpan(ex string) ([2]int, bool) {
	for _, re := range s.res {
		if loc := re.FindStringSubmatchIndex(ex); loc != nil {
			return captureSpan(re.SubexpNames(), loc), true
		}
	}
	return [2]int{}, false
}

// captureSpan is the part of a pattern's match its named captures hold (the reason a
// scheduler summary's pattern picks out of several), else the whole match.
func captureSpan(names []string, loc []int) [2]int {
	span := [2]int{-1, -1}
	for i, n := range names {
		if n == "" || loc[2*i] < 0 {
			continue
		}
		if span[0] < 0 || loc[2*i] < span[0] {
			span[0] = loc[2*i]
		}
		span[1] = max(span[1], loc[2*i+1])
	}
	if span[0] < 0 {
		return [2]int{loc[0], loc[1]}
	}
	return span
}

// Only entries whose text lies inside span, the part of the example that is the rule's
// message, or that say part of it without wrapping it, are read (not a summary around it); a layer where two entries of different sites remain says two
// things, and neither is taken for the rule's.
func exampleRuleTies(r *Rule, ex string, span [2]int, shared func(catalog.Match) bool) []*ruleLabel {
	read := readChain(ex, "")
	if !read.known() {
		return nil // nothing places the example on the Pod path
	}
	ms := slices.DeleteFunc(tieMatches(ex), func(m catalog.Match) bool {
		at := strings.Index(ex, m.Text)
		inside := at >= span[0] && at+len(m.Text) <= span[1]
		overlaps := at >= 0 && at < span[1] && at+len(m.Text) > span[0]
		return shared(m) || !inside && (!overlaps || endsInVerb(m.Entry))
	})
	ms = slices.DeleteFunc(ms, func(m catalog.Match) bool {
		return slices.ContainsFunc(ms, func(o catalog.Match) bool { return o.Layer == m.Layer && o.Entry.Site() != m.Entry.Site() })
	})
	var out []*ruleLabel
	for _, m := range ms {
		if last := m.Entry.LastCapture(); last != "" {
			// The meaning goes on below when another entry reads a part of what this
			// one wraps.
			if wrapsKnown(m, tieMatches(ex)) {
				continue
			}
		}
		req := bareWords(m)
		if m.Entry.Literals() < tieMinLiterals && len(req) == 0 {
			continue // too little text to say the meaning without a value
		}
		out = append(out, &ruleLabel{rule: r, entry: m.Entry, words: contentWords(m.Entry), require: req,
			stages: map[Stage]bool{read.stage(): true}, outer: read.outer.Entry.Site()})
	}
	return out
}

// wrapsKnown reports whether another of ms reads a part of what m wraps: a wrapper
// around a known message says nothing of its own about it.
func wrapsKnown(m catalog.Match, ms []catalog.Match) bool {
	last := m.Entry.LastCapture()
	inner := strings.ToLower(m.Captures[last])
	if last == "" || strings.TrimSpace(inner) == "" {
		return false
	}
	return slices.ContainsFunc(ms, func(o catalog.Match) bool {
		t := strings.ToLower(o.Text)
		return o.Entry != m.Entry && t != "" && len(t) < len(strings.ToLower(m.Text)) && strings.Contains(inner, t)
	})
}

// endsInVerb reports whether a template ends in a value, before closing punctuation
// at most: a wrapper or a summary of what its verb holds.
func endsInVerb(e *catalog.Entry) bool {
	return reEndsInVerb.MatchString(e.Template)
}

var reEndsInVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z][\s.)\]]*$`)

// meaningKey is what one reading of a layer says: its call site and the plain words its
// captures hold (NotFound's "configmaps" and "secrets" are two meanings of one site).
func meaningKey(m catalog.Match) string {
	return m.Entry.Site() + "\x00" + strings.Join(bareWords(m), ",")
}

// reBareWord is a captured value that names a kind of thing rather than one thing: a
// plain lower-case word ("configmaps", "secrets"), not a quoted name, a number or a path.
var reBareWord = regexp.MustCompile(`^[a-z]{3,}$`)

// bareWords are the values of a match's captures, but the wrapped rest, that the line's
// layer must hold too.
func bareWords(m catalog.Match) []string {
	last := m.Entry.LastCapture()
	var names []string
	for n := range m.Captures {
		if n != last {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		if v := strings.TrimSpace(m.Captures[n]); reBareWord.MatchString(v) {
			out = append(out, v)
		}
	}
	return out
}

// ruleHit is a line a Go rule fires on through the catalog.
type ruleHit struct {
	rule *Rule
	m    catalog.Match
	// text is the line's message from the tied layer on.
	text string
}

// hit returns the rule the line ties to, if any (docs/signatures.md, "Ties of Go rules").
func (t *ruleTieSet) hit(text string) (ruleHit, bool) {
	text = strings.TrimSpace(text)
	if len(t.bySite) == 0 || t.ac == nil || len(text) > 8<<10 {
		return ruleHit{}, false
	}
	found := false
	t.ac.scan(text, func(int) { found = true })
	if !found {
		return ruleHit{}, false
	}
	all := catalog.Default().Read(text)
	read := readMatches(text, "", "", all)
	if !read.known() {
		return ruleHit{}, false
	}
	layers := catalog.Layers(text)
	readable := slices.DeleteFunc(slices.Clone(all), func(m catalog.Match) bool { return !tieReadable(&m) })
	var out ruleHit
	found = false
	for _, m := range readable {
		if found && m.Layer <= out.m.Layer {
			continue // a deeper layer's tie says the cause
		}
		if wrapsKnown(m, readable) {
			continue // what it wraps is known: that layer decides
		}
		if m.Layer > 0 && !slices.ContainsFunc(all, func(o catalog.Match) bool { return o.Layer < m.Layer && o.Entry.Stage != "" }) {
			// An inner message under wrappers no component on the path is known to
			// print (a tool's "stopping the pod sandbox failed"): nothing says it is
			// the rule's failure rather than another step's.
			continue
		}
		labels := t.bySite[m.Entry.Site()]
		if len(labels) == 0 {
			continue
		}
		lay := strings.ToLower(layers[m.Layer])
		words := contentWords(m.Entry)
		score := func(l *ruleLabel) int { return nearness(m.Entry, words, l.entry, l.words) }
		var best *Rule
		bestPos := 0
		for _, p := range labels {
			r := p.rule
			if p.quiet || !holdsAll(lay, p.require) {
				continue
			}
			if read.stage() != r.Stage && !p.stages[read.stage()] || t.quietOuter[r][read.outer.Entry.Site()] {
				continue
			}
			pos, neg := 0, 0
			for _, l := range labels {
				if !holdsAll(lay, l.require) {
					continue
				}
				sc := score(l)
				switch {
				case l.rule == r && !l.quiet:
					pos = max(pos, sc)
				case l.rule == r || !l.quiet && !ruleFiresOnEntry(labels, l.entry, r):
					// The rule's own near miss, or another rule's reading of the site
					// that this rule's examples do not share.
					neg = max(neg, sc)
				}
			}
			if pos <= neg || pos < 2 {
				continue
			}
			if best == nil || pos > bestPos || pos == bestPos && rulePrecedes(r, best) {
				best, bestPos = r, pos
			}
		}
		if best != nil {
			out, found = ruleHit{rule: best, m: m, text: read.layerText(&m)}, true
		}
	}
	return out, found
}

// ruleFiresOnEntry reports whether r ties the entry itself among labels: two rules whose
// examples are the same message are not each other's near misses.
func ruleFiresOnEntry(labels []*ruleLabel, e *catalog.Entry, r *Rule) bool {
	return slices.ContainsFunc(labels, func(l *ruleLabel) bool { return l.rule == r && !l.quiet && l.entry == e })
}

// rulePrecedes orders two rules that tie a line equally near: the stage the catalog's
// precedence puts first (the scheduler holds a Pod before anything else happens to it),
// then the rule's ID.
func rulePrecedes(a, b *Rule) bool {
	if ra, rb := catalog.StageRank(string(a.Stage)), catalog.StageRank(string(b.Stage)); ra != rb {
		return ra < rb
	}
	return a.ID < b.ID
}

// ruleTieIndex is, per Go rule, the lines it fires on through the catalog.
type ruleTieIndex struct {
	mu    sync.Mutex
	done  bool
	lines map[*Rule][]ruleTiedLine
}

// ruleTiedLines returns the lines r fires on through the catalog.
func (g *Graph) ruleTiedLines(r *Rule) []ruleTiedLine {
	g.ruleTies.mu.Lock()
	defer g.ruleTies.mu.Unlock()
	return g.ruleTies.lines[r]
}

type ruleTiedLine struct {
	line int
	ruleHit
}

// tieRules finds, once per graph, the lines that tie to a Go rule through the catalog:
// lines no signature's pattern matches and no signature ties (a signature's reading is
// more specific: it spells the wording out).
func (g *Graph) tieRules(rules []*Rule, sigs []*Signature) {
	g.ruleTies.mu.Lock()
	defer g.ruleTies.mu.Unlock()
	if g.ruleTies.done {
		return
	}
	g.ruleTies.done = true
	g.ruleTies.lines = map[*Rule][]ruleTiedLine{}
	t := ruleTies(rules, sigs)
	if len(t.bySite) == 0 {
		return
	}
	sigTied := map[int]bool{}
	g.sigTies.mu.Lock()
	for _, ls := range g.sigTies.lines {
		for _, l := range ls {
			sigTied[l.line] = true
		}
	}
	g.sigTies.mu.Unlock()
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if sigTied[i] || !l.Fragment && (l.Kind() == TextLog || l.Kind() == TextJournal && !l.Warning) {
			continue
		}
		h, ok := t.hit(l.Text)
		if !ok || matchedByAny(sigs, l) {
			continue
		}
		g.ruleTies.lines[h.rule] = append(g.ruleTies.lines[h.rule], ruleTiedLine{line: i, ruleHit: h})
	}
}

// ruleTieFinding is the rule's finding about a line it fires on through the catalog: the
// rule's title with the line's message from the tied layer on, its fix and its commands
// (the names the line gives filled in), and the catalog entry the tie went through.
func ruleTieFinding(r *Rule, l *Line, h ruleHit) Finding {
	e := h.m.Entry
	rel := e.First
	if e.Last != "" && e.Last != e.First {
		rel += " – " + e.Last
	}
	title := r.Title
	// The kubelet's pull wrapper names the image; the registry's inner words often name
	// only a tag or a repository.
	if m := reFailedToPull.FindStringSubmatch(l.Text); m != nil && r.Stage == StageImage && !strings.Contains(h.text, m[1]) {
		title += " (image " + m[1] + ")"
	}
	cause := title + ": " + quoteText(oneLine(h.text)) + " (this wording is printed by a call site of the rule's messages, catalog entry " + e.ID + ", " + rel + ")"
	vals := map[string]string{"NODE": l.Node(), "CONTAINER": l.Container()}
	if l.Pod != nil {
		vals["POD"], vals["NAMESPACE"] = l.Pod.meta.Name, l.Pod.meta.Namespace
	} else if o := l.Object(); o.Kind == "Pod" && o.Name != UnknownSubject {
		vals["POD"], vals["NAMESPACE"] = o.Name, o.Namespace
	}
	fix, confirm := docSections(r.Doc)
	for i, c := range confirm {
		complete := true
		c = reDocPlaceholder.ReplaceAllStringFunc(c, func(p string) string {
			if v := vals[p]; untrusted.IsName(v) {
				return v // a valid object name, safe in a command as it is
			}
			complete = false
			return p
		})
		if !complete {
			c += "   # fill in the placeholders: the evidence does not name them"
		}
		confirm[i] = c
	}
	if fix == "" {
		fix = "See `podflow rules " + r.ID + "`."
	}
	ev := l.Evidence()
	ev.Excerpt = Excerpt(ev.Excerpt)
	return Finding{Subjects: l.Subjects(), Cause: cause, Remediation: fix, Confirm: confirm, Evidence: []Evidence{ev},
		GroupKey: cause + "\x00" + subjectKey(l),
		Catalog: []CatalogRef{{ID: e.ID, Component: e.Component, Layer: "rule", Stage: Stage(e.Stage), Template: e.Template,
			PrintedBy: e.Package + " " + e.Function + " (" + e.File + ":" + itoa(e.Line) + ")", Releases: rel, Text: oneLine(h.m.Text)}}}
}

// reDocPlaceholder is a value a rule's documented command leaves to its reader.
var reDocPlaceholder = regexp.MustCompile(`\b(?:NAMESPACE|POD|NODE|CONTAINER)\b`)

// docSections reads a rule's documentation: the text of its "## Fix" section and the
// commands of its "## Confirm on a live cluster" section (its indented lines).
func docSections(doc string) (fix string, confirm []string) {
	section := ""
	var fixLines []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimSpace(strings.TrimPrefix(line, "## "))
			continue
		}
		switch {
		case strings.HasPrefix(section, "Confirm"):
			if c := strings.TrimSpace(line); c != "" && strings.HasPrefix(line, "    ") {
				confirm = append(confirm, c)
			}
		case section == "Fix":
			fixLines = append(fixLines, line)
		}
	}
	return strings.Join(strings.Fields(strings.Join(fixLines, " ")), " "), confirm
}

// RuleTieLine reads one line as the analysis does for a line no signature reads: the Go
// rule it fires through the catalog's call sites, and the catalog entry that tied it.
func RuleTieLine(rules []*Rule, sigs []*Signature, text string) (rule, entry string, ok bool) {
	l := &Line{Text: text, kind: textKindOf(TextText), Fragment: true}
	if matchedByAny(sigs, l) || len(signatureTies(sigs).hits(text, func(*Signature) bool { return true })) > 0 {
		return "", "", false
	}
	h, ok := ruleTies(rules, sigs).hit(text)
	if !ok {
		return "", "", false
	}
	return h.rule.ID, h.m.Entry.ID, true
}

// RuleTies lists, per Go rule ID, the call sites its examples tie and the catalog
// entries whose own example (the template with sample values) fires it through the
// catalog: what the tests report.
func RuleTies(rules []*Rule, sigs []*Signature) (entries, sites map[string][]string) {
	t := ruleTies(rules, sigs)
	entries, sites = map[string][]string{}, map[string][]string{}
	for site, ls := range t.bySite {
		for _, l := range ls {
			if !l.quiet && !slices.Contains(sites[l.rule.ID], site) {
				sites[l.rule.ID] = append(sites[l.rule.ID], site)
			}
		}
	}
	for _, e := range catalog.Default().Entries() {
		if _, ok := t.bySite[e.Site()]; !ok {
			continue
		}
		if h, ok := t.hit(e.Example()); ok && h.m.Entry == e {
			entries[h.rule.ID] = append(entries[h.rule.ID], e.ID)
		}
	}
	for _, v := range sites {
		sort.Strings(v)
	}
	return entries, sites
}
