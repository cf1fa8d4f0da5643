package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
)

// PolicyName and PolicyVersion identify the built-in rules in the manifest; the version
// changes whenever a built-in rule changes what it masks.
const (
	PolicyName    = "podflow"
	PolicyVersion = "2"
)

// Options configure New.
type Options struct {
	// Key keys the digests in masks. Empty means a random key for this policy only.
	Key []byte
	// Config adds user rules; nil means the built-in rules only.
	Config *Config
	// Disabled makes a policy that passes every file through untouched and reports
	// redaction as disabled.
	Disabled bool
	// Logger receives per-file detail at trace level; nil discards it.
	Logger logrus.FieldLogger
}

// Policy is a redaction policy. It is safe for concurrent use, as bundle.Writer requires.
type Policy struct {
	name, version string
	enabled       bool
	key           []byte
	detectors     []detector
	matcher       *matcher
	// unkeyed is true when some detector has no keywords and must see all text.
	unkeyed bool
	// unkeyedDets are the detectors without keywords.
	unkeyedDets []int
	paths       []pathRule
	log         logrus.FieldLogger

	mu     sync.Mutex
	report bundle.Redaction
	// untouched, while a leak scan watches the policy (Flags.LeakScan), holds the files
	// Apply left as they came and the scan has not seen yet.
	untouched map[string]bool
	// macs holds keyed HMACs for digest to reuse.
	macs sync.Pool
	// exhaustive turns off the shortcuts that make redaction fast: pruning, skipping
	// containers without keywords, the string memo, reusing a file's keyword hits.
	// Tests set it to check that the shortcuts change nothing.
	exhaustive bool
}

// New builds a policy from the built-in rules and the user rules of opts.Config.
func New(opts Options) (*Policy, error) {
	key := opts.Key
	if !opts.Disabled && len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate redaction key: %w", err)
		}
	}
	return build(opts, key), nil
}

func build(opts Options, key []byte) *Policy {
	p := &Policy{name: PolicyName, version: PolicyVersion, enabled: !opts.Disabled, key: key, log: opts.Logger}
	if p.log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		p.log = l
	}
	if !p.enabled {
		p.name, p.version = "none", ""
		return p
	}
	if c := opts.Config; c != nil {
		if c.Name != "" {
			p.name = PolicyName + "+" + c.Name
		}
		p.detectors = append(p.detectors, c.detectors...)
		p.paths = c.paths
	}
	p.detectors = append(p.detectors, builtinDetectors...)
	p.detectors = append(p.detectors, vendorSet()...)
	for i, d := range p.detectors {
		if d.keywords == nil {
			p.unkeyed = true
			p.unkeyedDets = append(p.unkeyedDets, i)
		}
	}
	p.matcher = newMatcher(p.detectors, envNameKeywords)
	return p
}

// Enabled reports whether the policy redacts anything at all.
func (p *Policy) Enabled() bool { return p.enabled }

// Apply redacts one bundle file; it implements bundle.Filter. It never fails: a file
// that is not valid JSON is redacted as text.
func (p *Policy) Apply(name string, data []byte) ([]byte, error) {
	if !p.enabled {
		return data, nil
	}
	c := counter{}
	out, untouched := p.redactFile(name, data, c)
	p.record(name, c)
	if untouched {
		p.markUntouched(name)
	}
	return out, nil
}

// markUntouched notes, for the leak scan watching this policy, a file that Apply left
// as it came.
func (p *Policy) markUntouched(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.untouched != nil {
		p.untouched[name] = true
	}
}

// takeUntouched reports, once, whether Apply left the file name as it came.
func (p *Policy) takeUntouched(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.untouched[name] {
		return false
	}
	delete(p.untouched, name)
	return true
}

// RedactString redacts free text that ends up in file, such as an error message
// recorded in the manifest, and counts what it masked under that file.
func (p *Policy) RedactString(file, s string) string {
	if !p.enabled || s == "" {
		return s
	}
	c := counter{}
	out := splice([]byte(s), p.textEdits([]byte(s), -1, c))
	p.record(file, c)
	return string(out)
}

func (p *Policy) record(file string, c counter) {
	if len(c) == 0 {
		return
	}
	p.mu.Lock()
	for rule, n := range c {
		p.report.Add(file, rule, n)
	}
	p.mu.Unlock()
	p.log.WithFields(logrus.Fields{"file": file, "masked": c}).Trace("redacted")
}

// Redaction reports what the policy masked so far, for the manifest. It holds counts
// per rule and per file, never a value.
func (p *Policy) Redaction() bundle.Redaction {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := bundle.Redaction{Policy: p.name, Version: p.version, Enabled: p.enabled, Total: p.report.Total}
	if len(p.report.ByRule) > 0 {
		r.ByRule = make(map[string]int, len(p.report.ByRule))
		for k, v := range p.report.ByRule {
			r.ByRule[k] = v
		}
	}
	if len(p.report.ByFile) > 0 {
		r.ByFile = make(map[string]map[string]int, len(p.report.ByFile))
		for f, m := range p.report.ByFile {
			r.ByFile[f] = make(map[string]int, len(m))
			for k, v := range m {
				r.ByFile[f][k] = v
			}
		}
	}
	return r
}

// digest is the keyed short hash that keeps equal secrets equal in every file.
func (p *Policy) digest(v []byte) string {
	m, ok := p.macs.Get().(hash.Hash)
	if !ok {
		m = hmac.New(sha256.New, p.key)
	}
	m.Reset()
	m.Write(v)
	var sum [sha256.Size]byte
	d := hex.EncodeToString(m.Sum(sum[:0])[:3])
	p.macs.Put(m)
	return d
}

func (p *Policy) mask(rule string, v []byte) []byte {
	return []byte("<redacted:" + rule + ":" + p.digest(v) + ">")
}

// secretMask masks one value of a Secret's data or stringData, keeping its size. For
// data the mask is itself base64-encoded, so the Secret still decodes as a
// Kubernetes Secret; decoding the value shows the mask.
func (p *Policy) secretMask(raw []byte, encode bool) []byte {
	m := fmt.Sprintf("<redacted:%s:%s:size=%d>", RuleSecretValue, p.digest(raw), len(raw))
	if encode {
		return []byte(base64.StdEncoding.EncodeToString([]byte(m)))
	}
	return []byte(m)
}

var maskPattern = regexp.MustCompile(`<redacted:[a-z0-9-]{1,64}:[0-9a-f]{6}(?::size=[0-9]{1,12})?>`)

var exactMask = regexp.MustCompile(`^` + maskPattern.String() + `$`)

// encodedMaskPrefix is base64("<redacted:"), how a masked Secret data value starts.
const encodedMaskPrefix = "PHJlZGFjdGVkO"

// isMask reports whether v is exactly one mask, plain or base64-encoded.
func isMask(v string) bool {
	if strings.HasPrefix(v, "<redacted:") {
		return exactMask.MatchString(v)
	}
	if !strings.HasPrefix(v, encodedMaskPrefix) {
		return false
	}
	d, err := base64.StdEncoding.DecodeString(v)
	return err == nil && exactMask.Match(d)
}

// maskSpans finds the masks already in data, which detectors must leave alone.
func maskSpans(data []byte) [][]int {
	if !bytes.Contains(data, []byte("<redacted:")) {
		return nil
	}
	return maskPattern.FindAllIndex(data, -1)
}

// sink receives every redaction: a counter while writing, a hit list while scanning.
type sink interface {
	hit(rule string, offset int)
}

type counter map[string]int

func (c counter) hit(rule string, _ int) { c[rule]++ }

// edit replaces data[start:end] with repl.
type edit struct {
	start, end int
	repl       []byte
}

// splice applies non-overlapping edits; data itself is returned when there are none.
func splice(data []byte, edits []edit) []byte {
	if len(edits) == 0 {
		return data
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	n := len(data)
	for _, e := range edits {
		n += len(e.repl) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, data[last:e.start]...)
		out = append(out, e.repl...)
		last = e.end
	}
	return append(out, data[last:]...)
}
