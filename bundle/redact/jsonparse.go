package redact

import (
	"encoding/binary"
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
	kind jkind
	// esc is set when a string, a member name or anything inside a container was
	// written with escapes, so its decoded text differs from its bytes.
	esc bool
	// pruned is set on an object or array whose members a pruning parse did not keep;
	// see parse.
	pruned bool
	// kw and nameKw are set when a detector keyword, or a name keyword, ends inside
	// the value; the parser sets them when it has the text's hits.
	kw, nameKw bool
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

// memberString returns the named member when it is a string, else "".
func (n *jnode) memberString(name string) string {
	m := n.member(name)
	if m == nil || m.kind != jString {
		return ""
	}
	return m.str
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
	data []byte
	// src is a copy of data from srcAt on, a chunk at a time as the parse goes:
	// strings and member names without escapes are slices of it, so decoding them
	// allocates nothing, and a file that stops being JSON after its first line (a log
	// of JSON lines) is not copied whole.
	src   string
	srcAt int
	pos   int
	depth int
	slab  []jnode // nodes are carved from slabs of slabNodes values
	// stack collects the children of the containers being parsed, so each container
	// gets one exactly sized slice instead of a growing one, carved from kidSlab.
	stack   []*jnode
	kidSlab []*jnode
	// slabs and kidSlabs count the slabs made, so pruning knows whether the nodes made
	// since a mark are still at the end of the current slab.
	slabs, kidSlabs int
	// prune, hits and base: see parse.
	prune bool
	hits  *keywordHits
	base  int
}

const (
	slabNodes = 256
	slabKids  = 1024
)

// slabSize is the size of a new slab: the first is no larger than a small document
// needs (a JSON line of a log), the others full.
func (p *jparser) slabSize(full, made int) int {
	if made > 0 {
		return full
	}
	return min(full, len(p.data)/4+8)
}

// slabMark is where the slabs were when a container started.
type slabMark struct {
	slabs, kidSlabs int
	slab            []jnode
	kidLen          int
}

func (p *jparser) mark() slabMark {
	return slabMark{p.slabs, p.kidSlabs, p.slab, len(p.kidSlab)}
}

// done sets the keyword flags of container n, started at mark m, and prunes it when
// pruning and nothing in it can matter: no keyword ends inside it and nothing in it is
// escaped. Its members' nodes are given back to the slabs when no slab was made since.
func (p *jparser) done(n *jnode, m slabMark) {
	if p.hits == nil {
		return
	}
	n.kw, n.nameKw = p.hits.endIn(p.base+n.start, p.base+n.end)
	if !p.prune || n.esc || len(n.kids) == 0 || n.kw || n.nameKw {
		return
	}
	n.kids, n.pruned = nil, true
	if p.slabs == m.slabs {
		clear(m.slab[:len(m.slab)-len(p.slab)])
		p.slab = m.slab
	}
	if p.kidSlabs == m.kidSlabs {
		clear(p.kidSlab[m.kidLen:])
		p.kidSlab = p.kidSlab[:m.kidLen]
	}
}

// expand parses the members of a pruned container again, keeping them all.
func (p *jparser) expand(n *jnode) {
	if !n.pruned {
		return
	}
	n.pruned = false
	q := &jparser{data: p.data, pos: n.start}
	if m, err := q.value(); err == nil {
		n.kids = m.kids
	}
}

func (p *jparser) children(mark int) []*jnode {
	n := len(p.stack) - mark
	if cap(p.kidSlab)-len(p.kidSlab) < n {
		p.kidSlab = make([]*jnode, 0, max(p.slabSize(slabKids, p.kidSlabs), n))
		p.kidSlabs++
	}
	l := len(p.kidSlab)
	kids := p.kidSlab[l : l+n : l+n]
	p.kidSlab = p.kidSlab[:l+n]
	copy(kids, p.stack[mark:])
	clear(p.stack[mark:])
	p.stack = p.stack[:mark]
	return kids
}

func (p *jparser) node(kind jkind, start int) *jnode {
	if len(p.slab) == 0 {
		p.slab = make([]jnode, p.slabSize(slabNodes, p.slabs))
		p.slabs++
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind, n.start = kind, start // the slab is zero: new, or cleared by done
	return n
}

// parseJSON parses one complete JSON document.
func parseJSON(data []byte) (*jnode, error) {
	root, _, err := parse(&jparser{data: data})
	return root, err
}

// parse parses the document p.data. With p.prune it keeps only the members of the
// objects and arrays that hold a keyword of p.hits (the hits of the text the document
// is in, at offset p.base) or an escape: redaction has nothing to do in the others,
// and most of a large document is such. It accepts exactly the documents parseJSON
// accepts, and p expands a pruned container on demand.
func parse(p *jparser) (*jnode, *jparser, error) {
	data := p.data
	p.ws()
	n, err := p.value()
	if err != nil {
		return nil, nil, err
	}
	p.ws()
	if p.pos != len(data) {
		return nil, nil, p.fail("data after the top-level value")
	}
	return n, p, nil
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

// rawString scans a string literal and returns its decoded value, and whether it was
// written with escapes.
func (p *jparser) rawString() (string, bool, error) {
	start := p.pos
	// Most strings hold nothing but plain bytes up to their closing quote.
	if i := plainRun(p.data, start+1); i < len(p.data) && p.data[i] == '"' {
		p.pos = i + 1
		return p.text(start+1, i), false, nil
	}
	p.pos++ // opening quote
	escaped := false
	for {
		if p.pos >= len(p.data) {
			return "", false, p.fail("unterminated string")
		}
		p.pos = plainRun(p.data, p.pos)
		if p.pos >= len(p.data) {
			continue
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !escaped {
				return p.text(start+1, p.pos-1), false, nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", false, &jsonSyntaxError{Offset: start, Msg: "invalid string: " + err.Error()}
			}
			return s, true, nil
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(p.data) {
				return "", false, p.fail("unterminated escape")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					return "", false, p.fail("invalid unicode escape")
				}
				p.pos += 6
			default:
				return "", false, p.fail("invalid escape")
			}
		case c < 0x20:
			return "", false, p.fail("control character in string")
		default:
			p.pos++
		}
	}
}

// srcChunk is how much of a document is copied into src at a time.
const srcChunk = 64 << 10

// text returns data[a:b] as a string, a slice of src, which it moves on when the
// text is past it. Strings are read in order, so a chunk is copied once.
func (p *jparser) text(a, b int) string {
	if a < p.srcAt || b > p.srcAt+len(p.src) {
		p.srcAt = a
		p.src = string(p.data[a:min(len(p.data), a+max(srcChunk, b-a))])
	}
	return p.src[a-p.srcAt : b-p.srcAt]
}

// plainRun returns the offset of the first byte at or after i that ends the plain run
// of a string literal (see stringStop), or len(b). It tests eight bytes at a time.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		// A byte below 0x20, or one that is zero after the xor: exact tests of
		// whether the word holds such a byte, not of where.
		if ((x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			break
		}
	}
	for i < len(b) && !stringStop[b[i]] {
		i++
	}
	return i
}

// stringStop are the bytes that end the plain run of a string literal: its closing
// quote, an escape, or a control character, which is an error.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *jparser) string() (*jnode, error) {
	start := p.pos
	s, esc, err := p.rawString()
	if err != nil {
		return nil, err
	}
	n := p.node(jString, start)
	n.end, n.str, n.esc = p.pos, s, esc
	if p.hits != nil {
		n.kw, n.nameKw = p.hits.endIn(p.base+n.start, p.base+n.end)
	}
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
	sm := p.mark()
	mark := len(p.stack)
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		p.depth--
		p.done(n, sm)
		return n, nil
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		key, keyEsc, err := p.rawString()
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
		v.esc = v.esc || keyEsc
		n.esc = n.esc || v.esc
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
			p.done(n, sm)
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
	sm := p.mark()
	mark := len(p.stack)
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		p.depth--
		p.done(n, sm)
		return n, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.esc = n.esc || v.esc
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
			p.done(n, sm)
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
