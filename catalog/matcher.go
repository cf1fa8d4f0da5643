package catalog

import (
	"regexp"
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

// key is the literal fragment the index looks for: the longest literal run, in lower case.
func key(segs []segment) string {
	best := ""
	for _, s := range segs {
		if l := strings.TrimSpace(s.lit); len(l) > len(best) {
			best = l
		}
	}
	return strings.ToLower(best)
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
	segs := parseTemplate(t, plain)
	// White space around the message is not part of what a reader sees.
	if n := len(segs); n > 0 && segs[n-1].verb == 0 {
		segs[n-1].lit = strings.TrimRightFunc(segs[n-1].lit, unicode.IsSpace)
	}
	if len(segs) > 0 && segs[0].verb == 0 {
		segs[0].lit = strings.TrimLeftFunc(segs[0].lit, unicode.IsSpace)
	}
	var b strings.Builder
	b.WriteString(`(?i)(?:^|[^\pL\pN_])(`)
	m := &matcher{lits: literalLen(segs)}
	for i, s := range segs {
		if s.verb == 0 {
			writeLiteral(&b, s.lit)
			continue
		}
		last := i == len(segs)-1
		m.names = append(m.names, s.name)
		switch s.verb {
		case 'd':
			b.WriteString(`(-?\d+)`)
		case 'q':
			b.WriteString(`(\\*"(?:[^"\\]|\\.)*?\\*"|'[^']*'|` + "`[^`]*`" + `|[^\s"]+)`)
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
	}
	b.WriteString(`)(?:$|[\s:;,.!)(\]\["'\\}])`)
	m.re, m.err = regexp.Compile(b.String())
	return m
}

func writeLiteral(b *strings.Builder, lit string) {
	space := false
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
	}
	if space {
		b.WriteString(`\s+`)
	}
}

// match runs the entry's matcher on text; ok with the matched span and the captures.
func (e *Entry) match(text string) (span [2]int, caps map[string]string, ok bool) {
	m := e.matcher()
	if m.err != nil {
		return span, nil, false
	}
	loc := m.re.FindStringSubmatchIndex(text)
	if loc == nil {
		return span, nil, false
	}
	span = [2]int{loc[2], loc[3]}
	if len(m.names) > 0 {
		caps = make(map[string]string, len(m.names))
		for i, n := range m.names {
			if s := loc[4+2*i]; s >= 0 {
				caps[n] = text[s:loc[5+2*i]]
			}
		}
	}
	return span, caps, true
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

// Literals is the number of literal characters in the template: how specific it is.
func (e *Entry) Literals() int { return e.matcher().lits }
