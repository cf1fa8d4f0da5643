package redact

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"podflow.dev/podflow/untrusted/yamlbudget"
)

// Config holds user rules loaded from a YAML file:
//
//	name: acme                    # optional; the manifest records policy "podflow+acme"
//	rules:
//	- name: acme-db-password      # literal: mask this exact value wherever it appears
//	  literal: "correct horse battery staple"
//	- name: acme-ticket-token     # regex: mask capture group 1 of every match
//	  regex: 'ticket_token=([A-Za-z0-9]+)'
//	- name: acme-api-key          # kind + path: mask a field of every object of a kind
//	  kind: ConfigMap
//	  path: data.api-key          # segments split on '.'; ["a.b"] quotes one; * matches any
//
// User rules take precedence over built-in rules and name their masks.
type Config struct {
	Name      string
	detectors []detector
	paths     []pathRule
}

type pathRule struct {
	name string
	kind string
	path []string
}

type configFile struct {
	Name  string       `json:"name,omitempty"`
	Rules []ruleConfig `json:"rules"`
}

type ruleConfig struct {
	Name    string `json:"name"`
	Literal string `json:"literal,omitempty"`
	Regex   string `json:"regex,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Path    string `json:"path,omitempty"`
}

// ConfigError reports a bad redaction config, naming the file and the rule.
type ConfigError struct {
	File string
	// Index is the rule's position, from 1; 0 when the problem is not in one rule.
	Index int
	Rule  string
	Err   error
}

func (e *ConfigError) Error() string {
	switch {
	case e.Index == 0:
		return fmt.Sprintf("redaction config %q: %v", e.File, e.Err)
	case e.Rule == "":
		return fmt.Sprintf("redaction config %q: rule %d: %v", e.File, e.Index, e.Err)
	}
	return fmt.Sprintf("redaction config %q: rule %d (%s): %v", e.File, e.Index, e.Rule, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// minLiteral keeps a literal rule from masking ordinary words.
const minLiteral = 4

// maxLiteralKeyword and maxRules bound the keyword automaton, whose states are 16-bit.
const (
	maxLiteralKeyword = 16
	maxRules          = 2000
)

var ruleNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// LoadConfig reads a redaction config file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read redaction config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig parses a redaction config; file names it in errors.
func ParseConfig(file string, data []byte) (*Config, error) {
	var cf configFile
	if err := yamlbudget.UnmarshalStrict(data, &cf); err != nil {
		return nil, &ConfigError{File: file, Err: err}
	}
	if len(cf.Rules) == 0 {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("no rules")}
	}
	if len(cf.Rules) > maxRules {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("%d rules, more than the %d supported", len(cf.Rules), maxRules)}
	}
	if cf.Name != "" && !ruleNameRE.MatchString(cf.Name) {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("name %q: use lower-case letters, digits and '-'", cf.Name)}
	}
	reserved := map[string]bool{}
	for _, d := range append(builtinDetectors, vendorSet()...) {
		reserved[d.rule] = true
	}
	for _, r := range structuralRules {
		reserved[r] = true
	}
	c := &Config{Name: cf.Name}
	seen := map[string]bool{}
	for i, r := range cf.Rules {
		fail := func(format string, args ...any) error {
			return &ConfigError{File: file, Index: i + 1, Rule: r.Name, Err: fmt.Errorf(format, args...)}
		}
		switch {
		case r.Name == "":
			return nil, fail("name is required")
		case !ruleNameRE.MatchString(r.Name):
			return nil, fail("name: use lower-case letters, digits and '-', at most 64 characters")
		case reserved[r.Name]:
			return nil, fail("name is a built-in rule's")
		case seen[r.Name]:
			return nil, fail("name is used by an earlier rule")
		}
		seen[r.Name] = true
		kinds := 0
		for _, set := range []bool{r.Literal != "", r.Regex != "", r.Kind != "" || r.Path != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, fail("set exactly one of literal, regex, or kind with path")
		}
		switch {
		case r.Literal != "":
			if len(r.Literal) < minLiteral {
				return nil, fail("literal is shorter than %d characters and would mask ordinary text", minLiteral)
			}
			c.detectors = append(c.detectors, literalDetector(r.Name, r.Literal))
		case r.Regex != "":
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				return nil, fail("regex: %v", err)
			}
			if re.NumSubexp() < 1 {
				return nil, fail("regex has no capture group: group 1 is what gets masked")
			}
			c.detectors = append(c.detectors, detector{rule: r.Name, re: re, pick: group(1)})
		default:
			if r.Kind == "" || r.Path == "" {
				return nil, fail("kind and path go together")
			}
			segs, err := parseFieldPath(r.Path)
			if err != nil {
				return nil, fail("path %q: %v", r.Path, err)
			}
			c.paths = append(c.paths, pathRule{name: r.Name, kind: r.Kind, path: segs})
		}
	}
	return c, nil
}

func literalDetector(rule, lit string) detector {
	needle := []byte(lit)
	// The keyword only selects data worth searching, so a prefix does; it keeps the
	// keyword automaton small whatever the literals' length.
	kw := asciiLower(nil, needle[:min(len(needle), maxLiteralKeyword)])
	return detector{
		rule:     rule,
		keywords: [][]byte{kw},
		find: func(data []byte) [][2]int {
			var out [][2]int
			for i := 0; ; {
				j := bytes.Index(data[i:], needle)
				if j < 0 {
					return out
				}
				out = append(out, [2]int{i + j, i + j + len(needle)})
				i += j + len(needle)
			}
		},
	}
}

// parseFieldPath splits a.b["c.d"].*.e into segments.
func parseFieldPath(s string) ([]string, error) {
	var segs []string
	for i := 0; i < len(s); {
		var seg string
		if s[i] == '[' {
			if !strings.HasPrefix(s[i:], `["`) {
				return nil, fmt.Errorf("at %d: '[' must open [\"...\"]", i)
			}
			end := strings.Index(s[i+2:], `"]`)
			if end < 0 {
				return nil, fmt.Errorf("at %d: unterminated [\"", i)
			}
			seg = s[i+2 : i+2+end]
			i += 2 + end + 2
		} else {
			end := strings.IndexAny(s[i:], ".[")
			if end < 0 {
				end = len(s) - i
			}
			seg = s[i : i+end]
			i += end
		}
		if seg == "" {
			return nil, fmt.Errorf("empty segment")
		}
		segs = append(segs, seg)
		if i < len(s) && s[i] == '.' {
			i++
			if i == len(s) {
				return nil, fmt.Errorf("ends with '.'")
			}
		} else if i < len(s) && s[i] != '[' {
			return nil, fmt.Errorf("at %d: expected '.' or '['", i)
		}
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("empty path")
	}
	return segs, nil
}

// markUserPaths marks the nodes that user path rules for kind select in object n.
func (w *walker) markUserPaths(n *jnode, kind string) {
	for _, r := range w.p.paths {
		if !strings.EqualFold(r.kind, kind) {
			continue
		}
		selectPath(w.doc, n, r.path, func(m *jnode) {
			if w.user == nil {
				w.user = map[*jnode]string{}
			}
			if _, taken := w.user[m]; !taken {
				w.user[m] = r.name
			}
		})
	}
}

func selectPath(d *jparser, n *jnode, path []string, visit func(*jnode)) {
	if len(path) == 0 {
		visit(n)
		return
	}
	seg, rest := path[0], path[1:]
	switch n.kind {
	case jObject:
		kids := d.kids(n)
		for i := range kids {
			if seg == "*" || d.key(&kids[i]) == seg {
				selectPath(d, &kids[i], rest, visit)
			}
		}
	case jArray:
		kids := d.kids(n)
		for i := range kids {
			if seg == "*" || seg == strconv.Itoa(i) {
				selectPath(d, &kids[i], rest, visit)
			}
		}
	}
}
