package redact

//go:generate go run -C internal/gengitleaks . -out ../../gitleaks_rules.go -samples ../../gitleaks_samples_test.go

import (
	"bytes"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

// Vendor detectors recognize a token by its own format (ghp_…, glpat-…, xoxb-…, AKIA…)
// or by the vendor named next to it (stripe_key = …). They are gitleaks' rules,
// converted by gengitleaks into vendorRule values (gitleaks_rules.go) and run with
// gitleaks' semantics: the keyword prefilter, the secret group, the entropy floor and
// the allowlists. podflow's structure-aware rules run first and name a mask when both
// find the same bytes.

// vendorRule is one converted gitleaks rule.
type vendorRule struct {
	id string
	re string
	// secretGroup is the capture group holding the secret; 0 means the first
	// non-empty group, or the whole match when there is none.
	secretGroup int
	// entropy is the Shannon entropy a secret must exceed; 0 means any.
	entropy  float64
	keywords []string
	allow    []vendorAllow
}

// vendorAllow is a gitleaks allowlist: a finding is dropped when one of its regexes
// matches the target (the secret, the whole match or the line) or the secret holds one
// of its stop words; with and, both must hold.
type vendorAllow struct {
	and       bool
	target    string
	regexes   []string
	stopWords []string
}

// vendorSamples are the true and false positives gitleaks checks a rule against.
type vendorSamples struct {
	tps, fps []string
}

// compiledAllow is a vendorAllow with its regexes joined.
type compiledAllow struct {
	and       bool
	target    string
	re        *regexp.Regexp
	stopWords []string
}

func compileAllow(as []vendorAllow) []compiledAllow {
	out := make([]compiledAllow, len(as))
	for i, a := range as {
		out[i] = compiledAllow{and: a.and, target: a.target, stopWords: a.stopWords}
		if len(a.regexes) > 0 {
			out[i].re = regexp.MustCompile("(?:" + strings.Join(a.regexes, ")|(?:") + ")")
		}
	}
	return out
}

// allowed reports whether an allowlist drops a finding.
func (a compiledAllow) allowed(secret, match, line []byte) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	regex := a.re != nil && len(target) > 0 && a.re.Match(target)
	stop := false
	if len(a.stopWords) > 0 && len(secret) > 0 {
		lower := bytes.ToLower(secret)
		for _, w := range a.stopWords {
			if bytes.Contains(lower, []byte(w)) {
				stop = true
				break
			}
		}
	}
	if a.and {
		return (a.re == nil || regex) && (len(a.stopWords) == 0 || stop)
	}
	return regex || stop
}

// vendorDetector runs one vendor rule. Its regexps compile on first use: most runs
// never see most vendors' keywords, and compiling two hundred patterns would slow every
// podflow command.
type vendorDetector struct {
	rule      *vendorRule
	once      sync.Once
	re        *regexp.Regexp
	allow     []compiledAllow
	multiline bool
	// anchored is set when every match starts with a keyword (ghp_…, eyJ…, s.…): the
	// pattern then runs only where a keyword starts, as anchoredRE, instead of over the
	// whole line, which matters for short keywords found on most lines.
	anchored   bool
	anchoredRE *regexp.Regexp
	// wordStart is set when the pattern starts with \b, which anchoring checks by hand.
	wordStart bool
	// prefix is the ASCII text every match starts with, matched case-sensitively
	// (API- of API-[A-Z0-9]{26}), or nil: where a keyword found case-insensitively
	// does not start it, an anchored pattern is not run.
	prefix   []byte
	keywords [][]byte
}

var (
	globalAllowOnce sync.Once
	globalAllow     []compiledAllow
)

func (v *vendorDetector) compile() {
	v.once.Do(func() {
		v.re = regexp.MustCompile(v.rule.re)
		v.anchored, v.wordStart = startsWithKeyword(v.rule.re, v.rule.keywords)
		if v.anchored {
			v.anchoredRE = regexp.MustCompile(`^(?:` + v.rule.re + `)`)
			v.prefix = literalPrefix(v.rule.re)
		}
		v.allow = compileAllow(v.rule.allow)
		globalAllowOnce.Do(func() { globalAllow = compileAllow(gitleaksGlobalAllow) })
	})
}

// hits finds the secrets of the rule in a line whose keywords end at ends.
func (v *vendorDetector) hits(line []byte, ends []int) [][2]int {
	v.compile()
	if !v.anchored {
		return v.spans(line)
	}
	var out [][2]int
	next := 0
	for _, end := range ends {
		for _, k := range v.keywords {
			st := end + 1 - len(k)
			if st < next || st < 0 || !bytes.EqualFold(line[st:end+1], k) {
				continue
			}
			if v.wordStart && st > 0 && isWordByte(line[st-1]) && isWordByte(line[st]) {
				continue
			}
			if !bytes.HasPrefix(line[st:], v.prefix) {
				continue
			}
			m := v.anchoredRE.FindSubmatchIndex(line[st:])
			if m == nil {
				continue
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += st
				}
			}
			if sp, ok := v.finding(line, m); ok {
				out = append(out, sp)
			}
			next = m[1]
			break
		}
	}
	return out
}

// spans finds the secrets of the rule in text, which is one line or, for a rule
// whose pattern spans lines, the text from a keyword's line on.
func (v *vendorDetector) spans(text []byte) [][2]int {
	v.compile()
	var out [][2]int
	for _, m := range v.re.FindAllSubmatchIndex(text, -1) {
		if sp, ok := v.finding(text, m); ok {
			out = append(out, sp)
		}
	}
	return out
}

// finding applies the secret group, the entropy floor and the allowlists to one match
// of the pattern in text, and returns the span to mask.
func (v *vendorDetector) finding(text []byte, m []int) ([2]int, bool) {
	{
		s, e := m[0], m[1]
		if v.rule.secretGroup > 0 {
			s, e = m[2*v.rule.secretGroup], m[2*v.rule.secretGroup+1]
		} else {
			for g := 1; 2*g < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					s, e = m[2*g], m[2*g+1]
					break
				}
			}
		}
		if s < 0 || e <= s {
			return [2]int{}, false
		}
		secret, match := text[s:e], text[m[0]:m[1]]
		if v.rule.entropy > 0 && shannonEntropy(secret) <= v.rule.entropy {
			return [2]int{}, false
		}
		if isMask(string(secret)) || v.allowed(secret, match, lineAround(text, m[0], m[1])) {
			return [2]int{}, false
		}
		s, e = widenToken(text, s, e)
		return [2]int{s, e}, true
	}
}

// startsWithKeyword reports whether every match of re starts with one of the
// (lower-case) keywords, and whether re starts with \b.
func startsWithKeyword(re string, kws []string) (anchored, wordStart bool) {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false, false
	}
	t = t.Simplify()
	// Strip the captures and the word boundary the pattern starts with.
	for {
		switch {
		case t.Op == syntax.OpCapture:
			t = t.Sub[0]
			continue
		case t.Op == syntax.OpConcat && len(t.Sub) > 0 && t.Sub[0].Op == syntax.OpWordBoundary:
			wordStart = true
			t = &syntax.Regexp{Op: syntax.OpConcat, Sub: t.Sub[1:], Flags: t.Flags}
			continue
		case t.Op == syntax.OpConcat && len(t.Sub) > 0 && t.Sub[0].Op == syntax.OpCapture:
			sub := append([]*syntax.Regexp{t.Sub[0].Sub[0]}, t.Sub[1:]...)
			t = &syntax.Regexp{Op: syntax.OpConcat, Sub: sub, Flags: t.Flags}
			continue
		}
		break
	}
	return leadsWithKeyword(t, kws), wordStart
}

// literalPrefix returns the ASCII text every match of re starts with when re is
// matched case-sensitively there, or nil.
func literalPrefix(re string) []byte {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil
	}
	t = t.Simplify()
	var lit []byte
	var walk func(t *syntax.Regexp) bool // reports whether t is a literal only
	walk = func(t *syntax.Regexp) bool {
		switch t.Op {
		case syntax.OpCapture:
			return walk(t.Sub[0])
		case syntax.OpWordBoundary:
			return len(lit) == 0
		case syntax.OpLiteral:
			if t.Flags&syntax.FoldCase != 0 {
				return false
			}
			for _, r := range t.Rune {
				if r >= 0x80 {
					return false
				}
				lit = append(lit, byte(r))
			}
			return true
		case syntax.OpConcat:
			for _, s := range t.Sub {
				if !walk(s) {
					return false
				}
			}
			return true
		}
		return false
	}
	walk(t)
	return lit
}

// leadsWithKeyword reports whether every string t matches starts with a keyword.
func leadsWithKeyword(t *syntax.Regexp, kws []string) bool {
	switch t.Op {
	case syntax.OpAlternate:
		for _, s := range t.Sub {
			if !leadsWithKeyword(s, kws) {
				return false
			}
		}
		return len(t.Sub) > 0
	case syntax.OpCapture:
		return leadsWithKeyword(t.Sub[0], kws)
	case syntax.OpConcat:
		// The literal prefix may run over several literal nodes.
		var lit []rune
		for _, s := range t.Sub {
			if s.Op != syntax.OpLiteral {
				if len(lit) == 0 {
					return len(t.Sub) > 0 && leadsWithKeyword(t.Sub[0], kws)
				}
				break
			}
			lit = append(lit, s.Rune...)
		}
		return literalHasKeywordPrefix(string(lit), kws)
	case syntax.OpLiteral:
		return literalHasKeywordPrefix(string(t.Rune), kws)
	}
	return false
}

func literalHasKeywordPrefix(lit string, kws []string) bool {
	lit = strings.ToLower(lit)
	for _, k := range kws {
		if k != "" && strings.HasPrefix(lit, k) {
			return true
		}
	}
	return false
}

func (v *vendorDetector) allowed(secret, match, line []byte) bool {
	for _, a := range globalAllow {
		if a.allowed(secret, match, line) {
			return true
		}
	}
	for _, a := range v.allow {
		if a.allowed(secret, match, line) {
			return true
		}
	}
	return false
}

// lineAround returns the lines holding text[s:e].
func lineAround(text []byte, s, e int) []byte {
	ls := bytes.LastIndexByte(text[:s], '\n') + 1
	le := len(text)
	if i := bytes.IndexByte(text[e:], '\n'); i >= 0 {
		le = e + i
	}
	return text[ls:le]
}

// tokenByte reports bytes that belong to a token: a secret whose rule captures only a
// part of it (the body of a JWT without its padding, a key without its prefix) is
// masked whole.
func tokenByte(c byte) bool {
	return isWordByte(c) || c == '-' || c == '.' || c == '+' || c == '/' || c == '~' || c == '%'
}

// widenToken grows [s, e) to the whole token around it. It never grows over '=' or ':'
// to the left, which separate a name from its value, but takes '=' padding on the right.
func widenToken(text []byte, s, e int) (int, int) {
	for s > 0 && tokenByte(text[s-1]) {
		s--
	}
	for e < len(text) && (tokenByte(text[e]) || text[e] == '=') {
		e++
	}
	return s, e
}

// shannonEntropy is gitleaks' entropy: over the runes, divided by the byte length.
func shannonEntropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, r := range string(b) {
		if r < 128 {
			ascii[r]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[r]++
	}
	h, inv := 0.0, 1/float64(len(b))
	add := func(c int) {
		if c > 0 {
			f := float64(c) * inv
			h -= f * math.Log2(f)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range other {
		add(c)
	}
	return h
}

// multilinePattern reports patterns that can match across lines.
func multilinePattern(re string) bool {
	return strings.Contains(re, `\s\S`) || strings.Contains(re, `\S\s`) || strings.Contains(re, `\r\n`) ||
		strings.Contains(re, `[\r\n]`) || strings.Contains(re, `(?s`)
}

// maxMultiline bounds the text a multi-line vendor pattern reads from its keyword's
// line on: it covers a private key and a curl command continued over a few lines.
const maxMultiline = 16 << 10

// vendorSet is the vendor detectors of every policy; they share compiled patterns.
var vendorSet = sync.OnceValue(func() []detector { return vendorDetectors(gitleaksRules) })

// vendorDetectors converts the gitleaks rules into detectors.
func vendorDetectors(rules []vendorRule) []detector {
	out := make([]detector, 0, len(rules))
	for i := range rules {
		v := &vendorDetector{rule: &rules[i], multiline: multilinePattern(rules[i].re), keywords: keywords(rules[i].keywords...)}
		d := detector{rule: rules[i].id, keywords: v.keywords}
		if v.multiline {
			d.region = v.spans
		} else {
			d.hits = v.hits
		}
		out = append(out, d)
	}
	return out
}
