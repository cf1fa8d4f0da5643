package redact

import (
	"bytes"

	"podflow.dev/podflow/bundle"
)

// isIPv4 matches dotted-quad tokens.
func isIPv4(b []byte) bool {
	parts := 0
	n, digits := 0, 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '.' {
			if digits == 0 || digits > 3 || n > 255 || (digits > 1 && b[i-digits] == '0') {
				return false
			}
			parts++
			n, digits = 0, 0
			continue
		}
		if b[i] < '0' || b[i] > '9' {
			return false
		}
		n = n*10 + int(b[i]-'0')
		digits++
	}
	return parts == 4
}

// isUUID matches the 8-4-4-4-12 hex form of Kubernetes UIDs.
func isUUID(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// tokens calls f with the start and end of every token of data outside masks.
func tokens(data []byte, f func(start, end int)) {
	masks := maskSpans(data)
	for i := 0; i < len(data); {
		if !isTokenByte(data[i]) {
			i++
			continue
		}
		// After a backslash, n, t and r belong to an escape (\n10.0.0.1), not the token.
		if i > 0 && data[i-1] == '\\' && (data[i] == 'n' || data[i] == 't' || data[i] == 'r') {
			i++
			continue
		}
		j := i
		for j < len(data) && isTokenByte(data[j]) {
			j++
		}
		if !overlapsAny(i, j, masks) {
			f(i, j)
		}
		i = j
	}
}

// replaceToken returns the pseudonym of one token, or ok=false to keep it.
func (p *Pseudonymizer) replaceToken(t []byte) ([]byte, bool) {
	if isIPv4(t) {
		v, ok := p.m.IPs[string(t)]
		return []byte(v), ok
	}
	if r, ok := p.replacePart(t); ok {
		return r, true
	}
	if bytes.IndexByte(t, '.') < 0 {
		return nil, false
	}
	var out []byte
	changed := false
	for i, part := range bytes.Split(t, []byte{'.'}) {
		if i > 0 {
			out = append(out, '.')
		}
		if r, ok := p.replacePart(part); ok {
			out, changed = append(out, r...), true
		} else {
			out = append(out, part...)
		}
	}
	return out, changed
}

// replacePart maps a known identity, or a token whose dash-separated prefix or suffix
// is one.
func (p *Pseudonymizer) replacePart(t []byte) ([]byte, bool) {
	if len(t) < 3 {
		return nil, false
	}
	if v, ok := p.m.Names[string(t)]; ok {
		return []byte(v), true
	}
	if v, ok := p.m.UIDs[string(t)]; ok {
		return []byte(v), true
	}
	for i := len(t) - 1; i > 0; i-- {
		if t[i] != '-' {
			continue
		}
		if v, ok := p.lookup(t[:i]); ok {
			return append([]byte(v), t[i:]...), true
		}
	}
	for i := 1; i < len(t); i++ {
		if t[i-1] != '-' {
			continue
		}
		if v, ok := p.lookup(t[i:]); ok {
			return append(append([]byte(nil), t[:i]...), v...), true
		}
	}
	return nil, false
}

func (p *Pseudonymizer) lookup(b []byte) (string, bool) {
	if v, ok := p.m.Names[string(b)]; ok {
		return v, true
	}
	v, ok := p.m.UIDs[string(b)]
	return v, ok
}

// text pseudonymizes free text.
func (p *Pseudonymizer) text(data []byte) []byte {
	var edits []edit
	tokens(data, func(s, e int) {
		if r, ok := p.replaceToken(data[s:e]); ok {
			edits = append(edits, edit{s, e, r})
		}
	})
	return splice(data, edits)
}

// Apply pseudonymizes one file; it implements bundle.Filter. JSON stays valid JSON.
func (p *Pseudonymizer) Apply(_ string, data []byte) ([]byte, error) {
	if looksLikeJSON(data) {
		if root, doc, err := parseJSON(data); err == nil {
			var edits []edit
			p.jsonStrings(doc, root, &edits)
			return splice(data, edits), nil
		}
	}
	return p.text(data), nil
}

func (p *Pseudonymizer) jsonStrings(d *jparser, n *jnode, edits *[]edit) {
	switch n.kind {
	case jString:
		s := d.str(n)
		if out := p.text([]byte(s)); string(out) != s {
			*edits = append(*edits, edit{n.start, n.end, quoteJSON(string(out))})
		}
	case jObject, jArray:
		kids := d.kids(n)
		for i := range kids {
			p.jsonStrings(d, &kids[i], edits)
		}
	}
}

// String pseudonymizes a piece of text, such as an error message in the manifest.
func (p *Pseudonymizer) String(s string) string { return string(p.text([]byte(s))) }

// Path renames a bundle path: the namespace, pod, container and node parts are
// pseudonymized like the same names inside files; the layout itself is kept.
func (p *Pseudonymizer) Path(name string) string {
	info := bundle.ParsePath(name)
	switch info.Area {
	case "namespaced":
		return bundle.NamespacedResourcePath(info.Kind, p.String(info.Namespace))
	case "log":
		return bundle.LogPath(p.String(info.Namespace), p.String(info.Pod), p.String(info.Container), info.Previous)
	case "node":
		return bundle.NodePath(p.String(info.Node), info.NodeFile)
	}
	return name
}

// Manifest pseudonymizes what a manifest says about the cluster and renames its paths.
func (p *Pseudonymizer) Manifest(m *bundle.Manifest) {
	s := &m.Scope
	for i, ns := range s.Namespaces {
		s.Namespaces[i] = p.String(ns)
	}
	s.Pod, s.Node, s.LabelSelector = p.String(s.Pod), p.String(s.Node), p.String(s.LabelSelector)
	m.Cluster.Name, m.Cluster.Server = p.String(m.Cluster.Name), p.String(m.Cluster.Server)
	for i := range m.Sources {
		src := &m.Sources[i]
		src.Name, src.Error = p.String(src.Name), p.String(src.Error)
		for j, f := range src.Files {
			src.Files[j] = p.Path(f)
		}
	}
	if len(m.Redaction.ByFile) > 0 {
		byFile := make(map[string]map[string]int, len(m.Redaction.ByFile))
		for f, rules := range m.Redaction.ByFile {
			byFile[p.Path(f)] = rules
		}
		m.Redaction.ByFile = byFile
	}
}
