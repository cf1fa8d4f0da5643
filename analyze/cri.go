package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Labels the kubelet puts on CRI sandboxes and containers.
const (
	labelPodUID       = "io.kubernetes.pod.uid"
	labelPodName      = "io.kubernetes.pod.name"
	labelPodNamespace = "io.kubernetes.pod.namespace"
	labelContainer    = "io.kubernetes.container.name"
)

// CRISandbox is a pod sandbox as the container runtime reported it (crictl pods / inspectp).
type CRISandbox struct {
	Node      string
	ID        string
	Name      string
	Namespace string
	PodUID    string
	Attempt   int
	// State is SANDBOX_READY or SANDBOX_NOTREADY.
	State     string
	CreatedAt time.Time
	// IP comes from crictl inspectp, when collected.
	IP  string
	Loc Location
}

// CRIContainer is a container as the runtime reported it (crictl ps / inspect).
type CRIContainer struct {
	Node      string
	ID        string
	SandboxID string
	Name      string
	PodUID    string
	Attempt   int
	// State is CONTAINER_CREATED, CONTAINER_RUNNING, CONTAINER_EXITED or CONTAINER_UNKNOWN.
	State     string
	Image     string
	CreatedAt time.Time
	// The fields below come from crictl inspect, when collected.
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int
	Reason     string
	Message    string
	Loc        Location
	InspectLoc *Location
}

// The JSON shapes crictl prints with -o json: protobuf JSON with int64 as strings and
// enums as names (sigs.k8s.io/cri-tools cmd/crictl/util.go, protojson with
// EmitDefaultValues).
type criMeta struct {
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Namespace string `json:"namespace"`
	Attempt   int    `json:"attempt"`
}

type criSandboxJSON struct {
	ID        string            `json:"id"`
	Metadata  criMeta           `json:"metadata"`
	State     string            `json:"state"`
	CreatedAt json.RawMessage   `json:"createdAt"`
	Labels    map[string]string `json:"labels"`
	Network   *struct {
		IP string `json:"ip"`
	} `json:"network"`
}

type criContainerJSON struct {
	ID           string                 `json:"id"`
	PodSandboxID string                 `json:"podSandboxId"`
	Metadata     criMeta                `json:"metadata"`
	Image        struct{ Image string } `json:"image"`
	ImageRef     string                 `json:"imageRef"`
	State        string                 `json:"state"`
	CreatedAt    json.RawMessage        `json:"createdAt"`
	StartedAt    json.RawMessage        `json:"startedAt"`
	FinishedAt   json.RawMessage        `json:"finishedAt"`
	ExitCode     int                    `json:"exitCode"`
	Reason       string                 `json:"reason"`
	Message      string                 `json:"message"`
	Labels       map[string]string      `json:"labels"`
}

func (l *loader) loadCRIPods(lb *loadedBundle, src *sourceFile, data []byte) {
	var typed struct {
		Items []criSandboxJSON `json:"items"`
	}
	if fastUnmarshal(data, &typed) == nil {
		for i := range typed.Items {
			l.addSandbox(src, &typed.Items[i], itemPointer("/items", i))
		}
		return
	}
	var doc struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		l.warn(lb, src.path, jsonErrorLine(data, err), "", "not readable crictl pods JSON: %v", err)
		return
	}
	for i, raw := range doc.Items {
		ptr := itemPointer("/items", i)
		var s criSandboxJSON
		if err := json.Unmarshal(raw, &s); err != nil {
			l.warn(lb, src.path, 0, ptr, "unreadable sandbox: %v", err)
			continue
		}
		l.addSandbox(src, &s, ptr)
	}
}

func (l *loader) addSandbox(src *sourceFile, s *criSandboxJSON, ptr string) {
	k := criKey{src.node, s.ID}
	if s.ID != "" && l.cri.sandboxes[k] != nil {
		// The same sandbox listed again: the first record stands, with the address
		// inspectp gives it.
		return
	}
	uid, name := l.podStrings(firstNonEmpty(s.Labels[labelPodUID], s.Metadata.UID), s.Metadata.Name)
	sb := &CRISandbox{Node: src.node, ID: s.ID, Name: name, Namespace: l.intern.str(s.Metadata.Namespace),
		PodUID: uid, Attempt: s.Metadata.Attempt,
		State: l.intern.str(s.State), CreatedAt: criTime(s.CreatedAt), Loc: src.at.withPointer(ptr)}
	if s.ID != "" {
		l.cri.sandboxes[k] = sb
		if at, ok := l.cri.inspectedSandbox[k]; ok {
			// Its inspectp file was read first, as a node's files come in name order.
			sb.IP = l.cri.lateSandboxes[at].IP
			l.cri.lateSandboxes[at] = nil
			delete(l.cri.inspectedSandbox, k)
		}
	}
	l.g.sandboxes = append(l.g.sandboxes, sb)
}

func (l *loader) loadCRIContainers(lb *loadedBundle, src *sourceFile, data []byte) {
	var typed struct {
		Containers []criContainerJSON `json:"containers"`
	}
	if fastUnmarshal(data, &typed) == nil {
		for i := range typed.Containers {
			ptr := fmt.Sprintf("/containers/%d", i)
			l.addContainer(l.criContainer(src.node, &typed.Containers[i], src.at.withPointer(ptr)))
		}
		return
	}
	var doc struct {
		Containers []json.RawMessage `json:"containers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		l.warn(lb, src.path, jsonErrorLine(data, err), "", "not readable crictl ps JSON: %v", err)
		return
	}
	for i, raw := range doc.Containers {
		ptr := fmt.Sprintf("/containers/%d", i)
		var c criContainerJSON
		if err := json.Unmarshal(raw, &c); err != nil {
			l.warn(lb, src.path, 0, ptr, "unreadable container: %v", err)
			continue
		}
		l.addContainer(l.criContainer(src.node, &c, src.at.withPointer(ptr)))
	}
}

// criContainer is the container c with the words its runtime repeats (its name,
// state, image and reason) shared with the other containers', and its pod's UID and
// its sandbox's ID those of the pod and sandbox read before (podStrings).
func (l *loader) criContainer(node string, c *criContainerJSON, loc Location) *CRIContainer {
	in := &l.intern
	sandbox := c.PodSandboxID
	if sb := l.cri.sandboxes[criKey{node, sandbox}]; sb != nil {
		sandbox = sb.ID
	}
	uid, _ := l.podStrings(c.Labels[labelPodUID], "")
	return &CRIContainer{Node: node, ID: c.ID, SandboxID: sandbox,
		Name: in.str(firstNonEmpty(c.Labels[labelContainer], c.Metadata.Name)), PodUID: uid,
		Attempt: c.Metadata.Attempt, State: in.str(c.State), Image: in.str(firstNonEmpty(c.Image.Image, c.ImageRef)),
		CreatedAt: criTime(c.CreatedAt), StartedAt: criTime(c.StartedAt), FinishedAt: criTime(c.FinishedAt),
		ExitCode: c.ExitCode, Reason: in.str(c.Reason), Message: c.Message, Loc: loc}
}

// podStrings is uid, and name, as the strings of the loaded pod of that UID (and that
// name) when there is one: every sandbox and container the runtime lists repeats its
// pod's UID, and a sandbox its name, and decoded, each was a string of its own (with
// the sandbox IDs containers repeat, about 15 MB at 80k pods by their count and
// size, held to the end).
func (l *loader) podStrings(uid, name string) (string, string) {
	p, ok := l.g.byUID[uid].(*Pod)
	if !ok {
		return uid, name
	}
	if name == p.meta.Name {
		name = p.meta.Name
	}
	return string(p.meta.UID), name
}

// inspectDocs reads crictl inspect/inspectp output: one {"status":…,"info":…} object, or
// an array of them when several IDs were inspected at once.
func inspectDocs(data []byte) ([]json.RawMessage, bool, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	var docs []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err := json.Unmarshal(data, &docs)
		return docs, true, err
	}
	var one json.RawMessage
	err := json.Unmarshal(data, &one)
	return []json.RawMessage{one}, false, err
}

// inspectStatuses decodes the "status" of every document of crictl inspect or inspectp
// output (one object, or an array of them) into T and hands each with its location on;
// what does not decode becomes a warning naming the file and document.
func inspectStatuses[T any](l *loader, lb *loadedBundle, src *sourceFile, data []byte, command, noun string, add func(status *T, loc Location)) {
	l.g.present[CRI] = true
	// One decode of the whole file; the documents carry a large "info" the decoder
	// skips. Only a file that does not decode so is split into documents, so that each
	// bad one gets its own warning.
	type doc struct {
		Status T `json:"status"`
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var all []doc
		if fastUnmarshal(data, &all) == nil {
			for i := range all {
				add(&all[i].Status, src.at.withPointer(fmt.Sprintf("/%d/status", i)))
			}
			return
		}
	} else {
		var one doc
		if fastUnmarshal(data, &one) == nil {
			add(&one.Status, src.at.withPointer("/status"))
			return
		}
	}
	docs, array, err := inspectDocs(data)
	if err != nil {
		l.warn(lb, src.path, jsonErrorLine(data, err), "", "not readable crictl %s JSON: %v", command, err)
		return
	}
	for i, raw := range docs {
		base := ""
		if array {
			base = fmt.Sprintf("/%d", i)
		}
		var d doc
		if err := json.Unmarshal(raw, &d); err != nil {
			l.warn(lb, src.path, 0, base, "unreadable %s status: %v", noun, err)
			continue
		}
		add(&d.Status, src.at.withPointer(base+"/status"))
	}
}

func (l *loader) loadCRIInspect(lb *loadedBundle, src *sourceFile, data []byte) {
	inspectStatuses(l, lb, src, data, "inspect", "container", func(s *criContainerJSON, loc Location) {
		k := criKey{src.node, s.ID}
		if s.ID != "" {
			if c := l.cri.containers[k]; c != nil {
				l.mergeInspect(c, s, loc)
				return
			}
			if at, ok := l.cri.inspectedContainer[k]; ok {
				l.mergeInspect(l.cri.lateContainers[at], s, loc)
				return
			}
			l.cri.inspectedContainer[k] = len(l.cri.lateContainers)
		}
		c := l.criContainer(src.node, s, loc)
		c.InspectLoc = &loc
		l.cri.lateContainers = append(l.cri.lateContainers, c)
	})
}

func (l *loader) loadCRIInspectPod(lb *loadedBundle, src *sourceFile, data []byte) {
	inspectStatuses(l, lb, src, data, "inspectp", "sandbox", func(s *criSandboxJSON, loc Location) {
		ip := ""
		if s.Network != nil {
			ip = s.Network.IP
		}
		// Nothing cites the inspectp file of a sandbox crictl pods lists: only its
		// address is kept, in the pods record.
		k := criKey{src.node, s.ID}
		if s.ID != "" {
			if sb := l.cri.sandboxes[k]; sb != nil {
				sb.IP = ip
				return
			}
			if at, ok := l.cri.inspectedSandbox[k]; ok {
				l.cri.lateSandboxes[at].IP = ip
				return
			}
			l.cri.inspectedSandbox[k] = len(l.cri.lateSandboxes)
		}
		uid, name := l.podStrings(firstNonEmpty(s.Labels[labelPodUID], s.Metadata.UID), s.Metadata.Name)
		sb := &CRISandbox{Node: src.node, ID: s.ID, Name: name, Namespace: l.intern.str(s.Metadata.Namespace),
			PodUID: uid, Attempt: s.Metadata.Attempt,
			State: l.intern.str(s.State), CreatedAt: criTime(s.CreatedAt), IP: ip, Loc: loc}
		l.cri.lateSandboxes = append(l.cri.lateSandboxes, sb)
	})
}

// criKey names a container or sandbox across the CRI files of a node: its node and ID.
type criKey struct{ node, id string }

// criMerge merges what crictl inspect and inspectp say of a container or sandbox into
// the crictl ps or pods record of it as each is read: held apart until the end of the
// node files, the inspect records were a record, a location and the strings of each
// container and sandbox over again (about 30 MB at 80k pods, where the load peaks).
// The outcome is that of reading every ps and pods record first and every inspect
// record after, in load order: the first record of an ID is kept, the last inspect
// record's times, exit and address win, and a record no ps or pods file lists comes
// after those that are listed.
type criMerge struct {
	// containers and sandboxes are the ps and pods records by node and ID.
	containers map[criKey]*CRIContainer
	sandboxes  map[criKey]*CRISandbox
	// lateContainers and lateSandboxes are inspect records of IDs no ps or pods file
	// has listed yet (a node's inspect files come before its ps and pods files), in
	// load order; nil where one was merged into a record listed later.
	// inspectedContainer and inspectedSandbox are their places by node and ID.
	lateContainers     []*CRIContainer
	lateSandboxes      []*CRISandbox
	inspectedContainer map[criKey]int
	inspectedSandbox   map[criKey]int
	// uidFromInspect are the ps records whose pod UID an inspect record gave: a ps
	// record of the same container read later gives its own instead.
	uidFromInspect map[*CRIContainer]bool
}

func newCRIMerge() *criMerge {
	return &criMerge{containers: map[criKey]*CRIContainer{}, sandboxes: map[criKey]*CRISandbox{},
		inspectedContainer: map[criKey]int{}, inspectedSandbox: map[criKey]int{}, uidFromInspect: map[*CRIContainer]bool{}}
}

// addContainer adds a crictl ps record, or merges it into the record of the same
// container read before.
func (l *loader) addContainer(c *CRIContainer) {
	m := l.cri
	if c.ID == "" {
		l.g.containers = append(l.g.containers, c)
		return
	}
	k := criKey{c.Node, c.ID}
	if prev := m.containers[k]; prev != nil {
		if m.uidFromInspect[prev] && c.PodUID != "" {
			prev.PodUID = c.PodUID
			delete(m.uidFromInspect, prev)
		} else {
			prev.PodUID = firstNonEmpty(prev.PodUID, c.PodUID)
		}
		if prev.InspectLoc == nil {
			// Until inspect says, the last ps record's times and exit stand.
			prev.StartedAt, prev.FinishedAt = c.StartedAt, c.FinishedAt
			prev.ExitCode, prev.Reason, prev.Message = c.ExitCode, c.Reason, c.Message
		}
		return
	}
	m.containers[k] = c
	if at, ok := m.inspectedContainer[k]; ok {
		m.mergeInspected(c, m.lateContainers[at])
		m.lateContainers[at] = nil
		delete(m.inspectedContainer, k)
	}
	l.g.containers = append(l.g.containers, c)
}

// mergeInspect merges one crictl inspect status into c, as criContainer reads it.
func (l *loader) mergeInspect(c *CRIContainer, s *criContainerJSON, loc Location) {
	c.InspectLoc = &loc
	c.StartedAt, c.FinishedAt = criTime(s.StartedAt), criTime(s.FinishedAt)
	c.ExitCode, c.Reason, c.Message = s.ExitCode, l.intern.str(s.Reason), s.Message
	l.cri.fillUID(c, s.Labels[labelPodUID])
}

// mergeInspected merges the inspect record from into the ps record c.
func (m *criMerge) mergeInspected(c, from *CRIContainer) {
	c.InspectLoc = from.InspectLoc
	c.StartedAt, c.FinishedAt = from.StartedAt, from.FinishedAt
	c.ExitCode, c.Reason, c.Message = from.ExitCode, from.Reason, from.Message
	m.fillUID(c, from.PodUID)
}

// fillUID gives c the pod UID an inspect record names when no record before did.
func (m *criMerge) fillUID(c *CRIContainer, uid string) {
	if c.PodUID == "" && uid != "" {
		c.PodUID = uid
		if m.containers[criKey{c.Node, c.ID}] == c {
			m.uidFromInspect[c] = true
		}
	}
}

// finishCRI puts the inspect records of IDs no ps or pods file listed after the
// listed ones, and lets the tables go.
func (l *loader) finishCRI() {
	if l.cri == nil {
		return
	}
	for _, c := range l.cri.lateContainers {
		if c != nil {
			l.g.containers = append(l.g.containers, c)
		}
	}
	for _, sb := range l.cri.lateSandboxes {
		if sb != nil {
			l.g.sandboxes = append(l.g.sandboxes, sb)
		}
	}
	l.cri = nil
}

// criTime reads a CRI timestamp: Unix nanoseconds as a JSON string or number, or RFC 3339
// (crictl inspect prints the latter in some versions).
func criTime(raw json.RawMessage) time.Time {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || s == "0" || s == "null" {
		return time.Time{}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(0, n).UTC()
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.Year() > 1970 {
		return t.UTC()
	}
	return time.Time{}
}

// indexCRI links sandboxes and containers to pods by UID; the load merged the ps and
// inspect records of each (criMerge). The records of each pod are found by a search of
// a list sorted by pod UID, each pod's in load order: at 80k pods a map from UID to
// records for each kind held about 12 MB of tables and one-item lists to the end.
func (g *Graph) indexCRI() {
	sbByID := map[criKey]*CRISandbox{}
	for _, s := range g.sandboxes {
		if _, ok := sbByID[criKey{s.Node, s.ID}]; !ok || s.ID == "" {
			sbByID[criKey{s.Node, s.ID}] = s
		}
	}
	for _, c := range g.containers {
		if c.PodUID == "" {
			if sb := sbByID[criKey{c.Node, c.SandboxID}]; sb != nil {
				c.PodUID = sb.PodUID
			}
		}
	}
	g.sandboxesByUID = sortedByPodUID(g.sandboxes, func(s *CRISandbox) string { return s.PodUID })
	g.contsByUID = sortedByPodUID(g.containers, func(c *CRIContainer) string { return c.PodUID })
	g.compactContainers()
}

// sortedByPodUID is the records of list that name a pod, sorted by its UID, each
// pod's in list order.
func sortedByPodUID[T any](list []*T, uid func(*T) string) []*T {
	out := make([]*T, 0, len(list))
	for _, r := range list {
		if uid(r) != "" {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *T) int { return strings.Compare(uid(a), uid(b)) })
	return out
}

// ofPodUID is the records of a list sortedByPodUID made that name the pod of UID
// want, nil for none. The caller gets no room to append into the next pod's.
func ofPodUID[T any](sorted []*T, uid func(*T) string, want string) []*T {
	return spanOf(sorted, func(p **T) string { return uid(*p) }, want)
}

// spanOf is the run of sorted (ordered by key) whose key is want, nil when none is or
// want is empty.
func spanOf[E any](sorted []E, key func(*E) string, want string) []E {
	if want == "" {
		return nil
	}
	lo := sort.Search(len(sorted), func(i int) bool { return key(&sorted[i]) >= want })
	hi := lo
	for hi < len(sorted) && key(&sorted[hi]) == want {
		hi++
	}
	if lo == hi {
		return nil
	}
	return sorted[lo:hi:hi]
}

// sandboxesOf lists the CRI sandboxes of the pod of UID uid, in load order, made from
// their records (criSandboxRecord).
func (g *Graph) sandboxesOf(uid string) []*CRISandbox {
	if g.sbRecords == nil {
		return ofPodUID(g.sandboxesByUID, func(s *CRISandbox) string { return s.PodUID }, uid)
	}
	return fromRecords(g.sandboxRecordsOf(uid), func(r *criSandboxRecord) *CRISandbox { return r.whole },
		func(r *criSandboxRecord, s *CRISandbox, _ int) { g.sandboxOf(r, s) })
}

// containersOf lists the CRI containers of the pod of UID uid, in load order, made
// from their records (criContainerRecord).
func (g *Graph) containersOf(uid string) []*CRIContainer {
	if g.contRecords == nil {
		return ofPodUID(g.contsByUID, func(c *CRIContainer) string { return c.PodUID }, uid)
	}
	records := g.containerRecordsOf(uid)
	inspects := make([]Location, len(records))
	return fromRecords(records, func(r *criContainerRecord) *CRIContainer { return r.whole },
		func(r *criContainerRecord, c *CRIContainer, i int) { g.containerOf(r, c, &inspects[i]) })
}

// fromRecords lists the objects of records in order: the whole object a record kept,
// else one made from the record (build fills the i-th), all made ones in one allocation.
func fromRecords[R, T any](records []R, whole func(*R) *T, build func(r *R, out *T, i int)) []*T {
	if len(records) == 0 {
		return nil
	}
	made := make([]T, len(records))
	out := make([]*T, len(records))
	for i := range records {
		if w := whole(&records[i]); w != nil {
			out[i] = w
		} else {
			build(&records[i], &made[i], i)
			out[i] = &made[i]
		}
	}
	return out
}
