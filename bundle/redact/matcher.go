package redact

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
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
	name     []bool    // a name keyword ends at each state
	firstOut uint32    // rows from here on are states with output
	// quoteSafe is set when no keyword holds a '"' followed by more of the keyword
	// without one: then no keyword starts before a JSON string without escapes and
	// ends inside it, and the hits inside the string are those of the string alone.
	quoteSafe bool
	// longest is the length of the longest keyword.
	longest int
	next    [][256]uint16
	hasOut  []bool // next and hasOut are used while building only
}

// keywordHits says where keywords are in one text. It is sparse: a text holds the
// keywords of few of the detectors.
type keywordHits struct {
	// any are the offsets at which a detector's keyword ends, ascending, and states[i]
	// the automaton's state at any[i], which says whose keywords end there.
	any    []int
	states []uint32
	// names are the offsets at which a name keyword ends: a word that makes an
	// environment variable's name a credential's and is no detector's keyword.
	names []int
	// dets are the detectors whose keywords were found, ascending, and pos[i] the
	// offsets at which keywords of dets[i] end, ascending; see byDetector.
	dets    []int32
	pos     [][]int
	grouped bool
	// anyAt and namesAt are where the last searches of any and names ended.
	anyAt, namesAt int
}

// none reports that no keyword was found.
func (h *keywordHits) none() bool { return len(h.any) == 0 }

// endIn reports whether a detector keyword, and whether a name keyword, ends at an
// offset in (start, end): inside the value that spans start to end. A parser asks
// about values in the order they end, so each search goes on from the last one.
func (h *keywordHits) endIn(start, end int) (kw, name bool) {
	i := searchFrom(h.any, end, &h.anyAt)
	j := searchFrom(h.names, end, &h.namesAt)
	return i > 0 && h.any[i-1] > start, j > 0 && h.names[j-1] > start
}

// searchFrom returns the index of the first offset in list at or after x, like
// sort.SearchInts, starting from *at and leaving the answer there: a search for an x
// past the last one gallops forward from it, so a run of ascending searches costs
// about one step each.
func searchFrom(list []int, x int, at *int) int {
	i := min(*at, len(list))
	switch {
	case i > 0 && list[i-1] >= x:
		i = sort.SearchInts(list[:i], x)
	case i < len(list) && list[i] < x:
		// A few steps, then strides that double.
		for n := 0; i < len(list) && list[i] < x; n++ {
			if n == 4 {
				lo, step := i, 1
				for i < len(list) && list[i] < x {
					lo = i + 1
					i += step
					step *= 2
				}
				hi := min(i, len(list))
				i = lo + sort.SearchInts(list[lo:hi], x)
				break
			}
			i++
		}
	}
	*at = i
	return i
}

// sub returns the hits of data[start:end] with offsets relative to start. They are
// the hits a scan of data[start:end] alone finds when no keyword can start before
// start and end inside: the caller knows data[start-1] is a byte the keywords do not
// hold there (see matcher.quoteSafe).
//
// A walker asks for the strings of a document in order, so each search goes on from
// the last one (see searchFrom), and the few hits of one string are stepped over.
func (h *keywordHits) sub(start, end int) keywordHits {
	var s keywordHits
	i := searchFrom(h.any, start, &h.anyAt)
	j := i
	for j < len(h.any) && h.any[j] < end {
		j++
	}
	if i < j {
		s.any = make([]int, j-i)
		for k, o := range h.any[i:j] {
			s.any[k] = o - start
		}
		s.states = h.states[i:j:j]
	}
	i = searchFrom(h.names, start, &h.namesAt)
	j = i
	for j < len(h.names) && h.names[j] < end {
		j++
	}
	if i < j {
		s.names = make([]int, j-i)
		for k, o := range h.names[i:j] {
			s.names[k] = o - start
		}
	}
	return s
}

// byDetector fills dets and pos from any and states.
func (h *keywordHits) byDetector(m *matcher) {
	if h.grouped {
		return
	}
	h.grouped = true
	n := 0
	for _, r := range h.states {
		n += len(m.out[r])
	}
	if n == 0 {
		return
	}
	if n == 1 {
		// One keyword of one detector, as in most strings that hold one.
		for i, r := range h.states {
			if len(m.out[r]) == 1 {
				h.dets, h.pos = []int32{m.out[r][0]}, [][]int{h.any[i : i+1 : i+1]}
				return
			}
		}
	}
	pairs := make([]hitPair, 0, n)
	for i, r := range h.states {
		for _, d := range m.out[r] {
			pairs = append(pairs, hitPair{d, h.any[i]})
		}
	}
	if len(pairs) <= 32 {
		// Insertion sort: stable, and the usual handful of hits needs no more.
		for i := 1; i < len(pairs); i++ {
			for j := i; j > 0 && pairs[j-1].det > pairs[j].det; j-- {
				pairs[j-1], pairs[j] = pairs[j], pairs[j-1]
			}
		}
	} else {
		slices.SortStableFunc(pairs, func(a, b hitPair) int { return int(a.det) - int(b.det) })
	}
	all := make([]int, len(pairs))
	distinct := 1
	for i := 1; i < len(pairs); i++ {
		if pairs[i].det != pairs[i-1].det {
			distinct++
		}
	}
	h.dets, h.pos = make([]int32, 0, distinct), make([][]int, 0, distinct)
	for i, p := range pairs {
		all[i] = p.pos
		if i == 0 || p.det != pairs[i-1].det {
			h.dets = append(h.dets, p.det)
			h.pos = append(h.pos, all[i:i])
		}
		h.pos[len(h.pos)-1] = h.pos[len(h.pos)-1][:len(h.pos[len(h.pos)-1])+1]
	}
}

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

// newMatcher builds the automaton for the keywords of detectors and the name keywords
// names; keywords must be lower-case.
func newMatcher(detectors []detector, names [][]byte) *matcher {
	type node struct {
		child map[byte]int
		fail  int
		out   []int32
	}
	nodes := []node{{child: map[byte]int{}}}
	// Name keywords are entered as one more detector, nameDet, which renumber moves
	// from out to name.
	nameDet := len(detectors)
	sets := make([][][]byte, 0, len(detectors)+1)
	for _, det := range detectors {
		sets = append(sets, det.keywords)
	}
	sets = append(sets, names)
	quoteSafe := true
	longest := 0
	for d, ks := range sets {
		for _, k := range ks {
			longest = max(longest, len(k))
			for j, c := range k {
				if c == '"' && j < len(k)-1 && bytes.IndexByte(k[j+1:], '"') < 0 {
					quoteSafe = false
				}
			}
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
	m := &matcher{next: make([][256]uint16, len(nodes)), out: make([][]int32, len(nodes)), hasOut: make([]bool, len(nodes)), quoteSafe: quoteSafe, longest: longest}
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
	m.renumber(int32(nameDet))
	return m
}

// renumber gives the states with output the highest numbers, so the scan loop finds
// them with one comparison instead of a table load.
func (m *matcher) renumber(nameDet int32) {
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
	name := make([]bool, n)
	for i, s := range order {
		for c := 0; c < 256; c++ {
			table[i*m.nclass+int(m.class[c])] = uint32(int(newID[m.next[s][c]]) * m.nclass)
		}
		for _, d := range m.out[s] {
			if d == nameDet {
				name[i] = true
			} else {
				out[i] = append(out[i], d)
			}
		}
	}
	m.firstOut = uint32(firstOut * m.nclass)
	// The start state must stay 0; it never has output, so it sorts first.
	m.table, m.out, m.name, m.next, m.hasOut = table, out, name, nil, nil
}

type hitPair struct {
	det int32
	pos int
}

// scan finds the keywords in data. It allocates only when a keyword is present.
func (m *matcher) scan(data []byte) keywordHits {
	if len(data) < minSplitScan {
		var h keywordHits
		m.scanRange(data, 0, 0, len(data), &h)
		return h
	}
	return m.scan4(data)
}

// minSplitScan is the size from which scan4 runs.
const minSplitScan = 16 << 10

// scanRange records the hits at offsets from..to-1, running the automaton from the
// start state at offset start.
func (m *matcher) scanRange(data []byte, start, from, to int, h *keywordHits) {
	nclass := uint32(m.nclass)
	s := uint32(0)
	for i := start; ; i++ {
		if i, s = m.run(data[:to], i, s); i >= to {
			return
		}
		if i >= from {
			m.record(h, i, s/nclass)
		}
	}
}

func (m *matcher) record(h *keywordHits, i int, st uint32) {
	if len(m.out[st]) > 0 {
		h.any = append(h.any, i)
		h.states = append(h.states, st)
	}
	if m.name[st] {
		h.names = append(h.names, i)
	}
}

// scan4 is scan for large data. A step of the automaton waits for the one before it,
// so one pass over the data is bound by the latency of a table load per byte; scan4
// runs four automata on four quarters of the data in the same loop, which the
// processor overlaps. Each automaton but the first starts longest-1 bytes before its
// quarter: the state an automaton is in depends on the last longest bytes only, so
// from its quarter on it finds what one automaton over all the data would.
func (m *matcher) scan4(data []byte) keywordHits {
	const ways = 4
	q := len(data) / ways
	warm := m.longest - 1
	var from, start, end [ways]int
	for k := range ways {
		from[k] = k * q
		start[k] = max(0, from[k]-warm)
		end[k] = from[k] + q
	}
	end[ways-1] = len(data)
	n := end[0] - start[0] // the shortest stretch: the others start earlier
	for k := range ways {
		n = min(n, end[k]-start[k])
	}
	d0, d1, d2, d3 := data[start[0]:start[0]+n], data[start[1]:start[1]+n], data[start[2]:start[2]+n], data[start[3]:start[3]+n]
	var hs [ways]keywordHits
	table, class, first, nclass := m.table, &m.class, m.firstOut, uint32(m.nclass)
	d1, d2, d3 = d1[:len(d0)], d2[:len(d0)], d3[:len(d0)] // one length, one bounds check
	var s0, s1, s2, s3 uint32
	for j := range d0 {
		s0 = table[s0+uint32(class[d0[j]])]
		s1 = table[s1+uint32(class[d1[j]])]
		s2 = table[s2+uint32(class[d2[j]])]
		s3 = table[s3+uint32(class[d3[j]])]
		if s0 < first && s1 < first && s2 < first && s3 < first {
			continue
		}
		for k, s := range [ways]uint32{s0, s1, s2, s3} {
			if i := start[k] + j; s >= first && i >= from[k] {
				m.record(&hs[k], i, s/nclass)
			}
		}
	}
	// Each automaton finishes its stretch alone.
	for k, s := range [ways]uint32{s0, s1, s2, s3} {
		for i := start[k] + n; ; i++ {
			if i, s = m.run(data[:end[k]], i, s); i >= end[k] {
				break
			}
			if i >= from[k] {
				m.record(&hs[k], i, s/nclass)
			}
		}
	}
	var h keywordHits
	var nany, nnames int
	for _, x := range hs {
		nany, nnames = nany+len(x.any), nnames+len(x.names)
	}
	if nany > 0 {
		h.any, h.states = make([]int, 0, nany), make([]uint32, 0, nany)
	}
	if nnames > 0 {
		h.names = make([]int, 0, nnames)
	}
	for _, x := range hs {
		h.any = append(h.any, x.any...)
		h.states = append(h.states, x.states...)
		h.names = append(h.names, x.names...)
	}
	return h
}

// run moves the automaton from row s over data[i:] until a state with output, and
// returns where and the row; i is len(data) when none comes. It is the loop every
// byte of a bundle goes through, kept small so that it stays in registers.
func (m *matcher) run(data []byte, i int, s uint32) (int, uint32) {
	table, class, first := m.table, &m.class, m.firstOut
	for ; i < len(data); i++ {
		s = table[s+uint32(class[data[i]])]
		if s >= first {
			return i, s
		}
	}
	return i, s
}

func columnKey(col []uint16) []byte {
	b := make([]byte, 2*len(col))
	for i, v := range col {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}
