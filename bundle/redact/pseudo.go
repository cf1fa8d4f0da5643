package redact

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Pseudonymizer applies a mapping; it is a bundle.Filter. Learn extends the mapping with
// the identities of a bundle; after that it is read-only and safe for concurrent use.
type Pseudonymizer struct {
	m *Mapping
	// next numbers per category, continuing the mapping's pseudonyms.
	next map[string]int
	// ipTree maps octet prefixes ("10", "10.244") to their pseudonyms.
	ipTree map[string]string
	ipNext map[string]int
}

// NewPseudonymizer continues the mapping m.
func NewPseudonymizer(m *Mapping) *Pseudonymizer {
	p := &Pseudonymizer{m: m, next: map[string]int{}, ipTree: map[string]string{}, ipNext: map[string]int{}}
	for _, v := range m.Names {
		if cat, n, ok := splitPseudonym(v); ok && n >= p.next[cat] {
			p.next[cat] = n + 1
		}
	}
	for _, v := range m.UIDs {
		if n, err := strconv.Atoi(strings.TrimLeft(v[strings.LastIndexByte(v, '-')+1:], "0")); err == nil && n >= p.next["uid"] {
			p.next["uid"] = n + 1
		}
	}
	for orig, pseudo := range m.IPs {
		o, q := strings.Split(orig, "."), strings.Split(pseudo, ".")
		if len(o) != 4 || len(q) != 4 {
			continue
		}
		for i := 1; i <= 4; i++ {
			parent, key := strings.Join(o[:i-1], "."), strings.Join(o[:i], ".")
			p.ipTree[key] = strings.Join(q[:i], ".")
			if n, err := strconv.Atoi(q[i-1]); err == nil && n >= p.ipNext[parent] {
				p.ipNext[parent] = n + 1
			}
		}
	}
	return p
}

// Mapping returns the mapping, extended by Learn.
func (p *Pseudonymizer) Mapping() *Mapping { return p.m }

// splitPseudonym parses "deployment-12" into its category and number.
func splitPseudonym(v string) (string, int, bool) {
	i := strings.LastIndexByte(v, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return "", 0, false
	}
	return v[:i], n, true
}

// wellKnown names identify no one and are kept so that readers still recognize them.
var wellKnown = map[string]bool{
	"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
	"true": true, "false": true, "none": true, "null": true, "localhost": true,
}

func keepName(s string) bool {
	if len(s) < 3 || wellKnown[s] || !isDNSName(strings.ToLower(s)) {
		return true
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// name maps an identity of a category, deriving the pseudonym from a mapped
// dash-separated prefix when there is one (web-7d9f8b6c4 after web). A pseudonym never
// equals a real name (taken), so every name in the output is unambiguous.
func (p *Pseudonymizer) name(category, s string, taken map[string]bool) {
	if keepName(s) {
		return
	}
	if _, ok := p.m.Names[s]; ok {
		return
	}
	if short, _, ok := strings.Cut(s, "."); ok && (category == "node" || category == "host") {
		if v, ok := p.m.Names[short]; ok {
			p.m.Names[s] = v // the domain identifies too; the host keeps its short name's pseudonym
			return
		}
	}
	for i := len(s) - 1; i > 0; i-- {
		if s[i] != '-' {
			continue
		}
		if v, ok := p.m.Names[s[:i]]; ok && !taken[v+s[i:]] {
			p.m.Names[s] = v + s[i:]
			return
		}
	}
	for {
		p.next[category] = max(p.next[category], 1)
		v := fmt.Sprintf("%s-%d", category, p.next[category])
		p.next[category]++
		if !taken[v] {
			p.m.Names[s] = v
			return
		}
	}
}

func (p *Pseudonymizer) uid(s string) {
	if _, ok := p.m.UIDs[s]; ok {
		return
	}
	p.next["uid"] = max(p.next["uid"], 1)
	p.m.UIDs[s] = fmt.Sprintf("00000000-0000-4000-8000-%012d", p.next["uid"])
	p.next["uid"]++
}

// ip maps an IPv4 address octet by octet, so addresses that share a prefix share the
// pseudonym's prefix and subnets stay recognizable; 0 and 255 octets are kept.
func (p *Pseudonymizer) ip(s string) {
	if _, ok := p.m.IPs[s]; ok || keepIP(s) {
		return
	}
	o := strings.Split(s, ".")
	for i := 1; i <= 4; i++ {
		parent, key := strings.Join(o[:i-1], "."), strings.Join(o[:i], ".")
		if _, ok := p.ipTree[key]; ok {
			continue
		}
		v := o[i-1]
		if i > 1 && (v == "0" || v == "255") {
			p.ipTree[key] = joinIP(p.ipTree[parent], v)
			continue
		}
		n, ok := p.nextOctet(parent, i == 1)
		if !ok {
			// Every octet value is taken under this prefix; keep the rest as it is.
			p.ipTree[key] = joinIP(p.ipTree[parent], v)
			continue
		}
		p.ipTree[key] = joinIP(p.ipTree[parent], strconv.Itoa(n))
	}
	p.m.IPs[s] = p.ipTree[s]
}

// nextOctet picks the next free octet under parent: from 10 for the first octet (so
// pseudonyms look private), from 1 below it, never 0, 127 (first octet) or 255.
func (p *Pseudonymizer) nextOctet(parent string, first bool) (int, bool) {
	n := max(p.ipNext[parent], 1)
	if first {
		n = max(n, 10)
	}
	for n == 127 && first {
		n++
	}
	if n > 254 {
		return 0, false
	}
	p.ipNext[parent] = n + 1
	return n, true
}

func joinIP(parent, octet string) string {
	if parent == "" {
		return octet
	}
	return parent + "." + octet
}

func keepIP(s string) bool {
	return s == "0.0.0.0" || s == "255.255.255.255" || strings.HasPrefix(s, "127.")
}

// sortedKeys lists a set in order, so pseudonyms are assigned deterministically.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j]) // prefixes before the names built on them
		}
		return out[i] < out[j]
	})
	return out
}
