package redact

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// matcher finds every detector keyword in one pass over the data, case-insensitively
// (an Aho-Corasick automaton with upper-case letters folded onto lower-case), and
// remembers which lines hold them. Detectors then run only on those lines, which keeps
// redaction of logs and journals close to the speed of reading them.
type matcher struct {
	class    [256]uint8
	nclass   int
	table    []uint32  // next state's row: table[row+class[byte]]; a row is state*nclass
	out      [][]int32 // detectors whose keyword ends at each state
	firstOut uint32    // rows from here on are states with output
	next     [][256]uint16
	hasOut   []bool // next and hasOut are used while building only
}

// keywordHits says, per detector, where its keywords are. It is sparse: a string
// holds the keywords of few of the detectors.
type keywordHits struct {
	// dets are the detectors whose keywords were found, ascending, and pos[i] the
	// offsets at which keywords of dets[i] end, ascending.
	dets []int32
	pos  [][]int
	// any are the offsets at which any keyword ends.
	any []int
}

// none reports that no keyword was found.
func (h *keywordHits) none() bool { return len(h.any) == 0 }

// lineStarts returns the starts of the distinct lines holding the offsets.
func lineStarts(data []byte, offsets []int) []int {
	var starts []int
	lineEnd := -1
	for _, o := range offsets {
		if o < lineEnd {
			continue
		}
		starts = append(starts, bytes.LastIndexByte(data[:o], '\n')+1)
		lineEnd = len(data)
		if e := bytes.IndexByte(data[o:], '\n'); e >= 0 {
			lineEnd = o + e
		}
	}
	return starts
}

// newMatcher builds the automaton for the keywords of detectors; keywords must be
// lower-case.
func newMatcher(detectors []detector) *matcher {
	type node struct {
		child map[byte]int
		fail  int
		out   []int32
	}
	nodes := []node{{child: map[byte]int{}}}
	for d, det := range detectors {
		for _, k := range det.keywords {
			s := 0
			for _, c := range k {
				nx, ok := nodes[s].child[c]
				if !ok {
					nodes = append(nodes, node{child: map[byte]int{}})
					nx = len(nodes) - 1
					nodes[s].child[c] = nx
				}
				s = nx
			}
			if n := len(nodes[s].out); n == 0 || nodes[s].out[n-1] != int32(d) {
				nodes[s].out = append(nodes[s].out, int32(d))
			}
		}
	}
	m := &matcher{next: make([][256]uint16, len(nodes)), out: make([][]int32, len(nodes)), hasOut: make([]bool, len(nodes))}
	// Breadth-first, so a state's fail state is complete before the state itself. A
	// state moves as its fail state does, except on its own children.
	queue := []int{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s != 0 {
			m.out[s] = append(append([]int32(nil), nodes[s].out...), m.out[nodes[s].fail]...)
			m.next[s] = m.next[nodes[s].fail]
		}
		m.hasOut[s] = len(m.out[s]) > 0
		for c, nx := range nodes[s].child {
			if s != 0 {
				nodes[nx].fail = int(m.next[nodes[s].fail][c])
			}
		}
		for c, nx := range nodes[s].child {
			m.next[s][c] = uint16(nx)
			queue = append(queue, nx)
		}
	}
	for s := range m.next {
		for c := 'A'; c <= 'Z'; c++ {
			m.next[s][c] = m.next[s][c+'a'-'A']
		}
	}
	m.renumber()
	return m
}

// renumber gives the states with output the highest numbers, so the scan loop finds
// them with one comparison instead of a table load.
func (m *matcher) renumber() {
	n := len(m.next)
	order := make([]int, 0, n)
	for s := 0; s < n; s++ {
		if !m.hasOut[s] {
			order = append(order, s)
		}
	}
	firstOut := len(order)
	for s := 0; s < n; s++ {
		if m.hasOut[s] {
			order = append(order, s)
		}
	}
	newID := make([]uint16, n)
	for i, s := range order {
		newID[s] = uint16(i)
	}
	// Bytes that behave alike in every state share a class; the table then has a
	// column per class instead of per byte, and fits in the L1 cache.
	classOf := map[string]uint8{}
	col := make([]uint16, n)
	for c := 0; c < 256; c++ {
		for s := 0; s < n; s++ {
			col[s] = m.next[s][c]
		}
		key := string(columnKey(col))
		id, ok := classOf[key]
		if !ok {
			id = uint8(len(classOf))
			classOf[key] = id
		}
		m.class[c] = id
	}
	m.nclass = len(classOf)
	// A state is kept as the offset of its row, which saves the scan loop a multiply.
	table := make([]uint32, n*m.nclass)
	out := make([][]int32, n)
	for i, s := range order {
		for c := 0; c < 256; c++ {
			table[i*m.nclass+int(m.class[c])] = uint32(int(newID[m.next[s][c]]) * m.nclass)
		}
		out[i] = m.out[s]
	}
	m.firstOut = uint32(firstOut * m.nclass)
	// The start state must stay 0; it never has output, so it sorts first.
	m.table, m.out, m.next, m.hasOut = table, out, nil, nil
}

type hitPair struct {
	det int32
	pos int
}

// scan finds the keywords in data. It allocates only when a keyword is present.
func (m *matcher) scan(data []byte, _ int) keywordHits {
	var h keywordHits
	var pairs []hitPair
	s, first := uint32(0), m.firstOut
	table, class := m.table, &m.class
	for i, c := range data {
		s = table[s+uint32(class[c])]
		if s < first {
			continue
		}
		for _, d := range m.out[int(s)/m.nclass] {
			pairs = append(pairs, hitPair{d, i})
		}
		h.any = append(h.any, i)
	}
	if len(pairs) == 0 {
		return h
	}
	slices.SortStableFunc(pairs, func(a, b hitPair) int { return int(a.det) - int(b.det) })
	all := make([]int, len(pairs))
	for i, p := range pairs {
		all[i] = p.pos
		if i == 0 || p.det != pairs[i-1].det {
			h.dets = append(h.dets, p.det)
			h.pos = append(h.pos, all[i:i])
		}
		h.pos[len(h.pos)-1] = h.pos[len(h.pos)-1][:len(h.pos[len(h.pos)-1])+1]
	}
	return h
}

func columnKey(col []uint16) []byte {
	b := make([]byte, 2*len(col))
	for i, v := range col {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}
