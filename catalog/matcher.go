package catalog

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// segment is a piece of a template: literal text, or a format verb.
type segment struct {
	lit  string
	verb byte   // 0 for literal text; 's', 'v', 'q', 'd', 'w', 'x', ...
	name string // capture name for a verb
}

// parseTemplate splits a template into literal text and verbs. A plain template is all text.
func parseTemplate(t string, plain bool) []segment {
	if plain {
		return []segment{{lit: t}}
	}
	var segs []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		j := i + 1
		// flags, explicit argument index, width, precision
		for j < len(t) && strings.IndexByte("+-# 0", t[j]) >= 0 {
			j++
		}
		if j < len(t) && t[j] == '[' {
			for j < len(t) && t[j] != ']' {
				j++
			}
			j++
		}
		for j < len(t) && (t[j] == '*' || (t[j] >= '0' && t[j] <= '9')) {
			j++
		}
		if j < len(t) && t[j] == '.' {
			j++
			for j < len(t) && (t[j] == '*' || (t[j] >= '0' && t[j] <= '9')) {
				j++
			}
		}
		if j >= len(t) {
			lit.WriteString(t[i:])
			break
		}
		v := t[j]
		if v == '%' {
			lit.WriteByte('%')
			i = j
			continue
		}
		if !unicode.IsLetter(rune(v)) {
			lit.WriteString(t[i : j+1])
			i = j
			continue
		}
		flush()
		segs = append(segs, segment{verb: v})
		i = j
	}
	flush()
	nameCaptures(segs)
	return segs
}

// nameCaptures names each verb from the word before it ("image %q" → image, "pod=%q" → pod),
// "err" for a wrapped error at the end, else argN.
func nameCaptures(segs []segment) {
	seen := map[string]int{}
	n := 0
	for i := range segs {
		if segs[i].verb == 0 {
			continue
		}
		n++
		name := ""
		if i > 0 && segs[i-1].verb == 0 {
			name = wordBefore(segs[i-1].lit)
		}
		if name == "" && i == len(segs)-1 && (segs[i].verb == 'w' || segs[i].verb == 'v') && i > 0 && strings.HasSuffix(segs[i-1].lit, ": ") {
			name = "err"
		}
		if name == "" {
			name = "arg" + strconv.Itoa(n)
		}
		seen[name]++
		if seen[name] > 1 {
			name += strconv.Itoa(seen[name])
		}
		segs[i].name = name
	}
}

// wordBefore is the word that ends lit just before a verb: "image " → "image", "pod=" → "pod".
func wordBefore(lit string) string {
	s := strings.TrimRight(lit, " =")
	if len(s) == len(lit) && !strings.HasSuffix(lit, "=") {
		return "" // the verb is glued to the text, as in "v%d"
	}
	end := len(s)
	start := end
	for start > 0 {
		c := s[start-1]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			start--
			continue
		}
		break
	}
	w := strings.ToLower(s[start:end])
	if len(w) < 2 || len(w) > 24 || w[0] >= '0' && w[0] <= '9' {
		return ""
	}
	switch w {
	case "to", "for", "the", "a", "an", "of", "in", "on", "with", "from", "is", "and", "or", "as", "at", "by", "be", "not":
		return ""
	}
	return w
}

// literalLen is the number of literal characters of a template: its specificity.
func literalLen(segs []segment) int {
	n := 0
	for _, s := range segs {
		n += len(strings.TrimSpace(s.lit))
	}
	return n
}

// prep is what the index needs of a template, computed once.
type prep struct {
	words []string // complete words of its literal text, lower case, length >= 3
	frags []string // literal pieces between verbs and white space, lower case: all must be present
	first string   // the literal the message starts with, lower case ("" when it starts with a verb)
	last  string   // LastCapture
	names []string // NameCaptures
	lits  int
	// generic: every word of the literal text is one any program's error says
	// ("unexpected error: %v", "failed to read %s"): the template tells no component.
	generic bool
}

// trimEnds removes from the ends of a template what Layers removes from the ends of a
// message: white space, mail quoting ("> ") and Markdown code-span backticks.
func trimEnds(segs []segment) []segment {
	if n := len(segs); n > 0 && segs[n-1].verb == 0 {
		segs[n-1].lit = strings.TrimRight(strings.TrimRightFunc(segs[n-1].lit, unicode.IsSpace), "`")
	}
	if len(segs) > 0 && segs[0].verb == 0 {
		segs[0].lit = strings.TrimLeft(strings.TrimLeftFunc(segs[0].lit, unicode.IsSpace), "> `")
	}
	return segs
}

func prepare(t string, plain bool) *prep {
	segs := trimEnds(parseTemplate(t, plain))
	p := &prep{lits: literalLen(segs), last: lastCapture(segs)}
	for i, s := range segs {
		if s.verb != 0 {
			continue
		}
		low := lowerASCII(s.lit)
		for _, f := range strings.Fields(low) {
			if len(f) >= 3 {
				p.frags = append(p.frags, f)
			}
		}
		if i == 0 {
			if fs := strings.Fields(low); len(fs) > 0 {
				p.first = fs[0]
			}
		}
		// Words wholly inside the literal: not glued to a verb on either side.
		ws := wordSpans(low)
		for _, w := range ws {
			if w[0] == 0 && i > 0 || w[1] == len(low) && i < len(segs)-1 {
				continue
			}
			word := low[w[0]:w[1]]
			if len(word) >= 3 && !allDigits(word) {
				p.words = append(p.words, word)
			}
		}
	}
	for i, s := range segs {
		if (s.verb == 's' || s.verb == 'v') && (i == 0 || !strings.HasSuffix(segs[i-1].lit, ": ") && !strings.HasSuffix(segs[i-1].lit, "= ")) {
			p.names = append(p.names, s.name)
		}
	}
	p.generic = true
	for _, s := range segs {
		if s.verb == 'q' {
			// A quoted name has a shape of its own: the API server's `%s %q not found`.
			p.generic = false
		}
		for _, w := range strings.FieldsFunc(lowerASCII(s.lit), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if !genericWords[w] {
				p.generic = false
			}
		}
	}
	// Longer pieces are rarer: looking for them first rejects a candidate sooner.
	sort.SliceStable(p.frags, func(i, j int) bool { return len(p.frags[i]) > len(p.frags[j]) })
	return p
}

// wordSpans are the runs of ASCII letters, digits and '_' in s.
func wordSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isWordByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lowerASCII lowers A-Z only, so byte offsets stay those of s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// matcher is a compiled template.
type matcher struct {
	re    *regexp.Regexp
	names []string // capture names, in order
	lits  int
	err   error
}

func (e *Entry) matcher() *matcher {
	if m := e.m.Load(); m != nil {
		return m
	}
	m := compile(e.Template, e.Plain)
	if e.m.CompareAndSwap(nil, m) {
		return m
	}
	return e.m.Load()
}

// compile makes a regular expression from a template: literal text matches itself (case
// ignored, runs of white space match any white space), %d a number, %q a quoted string,
// other verbs any text, the last verb the rest of the layer. The match starts at a word
// boundary and ends at the end of the layer or at a separator.
func compile(t string, plain bool) *matcher {
	segs := trimEnds(parseTemplate(t, plain))
	var b strings.Builder
	b.WriteString(`(?i)^(`)
	m := &matcher{lits: literalLen(segs)}
	// A labelled value the template appends after another value (", message: %q") holds
	// what the failed command printed, often over several lines: a paste or an event cut
	// at the first line break still reads as the entry.
	tail := -1
	if n := len(segs); n >= 3 && segs[n-1].verb != 0 && segs[n-2].verb == 0 && segs[n-3].verb != 0 && reLabelTail.MatchString(segs[n-2].lit) {
		tail = n - 2
	}
	for i, s := range segs {
		if i == tail {
			b.WriteString(`(?:`)
		}
		if s.verb == 0 {
			writeLiteral(&b, s.lit, i+1 < len(segs))
			continue
		}
		last := i == len(segs)-1
		m.names = append(m.names, s.name)
		switch s.verb {
		case 'd':
			b.WriteString(`(-?\d+)`)
		case 'q':
			// Go's %q quotes; a release that printed the value with %s did not, and
			// such a value is a name (a driver, an image, a path), not a plain word
			// of a sentence ("could not find anything related", "… the docs, so").
			b.WriteString(`(\\*"(?:[^"\\]|\\.)*?\\*"|'[^']*'|` + "`[^`]*`" + `|[^\s"]*[^\sA-Za-z"][^\s"]*[^\s"'.,;:!?)])`)
		case 'x', 'X':
			b.WriteString(`([0-9A-Fa-f]+)`)
		case 't':
			b.WriteString(`(true|false)`)
		default:
			if last {
				b.WriteString(`(.*)`)
			} else {
				b.WriteString(`(.*?)`)
			}
		}
		if last && tail >= 0 {
			// or the value before it runs to the end of the layer
			b.WriteString(`|$)`)
		}
	}
	b.WriteString(`)(?:$|[\s:;,.!)(\]\["'\\}` + "`" + `])`)
	m.re, m.err = regexp.Compile(b.String())
	return m
}

// reLabelTail is the literal before a value a template appends with its label:
// ", message: ".
var reLabelTail = regexp.MustCompile(`^, [a-z]+(?: [a-z]+)?: $`)

// writeLiteral writes the expression of literal text; white space before a verb is
// optional, since the value may be empty ("invalid config: " and nothing after it).
func writeLiteral(b *strings.Builder, lit string, beforeVerb bool) {
	space := false
	var last rune
	for _, r := range lit {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteString(`\s+`)
			space = false
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
		last = r
	}
	if space {
		switch {
		case beforeVerb && (unicode.IsLetter(last) || unicode.IsDigit(last)):
			// The word before the value ends there: "provider %v" is no match of
			// "providers/Microsoft.ContainerInstance/…".
			b.WriteString(`(?:\s+|\b)`)
		case beforeVerb:
			b.WriteString(`\s*`)
		default:
			b.WriteString(`\s+`)
		}
	}
}

// match runs the entry's matcher on text (lower is text with ASCII lowered); ok with the
// matched span and the captures. The match starts at a word boundary: where the
// template's first literal occurs, or at the start of text when the template starts with
// a verb.
func (e *Entry) match(text, lower string) (span [2]int, caps map[string]string, ok bool) {
	m := e.matcher()
	if m.err != nil {
		return span, nil, false
	}
	p := e.prep()
	try := func(at int) bool {
		loc := m.re.FindStringSubmatchIndex(text[at:])
		if loc == nil {
			return false
		}
		span = [2]int{at + loc[2], at + loc[3]}
		if len(m.names) > 0 {
			caps = make(map[string]string, len(m.names))
			for i, n := range m.names {
				if s := loc[4+2*i]; s >= 0 {
					caps[n] = text[at+s : at+loc[5+2*i]]
				}
			}
		}
		return true
	}
	if p.first == "" {
		return span, caps, try(0)
	}
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], p.first)
		if i < 0 {
			break
		}
		at := from + i
		if at == 0 || !isWordByte(lower[at-1]) || !isWordByte(p.first[0]) {
			if try(at) {
				return span, caps, true
			}
		}
		from = at + 1
	}
	return span, nil, false
}

func (e *Entry) prep() *prep {
	if p := e.p.Load(); p != nil {
		return p
	}
	p := prepare(e.Template, e.Plain)
	e.p.Store(p)
	return p
}

// Example is a message the template prints, with sample values in place of its verbs.
func (e *Entry) Example() string {
	var b strings.Builder
	for _, s := range parseTemplate(e.Template, e.Plain) {
		switch s.verb {
		case 0:
			b.WriteString(s.lit)
		case 'd':
			b.WriteString("42")
		case 'q':
			b.WriteString(`"sample-` + s.name + `"`)
		case 'x', 'X':
			b.WriteString("3f9a")
		case 't':
			b.WriteString("true")
		default:
			b.WriteString("sample-" + s.name)
		}
	}
	return b.String()
}

// NameCaptures are the captures of the template's %s and %v verbs that print a name or a
// value where it stands ("failed to read %s"), not a message after a colon ("probe
// failed: %s") or an error it wraps.
func (e *Entry) NameCaptures() []string { return e.prep().names }

// Generic reports whether every word of the template's literal text is one any
// program's error message says ("unexpected error: %v", "failed to read %s", "field not
// found") and it quotes no name: such a message does not tell which component printed
// it, nor where.
func (e *Entry) Generic() bool { return e.prep().generic }

// genericWords are the words of error messages that name no thing and no step of the
// Pod's path: verbs of any program's I/O and their failure.
var genericWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "for": true, "from": true, "in": true, "on": true,
	"with": true, "while": true, "when": true, "at": true, "by": true, "is": true, "was": true, "be": true, "been": true,
	"not": true, "no": true, "and": true, "or": true, "it": true, "this": true, "that": true, "as": true,
	"error": true, "errors": true, "err": true, "failed": true, "failure": true, "fail": true, "unable": true,
	"cannot": true, "can": true, "could": true, "couldn": true, "t": true, "unexpected": true, "unknown": true, "invalid": true,
	"found": true, "get": true, "getting": true, "read": true, "reading": true, "write": true, "writing": true,
	"open": true, "opening": true, "create": true, "creating": true, "decode": true, "decoding": true,
	"encode": true, "encoding": true, "parse": true, "parsing": true, "load": true, "loading": true,
	"field": true, "value": true, "data": true, "file": true, "object": true, "type": true,
	// a wait that gave up ("timed out waiting for the condition": wait.ErrWaitTimeout,
	// which every client prints) says nothing of what it waited for
	"timed": true, "out": true, "timeout": true, "waiting": true, "wait": true,
}

// Literals is the number of literal characters in the template: how specific it is.
func (e *Entry) Literals() int { return e.prep().lits }
