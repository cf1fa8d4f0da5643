package redact

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// A JSON document is parsed into a light tree that remembers where every value sits in
// the source, so redaction can splice masks into the original bytes: key order,
// indentation and number spelling survive, and untouched files stay byte-identical.
//
// The tree holds no pointers: a node names its member name and string by offsets into
// the document, and its children by their place in the parser's node chunks, where the
// children of one container lie side by side. So a large document is a few allocations
// the garbage collector need not scan, and building it writes no pointers. The parser
// is the document: it reads a node's name, string and children (key, str, kids).

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
	// the value; the parser sets them when it has the text's hits. In an object or an
	// array they count the keywords that can make something inside masked: those in
	// its strings, and in its member names that can make a value a credential's (see
	// nameMatters), not those in other names (secretKeyRef, mountPath, topologyKey) nor
	// between values.
	kw, nameKw bool
	// keyInert is set on a member whose name can make nothing of its value: the
	// parser had the text's hits, the name is written without escapes and holds no
	// keyword that matters.
	keyInert   bool
	start, end int // byte span of the value in its document
	// keyAt and keyLen place the member name's text in the document, when the parent
	// is an object; keyDec and strDec are 1 + the index of the decoded member name or
	// string in the parser's decoded list when they were written with escapes, else 0.
	keyAt                  int
	keyLen                 int32
	keyDec, strDec         int32
	kidChunk, kidOff, kidN int32 // the children: chunks[kidChunk][kidOff:kidOff+kidN]
}

// key returns the member name of n, "" when n is no object's member.
func (p *jparser) key(n *jnode) string {
	if n.keyDec != 0 {
		return p.decoded[n.keyDec-1]
	}
	return p.src[n.keyAt : n.keyAt+int(n.keyLen)]
}

// str returns the decoded value of a string, "" for any other node.
func (p *jparser) str(n *jnode) string {
	switch {
	case n.kind != jString:
		return ""
	case n.strDec != 0:
		return p.decoded[n.strDec-1]
	}
	return p.src[n.start+1 : n.end-1]
}

// kids returns the members of an object or the elements of an array.
func (p *jparser) kids(n *jnode) []jnode {
	if n.kidN == 0 {
		return nil
	}
	return p.chunks[n.kidChunk][n.kidOff : n.kidOff+n.kidN : n.kidOff+n.kidN]
}

// member returns the value of the named member of an object, or nil.
func (p *jparser) member(n *jnode, name string) *jnode {
	if n == nil || n.kind != jObject {
		return nil
	}
	kids := p.kids(n)
	for i := range kids {
		if p.key(&kids[i]) == name {
			return &kids[i]
		}
	}
	return nil
}

// memberString returns the named member when it is a string, else "".
func (p *jparser) memberString(n *jnode, name string) string {
	m := p.member(n, name)
	if m == nil || m.kind != jString {
		return ""
	}
	return p.str(m)
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
	// src is data as a string, made once the parse succeeded: names and strings
	// without escapes are slices of it, so reading them allocates nothing. It is a
	// copy, or with alias data itself, for a reader whose strings die with the read
	// and whose data nothing changes meanwhile (redaction); see parse.
	src   string
	alias bool
	pos   int
	depth int
	// stack holds the children of the containers being parsed; a container's are
	// copied side by side into the last of chunks when it closes. spare is a chunk a
	// pruned container gave back.
	stack   []jnode
	chunks  [][]jnode
	spare   []jnode
	decoded []string
	root    jnode
	// prune, hits and base: see parse.
	prune bool
	hits  *keywordHits
	base  int
	// names remembers nameMatters of the member names holding a keyword.
	names map[string]bool
	// nextHit is the offset in the text of the first hit at or after the end of the
	// last string asked about; see keywordsIn.
	nextHit int
}

// chunkNodes is the size of a node chunk; the first is no larger than a small
// document needs (a JSON line of a log).
const chunkNodes = 4096

// chunkPool holds full chunks that documents read before gave back (see release), so
// a large document's nodes do not cost a fresh, cleared allocation each.
var chunkPool sync.Pool

// release gives the document's full chunks to the next documents read. The caller is
// done with the document: no node of it is read after.
func (p *jparser) release() {
	for _, c := range append(p.chunks, p.spare) {
		if cap(c) == chunkNodes {
			c = c[:0]
			chunkPool.Put(&c)
		}
	}
	p.chunks, p.spare = nil, nil
}

// chunkMark is where the chunks were when a container started.
type chunkMark struct{ chunks, len int }

func (p *jparser) mark() chunkMark {
	m := chunkMark{chunks: len(p.chunks)}
	if m.chunks > 0 {
		m.len = len(p.chunks[m.chunks-1])
	}
	return m
}

// done takes container n, started at mark m with its children on the stack from
// mark, and either keeps its children or, when pruning and nothing in it can matter
// (no keyword that counts, see jnode.kw, and no escape), drops them and the nodes made
// since m, which are all inside n.
func (p *jparser) done(n *jnode, m chunkMark, mark int) {
	if p.hits == nil || !p.prune || n.esc || len(p.stack) == mark || n.kw || n.nameKw {
		p.children(n, mark)
		return
	}
	n.pruned = true
	p.stack = p.stack[:mark]
	if len(p.chunks) > m.chunks {
		if last := p.chunks[len(p.chunks)-1]; cap(last) > cap(p.spare) {
			p.spare = last[:0]
		}
		p.chunks = p.chunks[:m.chunks]
	}
	if m.chunks > 0 {
		p.chunks[m.chunks-1] = p.chunks[m.chunks-1][:m.len]
	}
}

// children moves the children of n, on the stack from mark, into the last chunk.
func (p *jparser) children(n *jnode, mark int) {
	k := len(p.stack) - mark
	if k == 0 {
		return
	}
	last := len(p.chunks) - 1
	if last < 0 || cap(p.chunks[last])-len(p.chunks[last]) < k {
		size := chunkNodes
		if len(p.chunks) == 0 {
			size = min(size, len(p.data)/8+8)
		}
		c := p.spare
		if cap(c) < k && size == chunkNodes && k <= chunkNodes {
			if v, ok := chunkPool.Get().(*[]jnode); ok {
				c = (*v)[:0]
			}
		}
		if cap(c) < k {
			c = make([]jnode, 0, max(size, k))
		}
		p.spare = nil
		p.chunks = append(p.chunks, c)
		last++
	}
	n.kidChunk, n.kidOff, n.kidN = int32(last), int32(len(p.chunks[last])), int32(k)
	p.chunks[last] = append(p.chunks[last], p.stack[mark:]...)
	p.stack = p.stack[:mark]
}

// keywordsIn is hits.endIn for the string at start to end, which starts at or after
// the end of the last string asked about: most strings end before the next hit,
// which one comparison tells.
func (p *jparser) keywordsIn(start, end int) (kw, name bool) {
	h := p.hits
	if p.base+end <= p.nextHit {
		return false, false
	}
	kw, name = h.endIn(p.base+start, p.base+end)
	// endIn left its searches at the first hits at or after end.
	p.nextHit = math.MaxInt
	if h.anyAt < len(h.any) {
		p.nextHit = h.any[h.anyAt]
	}
	if h.namesAt < len(h.names) {
		p.nextHit = min(p.nextHit, h.names[h.namesAt])
	}
	return kw, name
}

// nameMatters reports whether the member name data[a:b], written without escapes,
// can make its value masked; see nameMatters in jsonwalk.go.
func (p *jparser) nameMatters(a, b int) bool {
	m, ok := p.names[string(p.data[a:b])]
	if !ok {
		if p.names == nil {
			p.names = map[string]bool{}
		}
		m = nameMatters(string(p.data[a:b]))
		p.names[string(p.data[a:b])] = m
	}
	return m
}

// expand parses the members of a pruned container again, keeping them all.
func (p *jparser) expand(n *jnode) {
	if !n.pruned {
		return
	}
	n.pruned = false
	pos, depth, prune, hits := p.pos, p.depth, p.prune, p.hits
	p.pos, p.depth, p.prune, p.hits = n.start, 0, false, nil
	m, err := p.value()
	p.pos, p.depth, p.prune, p.hits = pos, depth, prune, hits
	if err == nil {
		n.kidChunk, n.kidOff, n.kidN = m.kidChunk, m.kidOff, m.kidN
	}
}

// parseJSON parses one complete JSON document.
func parseJSON(data []byte) (*jnode, *jparser, error) {
	return parse(&jparser{data: data})
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
	if p.alias {
		p.src = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		p.src = string(data)
	}
	p.root = n
	p.stack = nil
	return &p.root, p, nil
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

// value parses the value at p.pos and returns its node.
func (p *jparser) value() (jnode, error) {
	i := len(p.stack)
	err := p.push()
	var n jnode
	if err == nil {
		n = p.stack[i]
	}
	p.stack = p.stack[:i]
	return n, err
}

// push parses the value at p.pos onto the stack: its node is made in place there,
// which spares copying it, and its children go to the chunks when it closes.
func (p *jparser) push() error {
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of input")
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
	return p.fail("unexpected character")
}

func (p *jparser) literal(word string) error {
	end := p.pos + len(word)
	if end > len(p.data) || string(p.data[p.pos:end]) != word {
		return p.fail("invalid literal")
	}
	p.stack = append(p.stack, jnode{kind: jScalar, start: p.pos, end: end})
	p.pos = end
	return nil
}

func (p *jparser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

func (p *jparser) number() error {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if p.digits() == 0 {
		return p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return p.fail("invalid number fraction")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return p.fail("invalid number exponent")
		}
	}
	p.stack = append(p.stack, jnode{kind: jScalar, start: start, end: p.pos})
	return nil
}

// rawString scans a string literal. It returns 0 when the string was written without
// escapes, its text being the bytes between its quotes, else 1 + the index of its
// decoded value in p.decoded.
func (p *jparser) rawString() (int32, error) {
	start := p.pos
	// Most strings hold nothing but plain bytes up to their closing quote.
	if i := plainRun(p.data, start+1); i < len(p.data) && p.data[i] == '"' {
		p.pos = i + 1
		return 0, nil
	}
	p.pos++ // opening quote
	escaped := false
	for {
		if p.pos >= len(p.data) {
			return 0, p.fail("unterminated string")
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
				return 0, nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return 0, &jsonSyntaxError{Offset: start, Msg: "invalid string: " + err.Error()}
			}
			p.decoded = append(p.decoded, s)
			return int32(len(p.decoded)), nil
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(p.data) {
				return 0, p.fail("unterminated escape")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					return 0, p.fail("invalid unicode escape")
				}
				p.pos += 6
			default:
				return 0, p.fail("invalid escape")
			}
		case c < 0x20:
			return 0, p.fail("control character in string")
		default:
			p.pos++
		}
	}
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

func (p *jparser) string() error {
	start := p.pos
	dec, err := p.rawString()
	if err != nil {
		return err
	}
	n := jnode{kind: jString, start: start, end: p.pos, strDec: dec, esc: dec != 0}
	if p.hits != nil {
		n.kw, n.nameKw = p.keywordsIn(n.start, n.end)
	}
	p.stack = append(p.stack, n)
	return nil
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nested too deeply")
	}
	return nil
}

func (p *jparser) object() error {
	if err := p.enter(); err != nil {
		return err
	}
	at := len(p.stack)
	p.stack = append(p.stack, jnode{kind: jObject, start: p.pos})
	cm := p.mark()
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		n := &p.stack[at]
		n.end = p.pos
		p.done(n, cm, at+1)
		return nil
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.fail("expected a member name")
		}
		keyStart := p.pos
		keyDec, err := p.rawString()
		if err != nil {
			return err
		}
		keyEnd := p.pos
		keyKw := false
		if p.hits != nil {
			// Before the value's: the hits are asked for in the order values end.
			keyKw, _ = p.keywordsIn(keyStart, keyEnd)
		}
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.fail("expected ':' after a member name")
		}
		p.pos++
		p.ws()
		vi := len(p.stack)
		if err := p.push(); err != nil {
			return err
		}
		v, n := &p.stack[vi], &p.stack[at]
		v.keyAt, v.keyLen, v.keyDec = keyStart+1, int32(keyEnd-keyStart-2), keyDec
		v.esc = v.esc || keyDec != 0
		n.esc = n.esc || v.esc
		if p.hits != nil {
			named := keyKw && (keyDec != 0 || p.nameMatters(keyStart+1, keyEnd-1))
			v.keyInert = keyDec == 0 && !named
			n.kw = n.kw || v.kw || named
			n.nameKw = n.nameKw || v.nameKw
		}
		p.ws()
		if p.pos >= len(p.data) {
			return p.fail("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.ws()
		case '}':
			p.pos++
			p.depth--
			n.end = p.pos
			p.done(n, cm, at+1)
			return nil
		default:
			return p.fail("expected ',' or '}' in object")
		}
	}
}

func (p *jparser) array() error {
	if err := p.enter(); err != nil {
		return err
	}
	at := len(p.stack)
	p.stack = append(p.stack, jnode{kind: jArray, start: p.pos})
	cm := p.mark()
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		n := &p.stack[at]
		n.end = p.pos
		p.done(n, cm, at+1)
		return nil
	}
	for {
		vi := len(p.stack)
		if err := p.push(); err != nil {
			return err
		}
		v, n := &p.stack[vi], &p.stack[at]
		n.esc = n.esc || v.esc
		n.kw, n.nameKw = n.kw || v.kw, n.nameKw || v.nameKw
		p.ws()
		if p.pos >= len(p.data) {
			return p.fail("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.ws()
		case ']':
			p.pos++
			p.depth--
			n.end = p.pos
			p.done(n, cm, at+1)
			return nil
		default:
			return p.fail("expected ',' or ']' in array")
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
