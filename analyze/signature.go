package analyze

import (
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"podflow.dev/podflow/catalog"
	"podflow.dev/podflow/logline"
	"podflow.dev/podflow/untrusted"
)

// Signature is knowledge of what a message means, held as data (docs/signatures.md):
// the component that prints it, a pattern with named captures, the stage it breaks,
// a cause template, the fix, how to confirm it live, the source that prints it and the
// real incidents that show it. Signatures become findings through Rule.
type Signature struct {
	ID        string     `json:"id"`
	Stage     Stage      `json:"stage"`
	Title     string     `json:"title"`
	Component string     `json:"component"`
	Versions  string     `json:"versions,omitempty"`
	PrintedBy string     `json:"printedBy"`
	Where     []TextKind `json:"where"`
	Patterns  []string   `json:"patterns"`
	// Unless lists patterns that, matching the same text, mean the message is not this
	// signature's case (a transient of a volume every pod has, a benign variant).
	Unless   []string `json:"unless,omitempty"`
	Cause    string   `json:"cause"`
	Fix      string   `json:"fix"`
	Confirm  []string `json:"confirm,omitempty"`
	Doc      string   `json:"doc,omitempty"`
	Severity Severity `json:"severity"`
	Examples struct {
		Fires []string `json:"fires"`
		Quiet []string `json:"quiet"`
	} `json:"examples"`
	Incidents []string `json:"incidents,omitempty"`
	// ForRule names the Go rule whose message knowledge this is: its findings are that
	// rule's, made from the message alone when the evidence lacks the structure the rule
	// reasons over (a pasted event row without the objects). The rule wins where it fires.
	ForRule string `json:"rule,omitempty"`
	// Fallback marks a reading of last resort (exit code 137 without a reason): it
	// yields a pod to any Go rule's finding about it, at whatever stage.
	Fallback bool `json:"fallback,omitempty"`
	// NodeCondition marks a refusal that a node condition causes when the message names
	// no other cause (taints it does not name): a node-stage finding about the same pod
	// is the root (Finding.NodeCondition).
	NodeCondition bool `json:"nodeCondition,omitempty"`
	// Change names where the cause is fixed (docs/signatures.md); without it the
	// stage's default applies.
	Change *ChangeSpec `json:"change,omitempty"`
	// Fingerprint names the captures that say which cause of the signature's this is
	// (the resource, the reason): the index keys "same cause" on the signature's ID and
	// their values, masked, instead of its whole cause sentence. Empty keeps that default.
	Fingerprint []string `json:"fingerprint,omitempty"`
	// File is where the signature was read from ("built-in" for podflow's own).
	File string `json:"file"`
	// Line is the signature's line in File.
	Line int `json:"line"`

	res []*regexp.Regexp
	// cost is the instructions of the compiled programs of its patterns and unless.
	cost   int
	unless []*regexp.Regexp
	lits   []literal // per pattern, a literal every match contains, or ""
	// alts is, per pattern without such a literal, literals one of which every match
	// contains (requiredAlternatives), or nil.
	alts [][]literal
	// musts is, per pattern, the other literals every match contains, and sets of
	// literals one of which it contains (requiredClauses): a text that lacks one is
	// not tried on the pattern.
	musts [][][]literal
	// evidence are the evidence values its cause names ({evidenceImage}, ...).
	evidence []evidenceValue
	where    map[TextKind]bool
}

// Limits on what a signature file may ask of the matcher; Go's regexp is linear in the
// text, but the work is also linear in pattern size and count.
const (
	maxPatternBytes       = 1000
	maxPatternsPerSig     = 20
	maxSignatures         = 5000
	maxSignatureFileBytes = 4 << 20
	// maxPatternInsts caps one pattern's compiled program; the largest built-in
	// pattern compiles to under 500 instructions.
	maxPatternInsts = 2000
)

// MaxSignaturesCost caps the summed Cost of the user's signatures, five times that of
// the built-in catalog (about 20,000): every line of a bundle is tried on them, so
// their total, more than their count or bytes, is what an analysis pays.
const MaxSignaturesCost = 100_000

// MaxSignatureFileBytes is the largest signature file podflow reads.
const MaxSignatureFileBytes = maxSignatureFileBytes

// builtinPlaceholders are filled from a finding's subject.
var builtinPlaceholders = map[string]bool{"pod": true, "namespace": true, "node": true, "container": true, "object": true}

// rePlaceholder is {name} in a template, or {a|b}: the first of the names with a value.
var rePlaceholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*(?:\|[A-Za-z_][A-Za-z0-9_]*)*)\}`)

// reOptional is an optional part of a cause or fix, [[ ... {name} ... ]]: it is written
// (without the brackets) only when every placeholder in it has a value, so a template
// can say a value one wording of the message holds and another does not (the tag of
// "reading manifest TAG in REPO", the node of an event's source).
var reOptional = regexp.MustCompile(`\[\[((?:[^\]]|\][^\]])*?)\]\]`)

// compile checks a signature and prepares its matcher; the error names the field.
func (s *Signature) compile() *FieldError {
	if !reID.MatchString(s.ID) {
		return &FieldError{Field: "id", Msg: "must be kebab-case (a-z, 0-9, -), e.g. image-pull-manifest-unknown"}
	}
	if !s.Stage.Valid() {
		return &FieldError{Field: "stage", Msg: "unknown stage " + quote(string(s.Stage)) + "; one of " + stageList()}
	}
	for field, v := range map[string]string{"title": s.Title, "cause": s.Cause, "fix": s.Fix, "component": s.Component} {
		if strings.TrimSpace(v) == "" {
			return &FieldError{Field: field, Msg: "is required"}
		}
	}
	switch s.Severity {
	case "":
		s.Severity = SeverityError
	case SeverityError, SeverityWarning:
	default:
		return &FieldError{Field: "severity", Msg: "must be error or warning"}
	}
	if fe := s.Change.check(); fe != nil {
		return fe
	}
	if len(s.Patterns) == 0 {
		return &FieldError{Field: "patterns", Msg: "at least one pattern is required"}
	}
	if len(s.Patterns) > maxPatternsPerSig {
		return &FieldError{Field: "patterns", Msg: "more than " + itoa(maxPatternsPerSig) + " patterns"}
	}
	s.where = map[TextKind]bool{}
	for _, w := range s.Where {
		if !validTextKind(w) {
			return &FieldError{Field: "where", Msg: "unknown kind " + quote(string(w)) + "; one of event, status, journal, log, text"}
		}
		s.where[w] = true
	}
	if len(s.Where) == 0 {
		for _, k := range TextKinds {
			s.where[k] = true
		}
	}
	s.res, s.lits, s.alts, s.musts, s.cost = nil, nil, nil, nil, 0
	var common map[string]bool
	var perPattern []map[string]bool
	for i, p := range s.Patterns {
		re, insts, fe := compilePattern("patterns["+itoa(i)+"]", p)
		if fe != nil {
			return fe
		}
		s.cost += insts
		names := map[string]bool{}
		for _, n := range re.SubexpNames() {
			if n != "" {
				names[n] = true
			}
		}
		perPattern = append(perPattern, names)
		if common == nil {
			common = maps.Clone(names)
		} else {
			for n := range common {
				if !names[n] {
					delete(common, n)
				}
			}
		}
		s.res = append(s.res, re)
		lit := requiredLiteral(p)
		var alts []literal
		if lit.s == "" {
			alts = requiredAlternatives(p)
		}
		s.lits, s.alts = append(s.lits, lit), append(s.alts, alts)
		s.musts = append(s.musts, requiredClauses(p, lit, alts))
	}
	if len(s.Unless) > maxPatternsPerSig {
		return &FieldError{Field: "unless", Msg: "more than " + itoa(maxPatternsPerSig) + " patterns"}
	}
	s.unless = nil
	for i, p := range s.Unless {
		re, insts, fe := compilePattern("unless["+itoa(i)+"]", p)
		if fe != nil {
			return fe
		}
		s.cost += insts
		s.unless = append(s.unless, re)
	}
	s.evidence = nil
	for _, e := range evidenceValues {
		if strings.Contains(s.Cause, "{"+e.name+"}") {
			s.evidence = append(s.evidence, e)
		}
	}
	templates := map[string]string{"cause": s.Cause, "fix": s.Fix}
	for i, c := range s.Confirm {
		templates["confirm["+itoa(i)+"]"] = c
	}
	for field, t := range templates {
		if fe := checkPlaceholders(field, t, perPattern, !strings.HasPrefix(field, "confirm")); fe != nil {
			return fe
		}
	}
	for i, n := range s.Fingerprint {
		if !common[n] && !builtinPlaceholders[n] {
			return &FieldError{Field: "fingerprint[" + itoa(i) + "]", Msg: quote(n) + " is not a capture of every pattern nor one of pod, namespace, node, container"}
		}
	}
	if len(s.Examples.Fires) == 0 || len(s.Examples.Quiet) == 0 {
		return &FieldError{Field: "examples", Msg: "needs at least one fires and one quiet example"}
	}
	for i, ex := range s.Examples.Fires {
		if _, ok := s.match(ex); !ok {
			return &FieldError{Field: "examples.fires[" + itoa(i) + "]", Msg: "no pattern matches it"}
		}
	}
	for i, ex := range s.Examples.Quiet {
		if _, ok := s.match(ex); ok {
			return &FieldError{Field: "examples.quiet[" + itoa(i) + "]", Msg: "a pattern matches it"}
		}
	}
	return nil
}

// checkPlaceholders checks the placeholders of one template: outside an optional part
// ([[ ... ]], in a cause or fix), every pattern must capture one of a placeholder's
// names (or a name is one of the subject's); inside one, some pattern must.
func checkPlaceholders(field, t string, perPattern []map[string]bool, optional bool) *FieldError {
	captured := func(names []string, any bool) bool {
		for _, set := range perPattern {
			ok := false
			for _, n := range names {
				if builtinPlaceholders[n] || set[n] || any && wrapperPlaceholders[n] {
					ok = true
					break
				}
			}
			if any && ok {
				return true
			}
			if !any && !ok {
				return false
			}
		}
		return !any
	}
	check := func(t string, any bool) *FieldError {
		for _, m := range rePlaceholder.FindAllStringSubmatch(t, -1) {
			if !captured(strings.Split(m[1], "|"), any) {
				if any {
					return &FieldError{Field: field, Msg: "{" + m[1] + "} is not a capture of any pattern nor one of {pod} {namespace} {node} {container} {workload} {volume} {plugin}"}
				}
				return &FieldError{Field: field, Msg: "{" + m[1] + "} is not a capture of every pattern nor one of {pod} {namespace} {node} {container} (write it inside [[ ]] if only some wordings hold it)"}
			}
		}
		return nil
	}
	if optional {
		for _, m := range reOptional.FindAllStringSubmatch(t, -1) {
			if fe := check(m[1], true); fe != nil {
				return fe
			}
		}
		t = reOptional.ReplaceAllString(t, "")
	}
	return check(t, false)
}

// compilePattern compiles one pattern of a signature within the size caps: its text,
// and the program it compiles to (x{1000} is 7 bytes and a thousand instructions;
// matching costs the program's size on every line tried). It returns the program's
// instruction count, which the signature set's budget adds up.
func compilePattern(field, p string) (*regexp.Regexp, int, *FieldError) {
	if len(p) > maxPatternBytes {
		return nil, 0, &FieldError{Field: field, Msg: "longer than " + itoa(maxPatternBytes) + " bytes"}
	}
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, 0, &FieldError{Field: field, Msg: err.Error()}
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, &FieldError{Field: field, Msg: err.Error()}
	}
	if len(prog.Inst) > maxPatternInsts {
		return nil, 0, &FieldError{Field: field, Msg: "compiles to " + itoa(len(prog.Inst)) + " instructions, more than " + itoa(maxPatternInsts) + ": use fewer or smaller repetitions"}
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, 0, &FieldError{Field: field, Msg: err.Error()}
	}
	return re, len(prog.Inst), nil
}

// Cost is the size of the programs the signature's patterns compile to: what it
// costs to try it on a line, relative to other signatures.
func (s *Signature) Cost() int { return s.cost }

var reID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func validTextKind(k TextKind) bool {
	for _, v := range TextKinds {
		if v == k {
			return true
		}
	}
	return false
}

func stageList() string {
	names := make([]string, len(Stages))
	for i, s := range Stages {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func quote(s string) string { return `"` + untrusted.Text(s) + `"` }

// literal is a string every match of a pattern contains: as written, or, for a pattern
// that ignores case, in lower case and compared with the text in lower case.
type literal struct {
	s    string
	fold bool
}

// in reports whether text holds the literal. A literal as written is looked for as
// is: a match holds it exactly, so no lower-case copy of every line is needed.
func (l literal) in(text string) bool {
	if l.fold {
		return containsLower(text, l.s)
	}
	return strings.Contains(text, l.s)
}

// containsLower reports whether strings.ToLower(s) contains lit, which is in lower
// case, without building that copy when s is ASCII.
func containsLower(s, lit string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), lit)
		}
	}
	n := len(lit)
	for i := 0; i+n <= len(s); i++ {
		if lowerASCII(s[i]) != lit[0] {
			continue
		}
		j := 1
		for j < n && lowerASCII(s[i+j]) == lit[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// requiredLiteral returns the longest literal that every match of the pattern
// contains (a top-level literal or concatenation element), or an empty literal when
// there is none.
func requiredLiteral(pattern string) literal {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return literal{}
	}
	re = re.Simplify()
	best := literal{}
	consider := func(s string, fold bool) {
		lit := literal{s: s, fold: fold}
		if lit.fold {
			lit.s = strings.ToLower(lit.s)
		}
		if len(lit.s) > len(best.s) {
			best = lit
		}
	}
	// Every element of a concatenation is in every match, and so is what a capture
	// holds: the walk goes down through both (a named capture often wraps the whole
	// message) and stops at anything that may match without its parts. What a group
	// repeated once or more holds is in every match too, but of a literal there only
	// its words count (repeated): the signatures' index finds a line by its text as
	// given, match also tries a wrapped message with its lines joined, and a word is
	// in the one wherever it is in the other. A pattern such as the scheduler's taint
	// message, whose only literals are in a repeated group, was otherwise tried on
	// every line of the evidence (at 20k pods, 1.7 s of CPU for no finding).
	var walk func(r *syntax.Regexp, repeated bool)
	walk = func(r *syntax.Regexp, repeated bool) {
		switch r.Op {
		case syntax.OpLiteral:
			fold := r.Flags&syntax.FoldCase != 0
			if !repeated {
				consider(string(r.Rune), fold)
				break
			}
			for _, w := range strings.Fields(string(r.Rune)) {
				consider(w, fold)
			}
		case syntax.OpCapture, syntax.OpConcat:
			for _, sub := range r.Sub {
				walk(sub, repeated)
			}
		case syntax.OpPlus:
			walk(r.Sub[0], true)
		}
	}
	walk(re, false)
	return best
}

// requiredAlternatives returns literals one of which every match of the pattern
// contains, for a pattern without a single one (requiredLiteral): the alternatives of
// an alternation every match goes through, each branch standing for its own required
// literal or alternatives, as in "(?:powered|shut|turned) (?:off|down) ... (?:Terminating|Unknown)".
// Of several such alternations, the one whose shortest literal is longest; nil when
// there is none. With them the signature is looked for only on the lines that hold one
// (signatureLines) instead of every line.
func requiredAlternatives(pattern string) []literal {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return alternativesOf(re.Simplify(), 0)
}

// maxAlternatives bounds the literals of one set, and alternativesDepth how deep in
// nested alternations they are looked for.
const (
	maxAlternatives   = 32
	alternativesDepth = 4
)

func alternativesOf(re *syntax.Regexp, depth int) []literal {
	var best []literal
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			lit := literalOf(r)
			if shortestLiteral([]literal{lit}) > shortestLiteral(best) {
				best = []literal{lit}
			}
		case syntax.OpCapture, syntax.OpConcat:
			for _, sub := range r.Sub {
				walk(sub)
			}
		case syntax.OpAlternate:
			if depth >= alternativesDepth {
				return
			}
			var set []literal
			for _, b := range r.Sub {
				bl := alternativesOf(b, depth+1)
				if len(bl) == 0 || len(set)+len(bl) > maxAlternatives {
					return // a branch that needs no literal: the alternation needs none
				}
				set = append(set, bl...)
			}
			if shortestLiteral(set) > shortestLiteral(best) {
				best = set
			}
		}
	}
	walk(re)
	return best
}

// literalOf is a literal node of a parsed pattern, in lower case when it ignores case.
func literalOf(r *syntax.Regexp) literal {
	l := literal{s: string(r.Rune), fold: r.Flags&syntax.FoldCase != 0}
	if l.fold {
		l.s = strings.ToLower(l.s)
	}
	return l
}

// shortestLiteral is the length of the shortest of lits, 0 for none.
func shortestLiteral(lits []literal) int {
	n := 0
	for i, l := range lits {
		if i == 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

// requiredClauses returns what every match of the pattern contains besides lit and
// alts (the literal or the set the signatures' index looks for): each clause is one
// literal, or literals one of which a match holds (an alternation every match goes
// through, alternativesOf). They are the elements of the pattern's concatenation,
// looked for down through captures and groups repeated once or more. A pattern whose
// index literal is common ("http", " in ") was tried on every line that held it: at
// 20k pods, every image pull's line, for the rate limit's and the credentials'
// messages, which a line holds only with their status ("429 Too Many Requests",
// "Unauthorized"). Each clause is looked for in the text the pattern is tried on, as
// the index literal is, so a text a clause is missing from cannot match.
func requiredClauses(pattern string, lit literal, alts []literal) [][]literal {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var out [][]literal
	seen := map[literal]bool{lit: true}
	add := func(c []literal) {
		if len(c) == 0 || slices.Equal(c, alts) || len(c) == 1 && (seen[c[0]] || len(c[0].s) < 2) {
			return // nothing, what the index looks for, or a byte nearly every text holds
		}
		for _, l := range c {
			if l.fold {
				// A literal that ignores case is looked for in lower case, which is not
				// quite the regexp's case folding (the Kelvin sign is a k to it): the
				// index literal is the only one taken so.
				return
			}
		}
		if len(c) == 1 {
			seen[c[0]] = true
		}
		out = append(out, c)
	}
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			add([]literal{literalOf(r)})
		case syntax.OpCapture, syntax.OpConcat:
			for _, sub := range r.Sub {
				walk(sub)
			}
		case syntax.OpPlus:
			walk(r.Sub[0])
		case syntax.OpAlternate:
			add(alternativesOf(r, 0))
		}
	}
	walk(re.Simplify())
	return out
}

// allIn reports whether text holds every clause: one literal of each.
func allIn(clauses [][]literal, text string) bool {
	for _, c := range clauses {
		if !anyIn(c, text) {
			return false
		}
	}
	return true
}

// anyIn reports whether text holds one of lits.
func anyIn(lits []literal, text string) bool {
	for _, l := range lits {
		if l.in(text) {
			return true
		}
	}
	return false
}

// match tries the patterns in order on one text; a message a table or terminal wrapped
// over several lines (an event row's continuation lines) is also tried as one line,
// since the patterns know the message as its component printed it.
func (s *Signature) match(text string) (map[string]string, bool) {
	return s.matchCounted(text, nil)
}

// matchCounted is match for a reader that tries many texts in turn (run): tries
// counts, per pattern, the texts that held its literals and those it matched.
func (s *Signature) matchCounted(text string, tries *patternTries) (map[string]string, bool) {
	caps, ok := s.matchText(text, tries)
	if !ok && strings.IndexByte(text, '\n') >= 0 {
		caps, ok = s.matchText(unwrapLines(text), tries)
	}
	return caps, ok
}

// patternTries counts, per pattern of a signature, the texts it was tried on and
// those it matched.
type patternTries struct {
	tried, matched []int
}

// likely reports whether pattern i matched most of the texts it was tried on, after a
// few: where it does (a signature of a common failure, on every line of every pod that
// has it) the search that tracks captures is run at once, as the cheaper search would
// only find the match again. Either way the outcome is the same.
func (t *patternTries) likely(i int) bool {
	return t != nil && i < len(t.tried) && t.tried[i] >= 8 && 2*t.matched[i] > t.tried[i]
}

func (t *patternTries) count(i int, matched bool) {
	if t == nil {
		return
	}
	for len(t.tried) <= i {
		t.tried, t.matched = append(t.tried, 0), append(t.matched, 0)
	}
	t.tried[i]++
	if matched {
		t.matched[i]++
	}
}

// reLineBreak is a line break with the indentation around it.
var reLineBreak = regexp.MustCompile(`[ \t\r]*\n[ \t]*`)

// unwrapLines joins the lines of a wrapped message with single spaces.
func unwrapLines(text string) string { return reLineBreak.ReplaceAllString(text, " ") }

func (s *Signature) matchText(text string, tries *patternTries) (map[string]string, bool) {
	// A ticket's title or sentence capitalizes the message it quotes ("Container has
	// runAsNonRoot and …"); the component printed it in lower case. A message quoted
	// once more (a structured log's err="…", a Go %q, a JSON string) has its quotes
	// escaped ("violates PodSecurity \"restricted:v1.24\""). Such a text is tried as
	// printed first, so that the values it captures are as the component wrote them,
	// then as given.
	// A message quoted twice (a JSON Status inside a logfmt msg="…": \\\" around a
	// name) is unescaped one level at a time.
	forms := [4]string{text}
	n := 1
	if strings.Contains(text, `\"`) {
		once := catalog.UnescapeOnce(text)
		forms[0], forms[1] = once, text
		n++
		if strings.Contains(once, `\"`) {
			forms[0], forms[1], forms[2] = catalog.UnescapeOnce(once), once, text
			n++
		}
	}
	if len(text) > 1 && text[0] >= 'A' && text[0] <= 'Z' && text[1] >= 'a' && text[1] <= 'z' {
		forms[n] = string(text[0]+'a'-'A') + text[1:]
		n++
	}
	for i, re := range s.res {
		for _, t := range forms[:n] {
			if lit := s.lits[i]; lit.s != "" && !lit.in(t) {
				continue
			}
			if i < len(s.alts) && len(s.alts[i]) > 0 && !anyIn(s.alts[i], t) {
				continue
			}
			if i < len(s.musts) && !allIn(s.musts[i], t) {
				continue
			}
			// Nearly every line that holds the literal still does not match: finding
			// that out without tracking captures is the cheaper search, unless the
			// pattern matched most of the texts before (patternTries.likely).
			if !tries.likely(i) && !re.MatchString(t) {
				tries.count(i, false)
				continue
			}
			m := re.FindStringSubmatch(t)
			tries.count(i, m != nil)
			if m == nil {
				continue
			}
			if s.excluded(t) {
				return nil, false
			}
			caps := map[string]string{}
			for j, name := range re.SubexpNames() {
				if name != "" && j < len(m) {
					caps[name] = m[j]
					if strings.ContainsAny(m[j], "\n\r\t") || strings.Contains(m[j], "   ") {
						// A message its program wrapped over lines (util-linux's mount,
						// an event's message with newlines), or that YAML folded into a
						// run of spaces, reads as one line in a cause.
						caps[name] = strings.Join(strings.Fields(m[j]), " ")
					}
				}
			}
			return caps, true
		}
	}
	return nil, false
}

// matchStart is where in text the signature's first matching pattern begins, or -1.
func (s *Signature) matchStart(text string) int {
	for _, re := range s.res {
		if loc := re.FindStringIndex(text); loc != nil {
			return loc[0]
		}
	}
	return -1
}

// Explain tries the signature on one text, as a Go rule that reasons over a node's or a
// pod's history may (the line a kubelet exited on): on a match it returns the cause and
// fix filled from the captures, with vals ({node}, {pod}, ...) for the rest.
func (s *Signature) Explain(text string, vals map[string]string) (cause, fix string, ok bool) {
	caps, ok := s.match(text)
	if !ok {
		return "", "", false
	}
	all := map[string]string{}
	for k, v := range vals {
		all[k] = v
	}
	for k, v := range caps {
		all[k] = v
	}
	cause, _ = fill(s.Cause, all, false)
	fix, _ = fill(s.Fix, all, false)
	return cause, fix, true
}

// ExplainKey is Explain for one stored line: the cause, and the fleet key its
// fingerprint captures make (empty without a fingerprint field).
func (s *Signature) ExplainKey(text string) (cause, key string, ok bool) {
	caps, ok := s.match(text)
	if !ok {
		return "", "", false
	}
	cause, _ = fill(s.Cause, caps, false)
	return cause, s.fleetKey(caps), true
}

// fleetKey joins the values of the fingerprint's captures, name=value, in the
// fingerprint's order.
func (s *Signature) fleetKey(vals map[string]string) string {
	if len(s.Fingerprint) == 0 {
		return ""
	}
	parts := make([]string, len(s.Fingerprint))
	for i, n := range s.Fingerprint {
		parts[i] = n + "=" + strings.TrimSpace(vals[n])
	}
	return strings.Join(parts, " ")
}

// excluded reports whether one of the unless patterns matches text.
func (s *Signature) excluded(text string) bool {
	for _, re := range s.unless {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// fill replaces {name} placeholders with captures and subject values; in a command
// (shell true) every value is shell-quoted, and a value that is unknown or not a valid
// Kubernetes name (for pod, namespace, node) is left as a <name> placeholder.
//
// Outside a command, a {a|b} placeholder takes the first of its names with a value, and
// an optional part [[ ... ]] is written only when all its placeholders have one.
func fill(t string, caps map[string]string, shell bool) (string, bool) {
	if !shell && strings.Contains(t, "[[") {
		t = reOptional.ReplaceAllStringFunc(t, func(m string) string {
			inner := m[2 : len(m)-2]
			for _, p := range rePlaceholder.FindAllStringSubmatch(inner, -1) {
				if _, ok := lookupValue(caps, p[1]); !ok {
					return ""
				}
			}
			return inner
		})
	}
	complete := true
	out := rePlaceholder.ReplaceAllStringFunc(t, func(m string) string {
		names := m[1 : len(m)-1]
		name, v, ok := lookupName(caps, names)
		if !ok || (shell && builtinPlaceholders[name] && name != "container" && !untrusted.IsName(v)) {
			complete = false
			return "<" + name + ">"
		}
		if shell {
			return untrusted.ShellArg(v)
		}
		return v
	})
	return out, complete
}

// lookupValue is the value of a placeholder's names ("image|repo"): the first with a
// non-blank value, trimmed.
func lookupValue(caps map[string]string, names string) (string, bool) {
	_, v, ok := lookupName(caps, names)
	return v, ok
}

// lookupName is lookupValue with the name that gave the value (the first name when none
// did).
func lookupName(caps map[string]string, names string) (name, value string, ok bool) {
	first, _, _ := strings.Cut(names, "|")
	for n := range strings.SplitSeq(names, "|") {
		if v := strings.TrimSpace(caps[n]); v != "" {
			return n, v, true
		}
	}
	return first, "", false
}

// Rule makes the signature a rule the engine runs like any other: same ID, stage and
// documentation, findings grouped by cause.
func (s *Signature) Rule() *Rule {
	return &Rule{ID: s.ID, Stage: s.Stage, Title: s.Title, Doc: s.doc(), Severity: s.Severity,
		Needs: Needs{Optional: []Kind{Pods, Events, Nodes, KubeletJournal, RuntimeJournal, ContainerLogs, Fragments}},
		Run:   s.run, signature: s}
}

func (s *Signature) doc() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(s.Doc))
	b.WriteString("\n\n**Printed by:** " + s.Component)
	if s.PrintedBy != "" {
		b.WriteString(" (" + s.PrintedBy + ")")
	}
	if s.Versions != "" {
		b.WriteString("; " + s.Versions)
	}
	b.WriteString("\n\n## Matches\n")
	for _, p := range s.Patterns {
		b.WriteString("\n    " + p + "\n")
	}
	if len(s.Confirm) > 0 {
		b.WriteString("\n## Confirm on a live cluster\n")
		for _, c := range s.Confirm {
			b.WriteString("\n    " + c + "\n")
		}
	}
	b.WriteString("\n## Fix\n\n" + strings.TrimSpace(s.Fix) + "\n")
	if s.ForRule != "" {
		b.WriteString("\nThis is the message knowledge of rule " + s.ForRule + ": its findings are that rule's.\n")
	}
	if len(s.Incidents) > 0 {
		b.WriteString("\n## Incidents\n\n" + strings.Join(s.Incidents, ", ") + "\n")
	}
	return b.String()
}

// run matches every line of the graph's text of the kinds the signature names.
func (s *Signature) run(v *View) []Finding {
	var out []Finding
	// heads holds, per group, the place in out of its first finding while the ones
	// after are merged into it as they come (mergeInto), or -1 once one of them is not:
	// the engine merges the rest, in order. A signature of a common failure fires on
	// every line of every pod it has (at 80k pods, thousands), and each finding made
	// whole was a few kilobytes held until the engine grouped them.
	heads := map[string]int{}
	var tries patternTries
	lines := v.g.Lines()
	idx, indexed := v.g.signatureLines(s)
	n := len(lines)
	if indexed {
		n = len(idx)
	}
	for k := range n {
		i := k
		if indexed {
			i = int(idx[k])
		}
		l := &lines[i]
		// What kind of text a pasted fragment holds is a guess, so a fragment is tried
		// on every signature; where narrows what the evidence says for sure.
		if !s.where[l.Kind()] && !l.Fragment {
			continue
		}
		caps, ok := s.matchCounted(l.Text, &tries)
		if ok && (s.Stage == StageRuntime || s.Stage == StageRequest) && outerLayerFirst(l.Text, s.matchStart(l.Text), s.Stage, componentHint(l)) {
			continue
		}
		if !ok && l.Reason() != "" && l.Kind() != TextLog {
			// A status or event whose reason alone says it ("NodeLost", "Evicted").
			caps, ok = s.match(l.Reason() + ": " + l.Text)
		}
		if !ok {
			continue
		}
		if l.Fragment && l.Evidence().EndLine == 0 && s.causeNeedsEmpty(caps) {
			// A pasted message cut at the line's end: its joined paragraph gives the rest.
			continue
		}
		if l.Fragment && l.Evidence().EndLine == 0 {
			if p := v.g.wrappingParagraph(i); p != nil {
				if pcaps, ok := s.match(p.Text); ok && (captureCut(caps, l.Text) || valued(pcaps) > valued(caps)) {
					// A value that runs to the line's end, where a wrapped message goes on
					// ("unable to retrieve the" / "complete list of server APIs: …"), or a
					// value on the line above ("failed to start container "X": …" over a
					// terminal's width): the joined paragraph is read instead.
					continue
				}
			}
		}
		for _, e := range s.evidence {
			if val := e.of(v.g, l); val != "" {
				caps = maps.Clone(caps)
				caps[e.name] = val
			}
		}
		if caps["container"] == "" && l.Kind() == TextEvent && l.Container() == "" {
			// A pasted event row names no container; the kubelet's other events of the
			// paste do ("Created container app"), when they name one only.
			if c := v.g.loneEventContainer(); c != "" {
				caps = maps.Clone(caps)
				caps["container"] = c
			}
		}
		if caps["container"] == "" && l.Fragment && l.Container() == "" && len(v.g.pods) == 0 && strings.Contains(s.Cause, "{container}") {
			// A message pasted without its pod or container ("Startup probe failed: …")
			// whose container the ticket's sentence names ("the startup probe for the
			// nextcloud-nginx container").
			if c := v.g.proseContainer(); c != "" {
				caps = maps.Clone(caps)
				caps["container"] = c
			}
		}
		if strings.Contains(l.Text, "panic: ") {
			if fn := panicFrame(followingText(lines, i, 24)); fn != "" {
				caps = maps.Clone(caps)
				caps[WrapperFrame] = fn
			}
			if msg := loggedBefore(lines, i); msg != "" {
				caps = maps.Clone(caps)
				caps[WrapperLoggedBefore] = msg
			}
		}
		f := s.finding(l, caps)
		f.ownRefusal = s.Stage == StageRequest && programRefusal(l) && v.g.podsDying()
		if at, seen := heads[f.GroupKey]; seen && at >= 0 && mergeable(&f) {
			mergeInto(&out[at], &f)
			continue
		} else if f.GroupKey != "" {
			heads[f.GroupKey] = -1
			if !seen && mergeable(&f) {
				heads[f.GroupKey] = len(out)
			}
		}
		out = append(out, f)
	}
	return out
}

// reProgramLogKey is a key of a structured log line a program prints (logrus, logfmt,
// klog's structured form): no client prints its answer so.
var reProgramLogKey = regexp.MustCompile(`\b(?:err|error|level|msg)=`)

// programRefusal reports whether a line refused by the API server is a program's own
// request, not a person's command or a node's: a service account's refusal, or a
// refusal a program logged (a container's log, a structured log line) and no client
// printed as its answer.
func programRefusal(l *Line) bool {
	if l.Object().Kind == ClientKind {
		return false
	}
	if strings.Contains(l.Text, "system:serviceaccount:") {
		return l.Kind() == TextLog || l.Fragment
	}
	return (l.Kind() == TextLog || l.Fragment && reProgramLogKey.MatchString(l.Text)) &&
		!strings.Contains(l.Text, "system:node:") && !reClientAnswer.MatchString(l.Text)
}

// reClientAnswer is kubectl's (and oc's, helm's) way of printing the API server's
// refusal of its own request.
var reClientAnswer = regexp.MustCompile(`^\s*(?:error: |Error: |Error from server|Unable to connect to the server)|You must be logged in to the server`)

// mergeable reports whether the engine would merge f into its group's first finding
// without a word on it (runRule): a finding without evidence, cause or remediation is
// reported, so it is left for the engine. A signature's rule is no catch-all, whose
// first finding the engine counts the pods of before merging.
func mergeable(f *Finding) bool {
	return len(f.Evidence) > 0 && f.Cause != "" && f.Remediation != ""
}

// mergeInto merges f into the first finding of its group as the engine does (runRule):
// subjects and evidence appended, the first one's text kept.
func mergeInto(into, f *Finding) {
	into.Subjects = append(into.Subjects, f.Subjects...)
	into.Evidence = append(into.Evidence, f.Evidence...)
	into.EvidenceOmitted += f.EvidenceOmitted
}

// reZapLevel is a level as zap's console encoder writes it.
var reZapLevel = regexp.MustCompile(`^(?i:debug|info|warn|error|dpanic|panic|fatal)$`)

// maxLoggedBefore bounds the message loggedBefore quotes.
const maxLoggedBefore = 120

// reDatedLine is a line that starts with a date and time, as a log's lines do.
var reDatedLine = regexp.MustCompile(`^\s*\[?\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d`)

// lineAbove is the line of lines[i]'s file that ends right above it, or nil.
func lineAbove(lines []Line, i int) *Line {
	b, p := lines[i].source()
	at := lines[i].Evidence().Line
	if at <= 1 {
		return nil
	}
	var best *Line
	bestEnd := 0
	for k := range lines {
		l := &lines[k]
		if k == i {
			continue
		}
		ev := l.Evidence()
		end := max(ev.Line, ev.EndLine)
		if end >= at || end <= bestEnd || end < at-3 {
			continue
		}
		if lb, lp := l.source(); lb == b && lp == p {
			best, bestEnd = l, end
		}
	}
	return best
}

// loggedBefore is the message of the log line right before lines[i] in the same file,
// "" when there is none: what the program was doing when it panicked ("Ensuring TLS is
// correctly configured" over a controller's nil pointer dereference).
func loggedBefore(lines []Line, i int) string {
	if i == 0 {
		return ""
	}
	if before, _, ok := strings.Cut(lines[i].Text, "panic: "); ok && strings.TrimSpace(strings.Trim(before, "` ")) != "" {
		// A paste's lines read as one paragraph: what the program logged before the
		// panic is the text before it.
		return trimLogged(strings.Trim(strings.TrimSpace(before), "`"))
	}
	b, p := lines[i].source()
	prev := &lines[i-1]
	if pb, pp := prev.source(); pb != b || pp != p || prev.Evidence().Line >= lines[i].Evidence().Line {
		// Lines of one file are kept by kind: the line before in the file may be
		// another kind's (a pasted log's first line, read as text).
		prev = lineAbove(lines, i)
		if prev == nil {
			return ""
		}
	}
	t := strings.TrimSpace(prev.Text)
	if t == "" || strings.Contains(t, "panic") || strings.HasPrefix(t, "goroutine ") || isProse(t) && !programLine(t) && !reDatedLine.MatchString(t) {
		// Nothing logged, the panic's own lines, or the reporter's sentence above a paste.
		return ""
	}
	return trimLogged(t)
}

// trimLogged is a logged line's message, without its time, level and caller, cut to
// maxLoggedBefore.
func trimLogged(t string) string {
	if f := strings.Split(t, "\t"); len(f) >= 4 && reZapLevel.MatchString(f[1]) {
		// zap's console encoder (controller-runtime's operators): time, level, caller,
		// message and its fields, apart by tabs.
		t = strings.TrimSpace(f[3])
	} else if e, kind, problem := logline.Parse(t, time.Time{}); kind == logline.KindEntry && problem == nil && strings.TrimSpace(e.Message) != "" {
		t = strings.TrimSpace(e.Message)
	}
	if r := []rune(t); len(r) > maxLoggedBefore {
		t = string(r[:maxLoggedBefore]) + "…"
	}
	return t
}

// followingText is the text of up to n lines after lines[i] from the same file, in
// order: what a stack trace below a message says.
func followingText(lines []Line, i, n int) []string {
	var out []string
	b, p := lines[i].source()
	at := lines[i].Evidence()
	last := at.Line
	for j := i + 1; j < len(lines) && len(out) < n; j++ {
		if jb, jp := lines[j].source(); jb != b || jp != p {
			// The pasted file's next code block goes on with the text (the frame of a
			// stack a reporter pasted apart from the panic): its lines, not the
			// paragraphs joined from them, which start where a line already read does.
			e := lines[j].Evidence()
			if e.Bundle != at.Bundle || e.Path != at.Path || at.Path == "" {
				break
			}
			if e.Line <= last {
				continue
			}
			last = e.Line
		}
		out = append(out, lines[j].Text)
	}
	return out
}

// runTies is the signature's findings about the lines it fires on through the catalog
// (tieSignatures), which the engine asks for only when the floor would otherwise speak.
func (s *Signature) runTies(v *View) []Finding {
	lines := v.g.Lines()
	tied := v.g.tiedLines(s)
	var out []Finding
	for _, t := range tied {
		l := &lines[t.line]
		if slices.ContainsFunc(tied, func(o tiedLine) bool { return o.line != t.line && wraps(&lines[o.line], l) }) {
			// The line is part of a wrapped message that ties too ("Failed to pull image
			// "R":" above "no match for platform in manifest"): the whole message is
			// read, with the values the line alone lacks.
			continue
		}
		for _, e := range s.evidence {
			// The values the cause takes from the rest of the evidence, as for a line
			// the signature's own pattern reads.
			if val := e.of(v.g, l); val != "" {
				t.caps = maps.Clone(t.caps)
				t.caps[e.name] = val
			}
		}
		out = append(out, s.tieFinding(l, t))
	}
	return out
}

// captureCut reports whether a captured value runs to the end of the text: a value a
// wrapped line may have cut.
func captureCut(caps map[string]string, text string) bool {
	end := strings.TrimRight(text, " \t\r")
	for _, v := range caps {
		if v = strings.TrimRight(v, " \t\r"); len(v) >= 3 && strings.HasSuffix(end, v) {
			return true
		}
	}
	return false
}

// valued counts the captures that have a value.
func valued(caps map[string]string) int {
	n := 0
	for _, v := range caps {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	return n
}

// wrappingParagraph is the joined paragraph of pasted lines that holds lines[i], or
// nil. Where each line's paragraph is is found once per graph: a paragraph cites the
// range of lines it joins (a fragment's paragraphs follow its lines).
func (g *Graph) wrappingParagraph(i int) *Line {
	lines := g.Lines()
	g.paragraphsOnce.Do(func() {
		g.paragraphOf = map[int]int{}
		var single map[int]int // a file's own lines by line number
		var file [2]string
		for j := range lines {
			o := &lines[j]
			if !o.Fragment {
				continue
			}
			if b, p := o.source(); single == nil || [2]string{b, p} != file {
				single, file = map[int]int{}, [2]string{b, p}
			}
			ev := o.Evidence()
			if ev.EndLine == 0 {
				single[ev.Line] = j
				continue
			}
			for n := ev.Line; n <= ev.EndLine; n++ {
				if k, ok := single[n]; ok {
					if _, seen := g.paragraphOf[k]; !seen {
						g.paragraphOf[k] = j
					}
				}
			}
		}
	})
	j, ok := g.paragraphOf[i]
	if !ok || !wraps(&lines[j], &lines[i]) {
		return nil
	}
	return &lines[j]
}

// wraps reports whether paragraph p is a wrapped message of the same file that holds
// line l's text and more.
func wraps(p, l *Line) bool {
	if len(p.Text) <= len(l.Text) || !strings.Contains(p.Text, strings.Join(strings.Fields(l.Text), " ")) {
		return false
	}
	pb, pp := p.source()
	lb, lp := l.source()
	return pb == lb && pp == lp
}

// causeNeedsEmpty reports whether the cause template uses a capture that matched
// nothing.
func (s *Signature) causeNeedsEmpty(caps map[string]string) bool {
	for _, m := range rePlaceholder.FindAllStringSubmatch(reOptional.ReplaceAllString(s.Cause, ""), -1) {
		seen := false
		for n := range strings.SplitSeq(m[1], "|") {
			if v, ok := caps[n]; ok {
				seen = true
				if strings.TrimSpace(v) != "" {
					seen = false
					break
				}
			} else if builtinPlaceholders[n] {
				seen = false
				break
			}
		}
		if seen {
			return true
		}
	}
	return false
}

func (s *Signature) finding(l *Line, caps map[string]string) Finding {
	vals := map[string]string{"node": l.Node(), "container": l.Container()}
	if o := l.Object(); o.Kind != "" && o.Kind != ClientKind && o.Name != "" && o.Name != UnknownSubject {
		// The object the line is about, as its event names it (a HorizontalPodAutoscaler,
		// a PersistentVolumeClaim): {object} in a template.
		vals["object"] = o.Name
	}
	if l.Pod != nil {
		vals["pod"], vals["namespace"] = l.Pod.meta.Name, l.Pod.meta.Namespace
	} else if o := l.Object(); o.Kind == "Namespace" && o.Name != UnknownSubject {
		vals["namespace"] = o.Name
	} else if o.Kind != "" {
		vals["namespace"] = o.Namespace
		if o.Kind == "Pod" && o.Name != UnknownSubject {
			// Pasted lines about a pod the evidence names only there (the log of
			// 'kubectl logs POD'): the subject knows the pod.
			vals["pod"] = o.Name
		}
	}
	// What the message's wrappers name (the pod a controller could not create, the
	// volume, the CNI plugin) fills what the subject does not know; a made-up name of
	// a pod whose name the evidence does not show yields to the one the message gives.
	for k, v := range WrapperValues(l.Text) {
		if vals[k] == "" || k == WrapperPod && l.Pod != nil && isPartial(l.Pod, "name") {
			vals[k] = v
		}
	}
	for k, v := range caps {
		vals[k] = v
	}
	if img := vals["image"]; img != "" {
		vals["image"] = PrintedImage(img, l.Text)
	}
	causeVals := vals
	if _, captured := caps["namespace"]; l.Pod != nil && isPartial(l.Pod, "namespace") && !captured {
		// A namespace the import guessed is good for a command to try, not for a
		// cause to state.
		causeVals = maps.Clone(vals)
		delete(causeVals, "namespace")
	}
	cause, _ := fill(s.Cause, causeVals, false)
	// A pod the message names but the evidence holds no object of (an admission
	// refusal of "pods \"NAME\""): the cause says which, as it does for a subject.
	// The container a log was printed for (`kubectl logs POD -c NAME`) is said when the
	// cause does not name it and the pod has other containers, or the evidence does
	// not show which it has: a pod of several containers fails in one.
	ctr := ""
	if c := l.Container(); c != "" && l.Kind() == TextLog && !names(cause, c) && (l.Pod == nil || len(Containers(l.Pod)) != 1 || isPartial(l.Pod, "spec")) {
		ctr = "the " + c + " container"
	}
	if p := vals[WrapperPod]; p != "" && l.Pod == nil && l.Object().Kind != "Pod" && !names(cause, p) {
		if ctr != "" {
			p += ", " + ctr
			ctr = ""
		}
		cause += " (pod " + p + ")"
	} else if p := vals[WrapperPodPrefix]; p != "" && vals[WrapperPod] == "" && l.Pod == nil && !strings.Contains(cause, p) {
		// A controller's pod refused before it had a name: its generateName says whose.
		cause += " (pods " + p + "…)"
	}
	if ctr != "" {
		cause += " (" + ctr + ")"
	}
	group := cause + "\x00" + subjectKey(l)
	match, fixed := s.matched(l.Text)
	cause = quoteMatch(cause, match, fixed)
	fix, _ := fill(s.Fix, vals, false)
	var confirm []string
	for _, c := range s.Confirm {
		cmd, complete := fill(c, vals, true)
		if !complete {
			cmd += "   # fill in the <placeholders>: the evidence does not name them"
		}
		confirm = append(confirm, cmd)
	}
	ev := l.Evidence()
	ev.Excerpt = Excerpt(ev.Excerpt)
	return Finding{Subjects: s.subjectsOf(l, caps), Cause: cause, Remediation: fix, Confirm: confirm,
		Evidence: []Evidence{ev}, GroupKey: group, FleetKey: s.fleetKey(vals)}
}

// podOwnStage are the stages a pod breaks at on its own node, past its placement: a
// finding there is about a pod, never a node (the node's, the scheduler's and the
// sandbox's findings link to a node's conditions).
var podOwnStage = map[Stage]bool{StageImage: true, StageVolume: true, StageConfig: true, StageStart: true,
	StageRuntime: true, StageProbe: true, StageService: true}

// subjectsOf is the line's subjects, but a pasted line of text that names no object is
// about the unknown pod its stage breaks, not an unknown node, unless the signature's
// stage is before the pod's own (podOwnStage): a container's start, a volume, a Service
// lookup happen to a pod.
func (s *Signature) subjectsOf(l *Line, caps map[string]string) []ObjectRef {
	subj := l.Subjects()
	if len(subj) == 1 && subj[0].Name == UnknownSubject && subj[0].UnnamedIn == "" && caps["pod"] != "" && caps["namespace"] != "" {
		// The message names the pod it is about (a drain's "pods/NAME -n NS"): that
		// pod is the subject the line alone did not give.
		return []ObjectRef{{Kind: "Pod", Namespace: caps["namespace"], Name: caps["pod"]}}
	}
	if len(subj) == 1 && subj[0] == (ObjectRef{Kind: "Node", Name: UnknownSubject}) && l.Fragment && l.Kind() == TextText && podOwnStage[s.Stage] {
		return []ObjectRef{{Kind: "Pod", Name: UnknownSubject, UnnamedIn: l.Evidence().Path}}
	}
	if len(subj) == 1 && subj[0] == (ObjectRef{Kind: "Container", Name: UnknownSubject}) && s.Stage == StageNode && l.Pod == nil {
		// A node agent's line pasted as a log (the kubelet's, the runtime's): the node
		// is what fails.
		return []ObjectRef{{Kind: "Node", Name: UnknownSubject}}
	}
	return subj
}

// matched is the text of the signature's first pattern that matches text (its
// unwrapped lines too), and the words before the pattern's first capture (the
// component's fixed words), "" when none matches.
func (s *Signature) matched(text string) (match, fixed string) {
	for _, t := range []string{text, unwrapLines(text)} {
		for _, re := range s.res {
			loc := re.FindStringSubmatchIndex(t)
			if loc == nil || loc[1] == loc[0] {
				continue
			}
			match, fixed = t[loc[0]:loc[1]], t[loc[0]:loc[1]]
			for i := 2; i+1 < len(loc); i += 2 {
				if loc[i] >= 0 {
					fixed = t[loc[0]:loc[i]]
					break
				}
			}
			return match, fixed
		}
	}
	return "", ""
}

// quoteMaxRunes is the longest matched message a cause quotes whole.
const quoteMaxRunes = 200

// reFixedTail is what ends a message's fixed words before its value: punctuation, an
// opening bracket or quote, a structured log's key ("err=<").
var reFixedTail = regexp.MustCompile(`(?:\s*\w+=)?[\s,;:(\[{<"'=]+$`)

// quoteMinFixedRunes is the fewest of the component's fixed words a cause quotes alone.
const quoteMinFixedRunes = 16

// quoteMatch ends a cause with the component's own words the signature matched, when
// the cause does not already hold them: the cause says what they mean, and the words
// are what a reader searches for and the values they print (a resource, a path, an
// API version) read as printed. A match longer than quoteMaxRunes is quoted by its
// fixed words before the first value (the message's name: "Failed to execute
// iptables-restore"), when there are enough of them; a match the cause holds, or a
// short one, is left to the evidence.
func quoteMatch(cause, match, fixed string) string {
	q, tail := strings.TrimRight(strings.Join(strings.Fields(match), " "), " ,;:"), ""
	clean := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		for {
			t := reFixedTail.ReplaceAllString(s, "")
			if t == s {
				return s
			}
			s = t
		}
	}
	if len([]rune(q)) > quoteMaxRunes {
		q, tail = clean(fixed), " …"
		if n := len([]rune(q)); n < quoteMinFixedRunes || n > quoteMaxRunes {
			return cause
		}
	}
	if len([]rune(q)) < 8 {
		return cause
	}
	low := strings.ToLower(strings.Join(strings.Fields(cause), " "))
	if strings.Contains(low, strings.ToLower(q)) {
		return cause
	}
	return cause + ": “" + q + tail + "”"
}

// subjectKey groups a signature's matches: all lines about one pod (or, about no known
// object, in one bundle or paste) with one cause are one finding; pods sharing a cause
// are grouped by the engine's cause key.
func subjectKey(l *Line) string {
	if l.Pod == nil && (l.Object().Kind == "" || l.Object().Kind == ClientKind) && l.Node() == "" {
		// One paste's files are one reporter's: the same message in a program's log, in
		// the client output and quoted again in the prose is one observation, its
		// unknown subjects listed together.
		b, _ := l.source()
		return b
	}
	return ""
}
