package analyze

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// After the events of quiet pods, most of a big cluster's events are its controllers
// doing their work: a ReplicaSet's SuccessfulCreate for each pod, a Deployment's
// ScalingReplicaSet for each rollout (at 80k pods, about 120k events and 40 MB kept
// whole while the rules run). Only the questions asked about one workload read them
// (eventsFor) and the lines every event makes, so a load that keeps only what explains
// trouble keeps the events of a ReplicaSet or Deployment compact, as those of a quiet
// pod, when all of them are such routine events: a controller that also failed
// (FailedCreate, which the admission facts read from the whole list) keeps its events
// whole.

// quietWorkload is what a workload's compact events need besides the list: the object
// they are about, the tables to make them whole with (for the lines, which outlive a
// wake), and each event's place in the sorted list of all events (for the lines'
// order).
type quietWorkload struct {
	owner quietOwner
	t     *quietTables
	ranks []int32
}

// routineWorkloadEvents are the reasons of the Normal events a ReplicaSet or a
// Deployment records while it works as meant; quietWorkloadKinds the kinds whose
// events are kept compact.
var (
	routineWorkloadEvents = map[string]bool{"SuccessfulCreate": true, "SuccessfulDelete": true, "ScalingReplicaSet": true}
	quietWorkloadKinds    = map[string]bool{"ReplicaSet": true, "Deployment": true}
)

// workloadMeta is the metadata of the ReplicaSet (whole or derived) or Deployment of
// key, or nil when the evidence does not have it.
func (g *Graph) workloadMeta(key string) *metav1.ObjectMeta {
	switch o := g.byKey[key].(type) {
	case *ReplicaSet:
		return o.meta
	case *derivedReplicaSet:
		return &o.meta
	case *Deployment:
		return o.meta
	}
	return nil
}

// quietenWorkloads moves the events of the workloads whose events are all routine out
// of g.events, sorted (sortEvents) and complete, into g.quiet. A workload keeps its events
// whole when one cannot be made again equal, or when an event under another name
// carries its UID (eventsFor would then mix them). loaded are the workloads whose
// events the load already kept compact (quietLoad): their events take the places
// they have among the others in the sorted list of all events.
func (g *Graph) quietenWorkloads(loaded []*quietLoadWorkload) {
	t := g.quietTables
	if t == nil {
		t = &quietTables{}
	}
	shapes := make(map[eventShape]int32, len(t.shapes))
	for i, sh := range t.shapes {
		shapes[sh] = int32(i)
	}
	files := make(map[Location]int32, len(t.files))
	for i, f := range t.files {
		files[f] = int32(i)
	}
	type candidate struct {
		owner quietOwner
		n     int
		ok    bool
	}
	cands := map[string]*candidate{}
	for _, e := range g.events {
		if !quietWorkloadKinds[e.Regarding.Kind] {
			continue
		}
		k := e.Regarding.key()
		c := cands[k]
		if c == nil {
			m := g.workloadMeta(k)
			c = &candidate{ok: m != nil}
			if m != nil {
				c.owner = quietOwner{kind: e.Regarding.Kind, meta: m}
			}
			cands[k] = c
		}
		if !c.ok {
			continue
		}
		if e.Type != corev1.EventTypeNormal || !routineWorkloadEvents[e.Reason] {
			c.ok = false
			continue
		}
		if _, ok := t.compact(e, c.owner, shapes, files); !ok {
			c.ok = false
			continue
		}
		c.n++
	}
	byUID := map[string]string{}
	for k, c := range cands {
		if c.ok && c.owner.meta.UID != "" {
			byUID[string(c.owner.meta.UID)] = k
		}
	}
	for _, e := range g.events {
		if e.Regarding.UID == "" {
			continue
		}
		if k, ok := byUID[e.Regarding.UID]; ok && e.Regarding.key() != k {
			cands[k].ok = false
		}
	}
	lists := map[string]*quietEvents{}
	list := func(k string, owner quietOwner, n int) *quietEvents {
		q := lists[k]
		if q == nil {
			q = &quietEvents{w: &quietWorkload{owner: owner, t: t, ranks: make([]int32, 0, n)}, list: make([]quietEvent, 0, n)}
			lists[k] = q
			g.quietWorkloads = append(g.quietWorkloads, q)
		}
		return q
	}
	// Each workload's owner becomes the object the graph now has of its key: the load's
	// ReplicaSet may have been derived since (deriveReplicaSets), with the same
	// metadata, and its list's array is let go of.
	for _, w := range loaded {
		if m := g.workloadMeta(w.key); m != nil {
			w.owner.meta = m
		}
	}
	early := t.sortLoaded(loaded)
	// placeEarly adds the next event the load kept compact, at rank.
	j := 0
	placeEarly := func(rank int) {
		w := early[j].w
		q := list(w.key, w.owner, len(w.list))
		q.list = append(q.list, w.list[early[j].i])
		q.w.ranks = append(q.w.ranks, int32(rank))
		g.quietCount++
		j++
	}
	kept := g.events[:0]
	for i, e := range g.events {
		for j < len(early) && t.loadedBefore(early[j], e) {
			placeEarly(i + j)
		}
		rank := i + j
		k := ""
		if quietWorkloadKinds[e.Regarding.Kind] {
			k = e.Regarding.key()
		}
		c := cands[k]
		if c == nil || !c.ok {
			kept = append(kept, e)
			continue
		}
		q := list(k, c.owner, c.n)
		ce, _ := t.compact(e, c.owner, shapes, files)
		q.list = append(q.list, ce)
		q.w.ranks = append(q.w.ranks, int32(rank))
		g.quietCount++
	}
	for j < len(early) {
		placeEarly(len(g.events) + j)
	}
	if len(lists) == 0 {
		return
	}
	g.quietTables = t
	if g.quiet == nil {
		g.quiet = make(map[string]*quietEvents, len(lists))
	}
	if g.quietUID == nil {
		g.quietUID = map[string]string{}
	}
	for k, q := range lists {
		g.quiet[k] = q
		if uid := q.w.owner.meta.UID; uid != "" {
			g.quietUID[string(uid)] = k
		}
	}
	clear(g.events[len(kept):])
	g.events = packEvents(slices.Clone(kept))
}

// loadedEvent is one event of a workload the load kept compact: the i-th of w's list.
type loadedEvent struct {
	w *quietLoadWorkload
	i int32
}

// sortLoaded is the events of the workloads the load kept compact in eventLess's
// order, and in load order where it cannot tell them apart, as sortEvents leaves them.
func (t *quietTables) sortLoaded(loaded []*quietLoadWorkload) []loadedEvent {
	n := 0
	for _, w := range loaded {
		n += len(w.list)
	}
	out := make([]loadedEvent, 0, n)
	for _, w := range loaded {
		for i := range w.list {
			out = append(out, loadedEvent{w: w, i: int32(i)})
		}
	}
	slices.SortFunc(out, func(a, b loadedEvent) int {
		ca, cb := a.w.list[a.i], b.w.list[b.i]
		if c := t.compare(ca, cb.last, t.files[cb.file].Path, t.files[cb.file].Pointer, cb.item); c != 0 {
			return c
		}
		return cmp.Compare(a.w.order[a.i], b.w.order[b.i])
	})
	return out
}

// loadedBefore reports whether the compact event a comes before e in eventLess's
// order. No event is in the same place as a compact one (its file and item), so none
// sorts equal to it.
func (t *quietTables) loadedBefore(a loadedEvent, e *Event) bool {
	at := e.Loc.inBundle()
	return t.compareEvent(a.w.list[a.i], e.LastTime, at.Path, at.Pointer) < 0
}

// compare orders c against a compact event whose last time, file and item are given,
// as eventLess orders the events they stand for.
func (t *quietTables) compare(c quietEvent, last int64, path, base string, item int32) int {
	if c.last != last {
		return quietTimeOf(c.last).Compare(quietTimeOf(last))
	}
	f := t.files[c.file]
	if f.Path != path {
		return strings.Compare(f.Path, path)
	}
	var ba, bb [64]byte
	return bytes.Compare(appendItemPointer(ba[:0], f.Pointer, c.item), appendItemPointer(bb[:0], base, item))
}

// compareEvent orders c against an event of the given last time and place in the
// bundle, as eventLess does.
func (t *quietTables) compareEvent(c quietEvent, last time.Time, path, pointer string) int {
	if ct := quietTimeOf(c.last); !ct.Equal(last) {
		return ct.Compare(last)
	}
	f := t.files[c.file]
	if f.Path != path {
		return strings.Compare(f.Path, path)
	}
	var ba [64]byte
	return bytes.Compare(appendItemPointer(ba[:0], f.Pointer, c.item), []byte(pointer))
}

// appendItemPointer appends the pointer of item in a file's base pointer (quietTables.place).
func appendItemPointer(b []byte, base string, item int32) []byte {
	return strconv.AppendInt(append(append(b, base...), '/'), int64(item), 10)
}

// quietTimeOf is the time quietTime gave ns for.
func quietTimeOf(ns int64) time.Time {
	if ns == quietZero {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// quietLine is a compact workload event's place among all events (quietWorkload.ranks).
type quietLine struct {
	rank int32
	i    int32
	q    *quietEvents
}

// quietLines are the compact workload events in the order of the sorted list of all
// events.
func (g *Graph) quietLines() []quietLine {
	n := 0
	for _, q := range g.quietWorkloads {
		n += len(q.list)
	}
	out := make([]quietLine, 0, n)
	for _, q := range g.quietWorkloads {
		for i, r := range q.w.ranks {
			out = append(out, quietLine{rank: r, i: int32(i), q: q})
		}
	}
	slices.SortFunc(out, func(a, b quietLine) int { return int(a.rank) - int(b.rank) })
	return out
}

// quietEvent makes the event a line of a compact workload event was read from.
func (l *Line) quietEvent() *Event {
	q := (*quietEvents)(l.src)
	return q.w.t.event(q.list[l.qi], q.w.owner)
}
