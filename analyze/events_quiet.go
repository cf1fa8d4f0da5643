package analyze

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Most events of a big cluster are about pods that run: each pod's Scheduled, Pulling,
// Pulled, Created and Started. No line is made of them (buildLines) and only the
// questions asked about one pod read them (eventsFor), so a load that keeps only what
// explains trouble (LoadOptions.TroubleOnly) keeps the events of a running, ready pod
// that never restarted compact: a pod's list is made into Events the first time it is
// asked for, equal to those the load decoded.

// quietEvents are the events about one quiet pod, in load order, or about one quiet
// workload (w), in eventLess's order.
type quietEvents struct {
	pod  *Pod
	w    *quietWorkload
	list []quietEvent
}

// quietOwner is what a compact event takes from the object it is about: its kind, and
// its namespace, name and UID.
type quietOwner struct {
	kind string
	meta *metav1.ObjectMeta
}

func podOwner(p *Pod) quietOwner { return quietOwner{kind: "Pod", meta: p.meta} }

// owner is the object q's events are about.
func (q *quietEvents) owner() quietOwner {
	if q.w != nil {
		return q.w.owner
	}
	return podOwner(q.pod)
}

// quietEvent is an Event about a quiet pod without what the pod, the file and the
// event's kind of event say for it: its times as Unix nanoseconds (quietZero for none)
// in the local zone the decoder gives, its place as the file's base location and the
// item's index in it, and its field path, type, reason, source and host, and whether
// it names the pod's UID, as one shared shape. It is 48 bytes: one more field would
// round it to 64.
type quietEvent struct {
	message     string
	first, last int64
	count       int32
	item        int32
	shape       int32
	file        int32
}

// quietZero stands for the zero time.
const quietZero = math.MinInt64

// eventShape is what the events of a workload's pods repeat; uid says the event names
// its pod's UID.
type eventShape struct {
	fieldPath, typ, reason, source, host string
	uid                                  bool
}

// quietTables are the shapes and base locations quiet events share.
type quietTables struct {
	shapes []eventShape
	files  []Location
}

// quietPod reports whether p's events can be kept compact: a pod that runs, is ready
// and never restarted (positivelyHealthy), not being deleted, whose spec and status the
// evidence shows whole. What a rule asks about such a pod's past (history, timeline)
// is answered from its status or from its events made whole again.
func quietPod(p *Pod) bool {
	return p.Obj.Status.Phase == corev1.PodRunning && positivelyHealthy(p) && p.meta.DeletionTimestamp == nil &&
		p.Obj.Spec.NodeName != "" && !isPartial(p, "spec") && !isPartial(p, "status")
}

// quietenEvents moves the events about quiet pods out of g.events into g.quiet. A pod
// whose events cannot all be made again equal (an event of an earlier pod of the same
// name, one cited through an import, a time in another zone) keeps them all as they are.
func (g *Graph) quietenEvents() {
	pods := map[string]*Pod{}
	byUID := map[string]string{}
	for _, p := range g.pods {
		if quietPod(p) {
			k := p.Ref().key()
			pods[k] = p
			if p.meta.UID != "" {
				byUID[string(p.meta.UID)] = k
			}
		}
	}
	if len(pods) == 0 {
		return
	}
	t := &quietTables{}
	shapes := map[eventShape]int32{}
	files := map[Location]int32{}
	counts := map[string]int{}
	for _, e := range g.events {
		if e.Regarding.UID != "" {
			if k, ok := byUID[e.Regarding.UID]; ok && e.Regarding.key() != k {
				delete(pods, k) // the pod's UID under another name: left as it is
			}
		}
		k := e.Regarding.key()
		p := pods[k]
		if p == nil {
			continue
		}
		if _, ok := t.compact(e, podOwner(p), shapes, files); !ok {
			delete(pods, k)
			continue
		}
		counts[k]++
	}
	if len(pods) == 0 {
		return
	}
	g.quiet, g.quietUID = make(map[string]*quietEvents, len(pods)), map[string]string{}
	g.quietTables = t
	for k, p := range pods {
		if p.meta.UID != "" {
			g.quietUID[string(p.meta.UID)] = k
		}
	}
	kept := g.events[:0]
	for _, e := range g.events {
		k := e.Regarding.key()
		p := pods[k]
		if p == nil {
			kept = append(kept, e)
			continue
		}
		q := g.quiet[k]
		if q == nil {
			q = &quietEvents{pod: p, list: make([]quietEvent, 0, counts[k])}
			g.quiet[k] = q
		}
		c, _ := t.compact(e, podOwner(p), shapes, files)
		q.list = append(q.list, c)
		g.quietCount++
	}
	clear(g.events[len(kept):])
	g.events = packEvents(kept)
}

// packEvents moves the events into one block, in the same order, and points the list
// at them. Each event was allocated on its own as it was read, and those of quiet pods
// (most of a big cluster's) have just gone: the ones left are scattered one or two to a
// span of the allocator, which keeps every such span in use. On a generated bundle of
// 200k events that was about 50 MB of memory held for 13 MB of events. Nothing but the
// list points at an event yet (the indexes are built after).
func packEvents(list []*Event) []*Event {
	block := make([]Event, len(list))
	for i, e := range list {
		block[i] = *e
		list[i] = &block[i]
	}
	return list
}

// compact is e as a quietEvent, and whether it makes e again exactly.
func (t *quietTables) compact(e *Event, o quietOwner, shapes map[eventShape]int32, files map[Location]int32) (quietEvent, bool) {
	if e.Loc.in != nil || e.Regarding.UnnamedIn != "" || e.Regarding.NamespaceUnknown ||
		e.Regarding.UID != "" && e.Regarding.UID != string(o.meta.UID) {
		return quietEvent{}, false
	}
	slash := strings.LastIndexByte(e.Loc.Pointer, '/')
	if slash < 0 {
		return quietEvent{}, false
	}
	item, err := strconv.ParseInt(e.Loc.Pointer[slash+1:], 10, 32)
	if err != nil || item < 0 {
		return quietEvent{}, false
	}
	base := e.Loc
	base.Pointer = e.Loc.Pointer[:slash]
	file, ok := files[base]
	if !ok {
		file = int32(len(t.files))
		t.files = append(t.files, base)
		files[base] = file
	}
	sh := eventShape{fieldPath: e.FieldPath, typ: e.Type, reason: e.Reason, source: e.Source, host: e.Host, uid: e.Regarding.UID != ""}
	shape, ok := shapes[sh]
	if !ok {
		shape = int32(len(t.shapes))
		t.shapes = append(t.shapes, sh)
		shapes[sh] = shape
	}
	c := quietEvent{message: e.Message, first: quietTime(e.FirstTime), last: quietTime(e.LastTime), count: e.Count,
		item: int32(item), shape: shape, file: file}
	var back Event // on the stack: compact is asked of every event a big cluster has
	t.place(&back, c, o)
	return c, back == *e
}

func quietTime(t time.Time) int64 {
	if t.IsZero() {
		return quietZero
	}
	return t.UnixNano()
}

// event makes the Event c stands for, about o.
func (t *quietTables) event(c quietEvent, o quietOwner) *Event {
	e := &Event{}
	t.place(e, c, o)
	return e
}

// place sets e to the Event c stands for, about o.
func (t *quietTables) place(e *Event, c quietEvent, o quietOwner) {
	t.fill(e, c, o)
	e.Loc.Pointer += "/" + strconv.Itoa(int(c.item))
}

// fill sets e to what c says but the item's index in its file's pointer, which a
// reader that looks only at what an event says need not pay for.
func (t *quietTables) fill(e *Event, c quietEvent, o quietOwner) {
	sh := t.shapes[c.shape]
	*e = Event{
		Regarding: ObjectRef{Kind: o.kind, Namespace: o.meta.Namespace, Name: o.meta.Name},
		FieldPath: sh.fieldPath, Type: sh.typ, Reason: sh.reason, Message: c.message, Count: c.count,
		Source: sh.source, Host: sh.host,
	}
	if sh.uid {
		e.Regarding.UID = string(o.meta.UID)
	}
	for _, at := range []struct {
		dst *time.Time
		ns  int64
	}{{&e.FirstTime, c.first}, {&e.LastTime, c.last}} {
		if at.ns != quietZero {
			*at.dst = time.Unix(0, at.ns)
		}
	}
	e.Loc = t.files[c.file]
}

// wakeEvents makes the events of the quiet pod of key, and of the quiet pod of uid,
// whole again and indexes them as index does, once.
func (g *Graph) wakeEvents(key, uid string) {
	g.quietMu.Lock()
	defer g.quietMu.Unlock()
	g.wakeLocked(key)
	if k, ok := g.quietUID[uid]; ok && uid != "" {
		g.wakeLocked(k)
	}
}

func (g *Graph) wakeLocked(key string) {
	q := g.quiet[key]
	if q == nil {
		return
	}
	delete(g.quiet, key)
	o := q.owner()
	if o.meta.UID != "" {
		delete(g.quietUID, string(o.meta.UID))
	}
	// One block for the pod's events, as the load keeps those it did not make compact
	// (packEvents).
	block := make([]Event, len(q.list))
	events := make([]*Event, len(q.list))
	for i, c := range q.list {
		g.quietTables.place(&block[i], c, o)
		events[i] = &block[i]
	}
	sort.SliceStable(events, func(i, j int) bool { return eventLess(events[i], events[j]) })
	for _, e := range events {
		if e.Regarding.UID != "" {
			g.eventsByUID[e.Regarding.UID] = append(g.eventsByUID[e.Regarding.UID], e)
		}
	}
	g.eventsByKey[key] = events
}

// quietOf is p's compact events while they are kept so, else nil.
func (g *Graph) quietOf(p *Pod) *quietEvents {
	if g.quiet == nil {
		return nil
	}
	g.quietMu.Lock()
	q := g.quiet[p.Ref().key()]
	g.quietMu.Unlock()
	if q == nil || q.pod != p {
		return nil
	}
	return q
}

// isQuiet is p when its events are still kept compact, else nil.
func (g *Graph) isQuiet(p *Pod) *Pod {
	if g.quiet == nil {
		return nil
	}
	g.quietMu.Lock()
	defer g.quietMu.Unlock()
	var b [keyRoom]byte
	if g.quiet[string(joinedKey(b[:0], p.kind, p.meta.Namespace, p.meta.Name))] == nil { // p.Ref().key()
		return nil
	}
	return p
}

// eventsForIf is eventsFor(p.Ref()) for a reader that reads only the events for which
// wanted (which reads what an event says, not where it is) is true: a quiet pod none
// of whose events is wanted gives none, and its events stay compact.
func (g *Graph) eventsForIf(p *Pod, wanted func(*Event) bool) []*Event {
	if q := g.quietOf(p); q != nil && !g.quietTables.any(q, wanted) {
		return nil
	}
	return g.eventsFor(p.Ref())
}

// any reports whether wanted, which reads what an event says and not where it is, is
// true of an event of q.
func (t *quietTables) any(q *quietEvents, wanted func(*Event) bool) bool {
	e := scratchEvents.Get().(*Event)
	defer scratchEvents.Put(e)
	for _, c := range q.list {
		if t.fill(e, c, q.owner()); wanted(e) {
			return true
		}
	}
	return false
}

// scratchEvents are events to fill with a compact event for a reader that only looks at
// it: wanted may keep what it is given, as far as the compiler knows, so an event on
// the stack would move to the heap, one per call, and the rules ask for every pod's.
var scratchEvents = sync.Pool{New: func() any { return new(Event) }}

// quietLen is how many events of p are still kept compact: 0 when they are not.
func (g *Graph) quietLen(p *Pod) int {
	if q := g.quietOf(p); q != nil {
		return len(q.list)
	}
	return 0
}

// quietHas is, for a quiet pod, whether wanted (which reads what an event says, not
// where it is) is true of one of its events, and true; false for any other pod.
func (g *Graph) quietHas(p *Pod, wanted func(*Event) bool) (has, quiet bool) {
	q := g.quietOf(p)
	if q == nil {
		return false, false
	}
	return g.quietTables.any(q, wanted), true
}

// quietLatest is, for a quiet pod, the last of its events for which wanted is true in
// eventsFor's order, made for the caller alone, and true; false for any other pod. For
// readers that keep the event's value, not the event.
func (g *Graph) quietLatest(p *Pod, wanted func(*Event) bool) (*Event, bool) {
	q := g.quietOf(p)
	if q == nil {
		return nil, false
	}
	var latest *Event
	e := scratchEvents.Get().(*Event)
	defer scratchEvents.Put(e)
	for _, c := range q.list {
		if g.quietTables.fill(e, c, podOwner(p)); !wanted(e) {
			continue
		}
		// In load order: of events eventLess cannot tell apart, the stable sort
		// leaves the later one last.
		if e := g.quietTables.event(c, podOwner(p)); latest == nil || !eventLess(e, latest) {
			latest = e
		}
	}
	return latest, true
}

// quietLoad is quietenEvents done as the events are added, for a load of one bundle
// whose pods are all added before its events (loadObjects): an event about a quiet pod
// is made compact as it comes, so the load never holds a big cluster's events whole
// (at 20k pods, 200k events were 70 MB as decoded and 25 MB once compact). The pods
// kept quiet, the events kept whole and their order are those quietenEvents gives.
type quietLoad struct {
	// pods are the quiet pods by key, until an event shows one is not (quietenEvents);
	// byUID their keys by UID.
	pods  map[string]*Pod
	byUID map[string]string
	lists map[string]*quietLoadList
	t     *quietTables
	// shapes and files index t's shapes and base locations.
	shapes map[eventShape]int32
	files  map[Location]int32
	// workloads are the ReplicaSets and Deployments whose events are kept compact as
	// they come while every one is routine (quietenWorkloads), by key: nil for one whose
	// events stay whole here.
	workloads map[string]*quietLoadWorkload
	// order is the load order of each event in g.events, next the next event's; woke
	// says an event went back to g.events after later ones.
	order []int32
	next  int32
	woke  bool
}

// quietLoadWorkload is the compact events of one workload, in load order, and what
// they are about.
type quietLoadWorkload struct {
	key   string
	owner quietOwner
	quietLoadList
}

// quietLoadList is the compact events of one pod and their load order.
type quietLoadList struct {
	list  []quietEvent
	order []int32
}

// newQuietLoad starts quietening the events about the quiet pods of g.
func newQuietLoad(g *Graph) *quietLoad {
	q := &quietLoad{pods: map[string]*Pod{}, byUID: map[string]string{}, lists: map[string]*quietLoadList{},
		t: &quietTables{}, shapes: map[eventShape]int32{}, files: map[Location]int32{}, workloads: map[string]*quietLoadWorkload{}}
	for _, p := range g.pods {
		if quietPod(p) {
			k := p.Ref().key()
			q.pods[k] = p
			if p.meta.UID != "" {
				q.byUID[string(p.meta.UID)] = k
			}
		}
	}
	return q
}

// add keeps e compact when it is about a quiet pod and can be, else in g.events.
func (q *quietLoad) add(g *Graph, e *Event) {
	at := q.next
	q.next++
	if e.Regarding.UID != "" {
		if k, ok := q.byUID[e.Regarding.UID]; ok && e.Regarding.key() != k {
			q.wake(g, k) // the pod's UID under another name: its events stay as they are
		}
		q.workloadUID(g, e)
	}
	k := e.Regarding.key()
	if p := q.pods[k]; p != nil {
		if c, ok := q.t.compact(e, podOwner(p), q.shapes, q.files); ok {
			l := q.lists[k]
			if l == nil {
				l = &quietLoadList{}
				q.lists[k] = l
			}
			l.list, l.order = append(l.list, c), append(l.order, at)
			return
		}
		q.wake(g, k)
	} else if quietWorkloadKinds[e.Regarding.Kind] && q.addWorkload(g, k, e, at) {
		return
	}
	g.events = append(g.events, e)
	q.order = append(q.order, at)
}

// addWorkload keeps e, an event about the ReplicaSet or Deployment of key, compact
// while every event about it is routine, as quietenWorkloads would, and reports
// whether it did. A workload the load does not have (a ReplicaSet is derived after
// it) keeps its events whole here, for quietenWorkloads to decide.
func (q *quietLoad) addWorkload(g *Graph, key string, e *Event, at int32) bool {
	w, seen := q.workloads[key]
	if !seen {
		if m := g.workloadMeta(key); m != nil {
			w = &quietLoadWorkload{key: key, owner: quietOwner{kind: e.Regarding.Kind, meta: m}}
		}
		q.workloads[key] = w
	}
	if w == nil {
		return false
	}
	if e.Type != corev1.EventTypeNormal || !routineWorkloadEvents[e.Reason] {
		q.wakeWorkload(g, key)
		return false
	}
	c, ok := q.t.compact(e, w.owner, q.shapes, q.files)
	if !ok {
		q.wakeWorkload(g, key)
		return false
	}
	w.list, w.order = append(w.list, c), append(w.order, at)
	return true
}

// workloadUID gives up keeping compact the events of the ReplicaSet or Deployment
// whose UID e carries under another name (eventsFor would mix them).
func (q *quietLoad) workloadUID(g *Graph, e *Event) {
	var kind string
	var m *metav1.ObjectMeta
	switch o := g.byUID[e.Regarding.UID].(type) {
	case *ReplicaSet:
		kind, m = "ReplicaSet", o.meta
	case *Deployment:
		kind, m = "Deployment", o.meta
	default:
		return
	}
	if e.Regarding.Kind == kind && e.Regarding.Namespace == m.Namespace && e.Regarding.Name == m.Name {
		return
	}
	q.wakeWorkload(g, ObjectRef{Kind: kind, Namespace: m.Namespace, Name: m.Name}.key())
}

// wakeWorkload gives up keeping the events of the workload of key compact: those kept
// so far go back to g.events as they were, and the ones to come stay whole.
func (q *quietLoad) wakeWorkload(g *Graph, key string) {
	w := q.workloads[key]
	q.workloads[key] = nil
	if w == nil {
		return
	}
	for i, c := range w.list {
		g.events = append(g.events, q.t.event(c, w.owner))
		q.order = append(q.order, w.order[i])
	}
	q.woke = true
}

// wake gives up keeping the events of the pod of key compact: those kept so far go
// back to g.events as they were.
func (q *quietLoad) wake(g *Graph, key string) {
	p := q.pods[key]
	if p == nil {
		return
	}
	delete(q.pods, key)
	l := q.lists[key]
	if l == nil {
		return
	}
	delete(q.lists, key)
	for i, c := range l.list {
		g.events = append(g.events, q.t.event(c, podOwner(p)))
		q.order = append(q.order, l.order[i])
	}
	q.woke = true
}

// finish puts what quietenEvents would have left in g: the compact events of the pods
// that stayed quiet, and the other events in load order, packed. It returns the
// workloads whose events it kept compact, for quietenWorkloads to place among the
// others once they are sorted.
func (q *quietLoad) finish(g *Graph) []*quietLoadWorkload {
	if q.woke {
		sortByKeys(g.events, q.order)
	}
	var workloads []*quietLoadWorkload
	for _, w := range q.workloads {
		if w != nil && len(w.list) > 0 {
			workloads = append(workloads, w)
		}
	}
	if len(workloads) > 0 {
		g.quietTables = q.t
	}
	if len(q.pods) == 0 {
		return workloads
	}
	g.quiet, g.quietUID = make(map[string]*quietEvents, len(q.lists)), map[string]string{}
	g.quietTables = q.t
	for k, p := range q.pods {
		if p.meta.UID != "" {
			g.quietUID[string(p.meta.UID)] = k
		}
		l := q.lists[k]
		if l == nil {
			continue
		}
		// Grown by appends: an exact copy lets the spare room go.
		g.quiet[k] = &quietEvents{pod: p, list: slices.Clone(l.list)}
		g.quietCount += len(l.list)
	}
	g.events = packEvents(g.events)
	return workloads
}
