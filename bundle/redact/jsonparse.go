package redact

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A JSON document is parsed into a light tree that remembers where every value sits in
// the source, so redaction can splice masks into the original bytes: key order,
// indentation and number spelling survive, and untouched files stay byte-identical.

type jkind uint8

const (
	jScalar jkind = iota // number, true, false, null
	jString
	jObject
	jArray
)

type jnode struct {
	kind       jkind
	start, end int    // byte span of the value in its document
	key        string // member name when the parent is an object
	str        string // decoded value of a string
	kids       []*jnode
}

// member returns the value of the named member of an object, or nil.
func (n *jnode) member(name string) *jnode {
	if n == nil || n.kind != jObject {
		return nil
	}
	for _, k := range n.kids {
		if k.key == name {
			return k
		}
	}
	return nil
}

// memberString returns the named member when it is a string.
func (n *jnode) memberString(name string) (string, bool) {
	m := n.member(name)
	if m == nil || m.kind != jString {
		return "", false
	}
	return m.str, true
}

// maxJSONDepth matches encoding/json, so both agree on which documents are valid.
const maxJSONDepth = 10000

type jsonSyntaxError struct {
	Offset int
	Msg    string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

type jparser struct {
	data  []byte
	pos   int
	depth int
	slab  []jnode // nodes are carved from slabs: one allocation per 256 values
	// stack collects the children of the containers being parsed, so each container
	// gets one exactly sized slice instead of a growing one.
	stack []*jnode
}

func (p *jparser) children(mark int) []*jnode {
	kids := make([]*jnode, len(p.stack)-mark)
	copy(kids, p.stack[mark:])
	clear(p.stack[mark:])
	p.stack = p.stack[:mark]
	return kids
}

func (p *jparser) node(kind jkind, start int) *jnode {
	if len(p.slab) == 0 {
		p.slab = make([]jnode, 256)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind, n.start = kind, start
	return n
}

// parseJSON parses one complete JSON document.
func parseJSON(data []byte) (*jnode, error) {
	p := &jparser{data: data}
	p.ws()
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos != len(data) {
		return nil, p.fail("data after the top-level value")
	}
	return n, nil
}

func (p *jparser) fail(msg string) error { return &jsonSyntaxError{Offset: p.pos, Msg: msg} }

func (p *jparser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) value() (*jnode, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.fail("unexpected character")
}

func (p *jparser) literal(word string) (*jnode, error) {
	end := p.pos + len(word)
	if end > len(p.data) || string(p.data[p.pos:end]) != word {
		return nil, p.fail("invalid literal")
	}
	n := p.node(jScalar, p.pos)
	n.end = end
	p.pos = end
	return n, nil
}

func (p *jparser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

func (p *jparser) number() (*jnode, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if p.digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return nil, p.fail("invalid number fraction")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return nil, p.fail("invalid number exponent")
		}
	}
	n := p.node(jScalar, start)
	n.end = p.pos
	return n, nil
}

// rawString scans a string literal and returns its decoded value.
func (p *jparser) rawString() (string, int, error) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for {
		if p.pos >= len(p.data) {
			return "", 0, p.fail("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !escaped {
				return string(p.data[start+1 : p.pos-1]), start, nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", 0, &jsonSyntaxError{Offset: start, Msg: "invalid string: " + err.Error()}
			}
			return s, start, nil
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(p.data) {
				return "", 0, p.fail("unterminated escape")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					return "", 0, p.fail("invalid unicode escape")
				}
				p.pos += 6
			default:
				return "", 0, p.fail("invalid escape")
			}
		case c < 0x20:
			return "", 0, p.fail("control character in string")
		default:
			p.pos++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *jparser) string() (*jnode, error) {
	s, start, err := p.rawString()
	if err != nil {
		return nil, err
	}
	n := p.node(jString, start)
	n.end, n.str = p.pos, s
	return n, nil
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nested too deeply")
	}
	return nil
}

func (p *jparser) object() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := p.node(jObject, p.pos)
	mark := len(p.stack)
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		p.depth--
		return n, nil
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		key, _, err := p.rawString()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':' after a member name")
		}
		p.pos++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		v.key = key
		p.stack = append(p.stack, v)
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.fail("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.ws()
		case '}':
			p.pos++
			n.end = p.pos
			n.kids = p.children(mark)
			p.depth--
			return n, nil
		default:
			return nil, p.fail("expected ',' or '}' in object")
		}
	}
}

func (p *jparser) array() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := p.node(jArray, p.pos)
	mark := len(p.stack)
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		p.depth--
		return n, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.stack = append(p.stack, v)
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.fail("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.ws()
		case ']':
			p.pos++
			n.end = p.pos
			n.kids = p.children(mark)
			p.depth--
			return n, nil
		default:
			return nil, p.fail("expected ',' or ']' in array")
		}
	}
}

// quoteJSON encodes s as a JSON string. Unlike encoding/json it leaves <, > and & alone,
// so masks stay readable; invalid UTF-8 becomes U+FFFD, as encoding/json would do.
func quoteJSON(s string) []byte {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out = append(out, '\\', c)
			case c == '\n':
				out = append(out, '\\', 'n')
			case c == '\r':
				out = append(out, '\\', 'r')
			case c == '\t':
				out = append(out, '\\', 't')
			case c < 0x20 || c == 0x7f:
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			out = append(out, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return append(out, '"')
}
