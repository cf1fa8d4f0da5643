package analyze

import (
	"slices"

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
// carries its UID (eventsFor would then mix them).
func (g *Graph) quietenWorkloads() {
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
	kept := g.events[:0]
	for i, e := range g.events {
		k := ""
		if quietWorkloadKinds[e.Regarding.Kind] {
			k = e.Regarding.key()
		}
		c := cands[k]
		if c == nil || !c.ok {
			kept = append(kept, e)
			continue
		}
		q := lists[k]
		if q == nil {
			q = &quietEvents{w: &quietWorkload{owner: c.owner, t: t, ranks: make([]int32, 0, c.n)}, list: make([]quietEvent, 0, c.n)}
			lists[k] = q
			g.quietWorkloads = append(g.quietWorkloads, q)
		}
		ce, _ := t.compact(e, c.owner, shapes, files)
		q.list = append(q.list, ce)
		q.w.ranks = append(q.w.ranks, int32(i))
		g.quietCount++
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
