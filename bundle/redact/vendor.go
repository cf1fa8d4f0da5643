package redact

//go:generate go run -C internal/gengitleaks . -out ../../gitleaks_rules.go -samples ../../gitleaks_samples_test.go

import (
	"bytes"
	"math"
	"regexp"
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
}

var (
	globalAllowOnce sync.Once
	globalAllow     []compiledAllow
)

func (v *vendorDetector) compile() {
	v.once.Do(func() {
		v.re = regexp.MustCompile(v.rule.re)
		v.allow = compileAllow(v.rule.allow)
		globalAllowOnce.Do(func() { globalAllow = compileAllow(gitleaksGlobalAllow) })
	})
}

// spans finds the secrets of the rule in text, which is one line or, for a rule
// whose pattern spans lines, the text from a keyword's line on.
func (v *vendorDetector) spans(text []byte) [][2]int {
	v.compile()
	var out [][2]int
	for _, m := range v.re.FindAllSubmatchIndex(text, -1) {
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
			continue
		}
		secret, match := text[s:e], text[m[0]:m[1]]
		if v.rule.entropy > 0 && shannonEntropy(secret) <= v.rule.entropy {
			continue
		}
		if isMask(string(secret)) || v.allowed(secret, match, lineAround(text, m[0], m[1])) {
			continue
		}
		s, e = widenToken(text, s, e)
		out = append(out, [2]int{s, e})
	}
	return out
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
		v := &vendorDetector{rule: &rules[i], multiline: multilinePattern(rules[i].re)}
		d := detector{rule: rules[i].id, keywords: keywords(rules[i].keywords...), withNext: true}
		if v.multiline {
			d.region = v.spans
		} else {
			d.scan = v.spans
		}
		out = append(out, d)
	}
	return out
}
