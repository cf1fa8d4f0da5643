package analyze

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// criContainerRecord is a CRI container as the graph holds it once loaded: containersOf
// makes the CRIContainer again when a pod's containers are asked for, which only the
// pods whose runs or timelines are read are. Held as loaded, each container of 80k
// pods took about 450 bytes (the record, the location of its inspect output on its
// own, the JSON pointer into the ps output), held to the end of an analysis, where its
// memory peaks; a record is about 150. A container is kept this way only when the
// record gives it back equal; otherwise whole holds it as loaded.
type criContainerRecord struct {
	whole                          *CRIContainer
	id, sandboxID, podUID, message string
	// node, name, state, image and reason are places in the graph's criWords.
	node, name, state, image, reason uint16
	attempt, exitCode                int32
	// created, started and finished are Unix nanoseconds, criNoTime for the zero time.
	created, started, finished int64
	// ps is the location of the crictl ps output that lists the container, item its
	// place in its containers.
	ps   *Location
	item int32
	// inspectPath is the crictl inspect output of the container, "" when none was
	// read; its location is that file's status in inspectBundle.
	inspectPath   string
	inspectBundle uint16
}

// criNoTime stands for the zero time in a criContainerRecord.
const criNoTime = math.MinInt64

// criWordsMax is how many words the table of a graph's CRI records may hold.
const criWordsMax = math.MaxUint16

// criCompactor makes criContainerRecords, sharing the words and the ps locations.
type criCompactor struct {
	g     *Graph
	words map[string]uint16
	ps    map[Location]*Location
}

// compactCRIWhileLoading makes the load hold CRI containers as records; a test turns
// it off to compare with the containers held as loaded.
var compactCRIWhileLoading = true

// compactContainers holds the graph's CRI containers and sandboxes as records, in the
// order of contsByUID and sandboxesByUID, and lets the loaded ones go.
func (g *Graph) compactContainers() {
	if !compactCRIWhileLoading {
		return
	}
	c := &criCompactor{g: g, words: map[string]uint16{}, ps: map[Location]*Location{}}
	g.criWords = nil
	records := make([]criContainerRecord, len(g.contsByUID))
	for i, cc := range g.contsByUID {
		records[i] = c.record(cc)
	}
	g.contRecords, g.contsByUID = records, nil
	g.criContainerCount, g.containers = len(g.containers), nil
	c.compactSandboxes()
}

func (c *criCompactor) word(s string) (uint16, bool) {
	if i, ok := c.words[s]; ok {
		return i, true
	}
	if len(c.g.criWords) >= criWordsMax {
		return 0, false
	}
	i := uint16(len(c.g.criWords))
	c.g.criWords = append(c.g.criWords, s)
	c.words[s] = i
	return i, true
}

// criNanos is t as Unix nanoseconds, or criNoTime; false when that does not give t
// back equal.
func criNanos(t time.Time) (int64, bool) {
	if t.IsZero() {
		return criNoTime, true
	}
	n := t.UnixNano()
	return n, n != criNoTime && criTimeOf(n) == t
}

func criTimeOf(n int64) time.Time {
	if n == criNoTime {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// containerPointer is the JSON pointer of the container at i in a crictl ps output:
// one string for each of the first places, as the runs of every pod make their
// containers again for each rule that reads them.
func containerPointer(i int32) string {
	if t := containerPointers(); int(i) < len(t) {
		return t[i]
	}
	return "/containers/" + strconv.Itoa(int(i))
}

var containerPointers = sync.OnceValue(func() []string {
	out := make([]string, 1<<10)
	for i := range out {
		out[i] = "/containers/" + strconv.Itoa(i)
	}
	return out
})

func (c *criCompactor) record(cc *CRIContainer) criContainerRecord {
	whole := criContainerRecord{whole: cc, podUID: cc.PodUID}
	r := criContainerRecord{id: cc.ID, sandboxID: cc.SandboxID, podUID: cc.PodUID, message: cc.Message, item: -1}
	ok := true
	for _, w := range []struct {
		s  string
		to *uint16
	}{{cc.Node, &r.node}, {cc.Name, &r.name}, {cc.State, &r.state}, {cc.Image, &r.image}, {cc.Reason, &r.reason}} {
		var in bool
		if *w.to, in = c.word(w.s); !in {
			ok = false
		}
	}
	r.attempt, r.exitCode = int32(cc.Attempt), int32(cc.ExitCode)
	var t1, t2, t3 bool
	r.created, t1 = criNanos(cc.CreatedAt)
	r.started, t2 = criNanos(cc.StartedAt)
	r.finished, t3 = criNanos(cc.FinishedAt)
	ok = ok && t1 && t2 && t3
	if item, found := strings.CutPrefix(cc.Loc.Pointer, "/containers/"); !found {
		ok = false
	} else if n, err := strconv.Atoi(item); err == nil && n >= 0 && n <= math.MaxInt32 {
		r.ps, r.item = c.base(cc.Loc), int32(n)
	}
	if cc.InspectLoc != nil {
		r.inspectPath = cc.InspectLoc.Path
		var in bool
		if r.inspectBundle, in = c.word(cc.InspectLoc.Bundle); !in {
			ok = false
		}
	}
	if !ok || r.ps == nil {
		return whole
	}
	var back CRIContainer
	var inspect Location
	c.g.containerOf(&r, &back, &inspect)
	if !equalContainers(&back, cc) {
		return whole
	}
	return r
}

// equalContainers reports whether a and b say the same, their inspect locations
// compared by what they hold.
func equalContainers(a, b *CRIContainer) bool {
	ai, bi := a.InspectLoc, b.InspectLoc
	if (ai == nil) != (bi == nil) || (ai != nil && *ai != *bi) {
		return false
	}
	x, y := *a, *b
	x.InspectLoc, y.InspectLoc = nil, nil
	return x == y
}

// containerOf makes the container r holds into out, and the location of its inspect
// output, when it has one, into inspect.
func (g *Graph) containerOf(r *criContainerRecord, out *CRIContainer, inspect *Location) {
	w := g.criWords
	*out = CRIContainer{Node: w[r.node], ID: r.id, SandboxID: r.sandboxID, Name: w[r.name], PodUID: r.podUID,
		Attempt: int(r.attempt), State: w[r.state], Image: w[r.image],
		CreatedAt: criTimeOf(r.created), StartedAt: criTimeOf(r.started), FinishedAt: criTimeOf(r.finished),
		ExitCode: int(r.exitCode), Reason: w[r.reason], Message: r.message, Loc: r.ps.withPointer(containerPointer(r.item))}
	if r.inspectPath != "" {
		*inspect = Location{Bundle: w[r.inspectBundle], Path: r.inspectPath, Pointer: "/status"}
		out.InspectLoc = inspect
	}
}

// containerRecordsOf is the records of contRecords of the pod of UID uid.
func (g *Graph) containerRecordsOf(uid string) []criContainerRecord {
	return spanOf(g.contRecords, func(r *criContainerRecord) string { return r.podUID }, uid)
}

// criSandboxRecord is a CRI sandbox as the graph holds it once loaded, as
// criContainerRecord is a container: about 110 bytes instead of about 230 for each
// sandbox of 80k pods. whole holds a sandbox the record cannot give back equal.
type criSandboxRecord struct {
	whole                *CRISandbox
	id, name, podUID, ip string
	// node, namespace and state are places in the graph's criWords.
	node, namespace, state uint16
	attempt                int32
	created                int64
	// pods is the location of the crictl pods output that lists the sandbox, item
	// its place in its items.
	pods *Location
	item int32
}

// compactSandboxes holds the graph's CRI sandboxes as records, in the order of
// sandboxesByUID, and lets the loaded ones go.
func (c *criCompactor) compactSandboxes() {
	g := c.g
	records := make([]criSandboxRecord, len(g.sandboxesByUID))
	for i, sb := range g.sandboxesByUID {
		records[i] = c.sandboxRecord(sb)
	}
	g.sbRecords, g.sandboxesByUID, g.sandboxes = records, nil, nil
}

func (c *criCompactor) sandboxRecord(sb *CRISandbox) criSandboxRecord {
	whole := criSandboxRecord{whole: sb, podUID: sb.PodUID}
	r := criSandboxRecord{id: sb.ID, name: sb.Name, podUID: sb.PodUID, ip: sb.IP, attempt: int32(sb.Attempt)}
	ok := true
	for _, w := range []struct {
		s  string
		to *uint16
	}{{sb.Node, &r.node}, {sb.Namespace, &r.namespace}, {sb.State, &r.state}} {
		var in bool
		if *w.to, in = c.word(w.s); !in {
			ok = false
		}
	}
	var t bool
	r.created, t = criNanos(sb.CreatedAt)
	item, found := strings.CutPrefix(sb.Loc.Pointer, "/items/")
	n, err := strconv.Atoi(item)
	if !ok || !t || !found || err != nil || n < 0 || n > math.MaxInt32 {
		return whole
	}
	r.pods, r.item = c.base(sb.Loc), int32(n)
	var back CRISandbox
	c.g.sandboxOf(&r, &back)
	if back != *sb {
		return whole
	}
	return r
}

// base is l without its pointer, one value for each file.
func (c *criCompactor) base(l Location) *Location {
	l.Pointer = ""
	p := c.ps[l]
	if p == nil {
		p = &l
		c.ps[l] = p
	}
	return p
}

// sandboxOf makes the sandbox r holds into out.
func (g *Graph) sandboxOf(r *criSandboxRecord, out *CRISandbox) {
	w := g.criWords
	*out = CRISandbox{Node: w[r.node], ID: r.id, Name: r.name, Namespace: w[r.namespace], PodUID: r.podUID,
		Attempt: int(r.attempt), State: w[r.state], CreatedAt: criTimeOf(r.created), IP: r.ip,
		Loc: r.pods.withPointer(itemPointer("/items", int(r.item)))}
}

// sandboxRecordsOf is the records of sbRecords of the pod of UID uid.
func (g *Graph) sandboxRecordsOf(uid string) []criSandboxRecord {
	return spanOf(g.sbRecords, func(r *criSandboxRecord) string { return r.podUID }, uid)
}
