package analyze

import (
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A quiet event is what a big cluster keeps of most of its events (200k at 20k pods):
// it stays within 48 bytes, what its message, times, count and three indexes take.
func TestQuietEventStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(quietEvent{}); n > 48 {
		t.Errorf("a quiet event takes %d bytes, want at most 48: a field of its own per event belongs in its shape", n)
	}
}

// Whether a quiet pod has an event a reader wants is asked of every pod by the rules
// and the facts. The event each compact one is read into is lent, not allocated: it
// was one allocation per pod and question (30 MB at 20k pods).
func TestReadingQuietEventsAllocatesNothing(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "uid-web-1"}}
	p := &Pod{Obj: pod, meta: &pod.ObjectMeta}
	tables := &quietTables{shapes: []eventShape{{typ: "Normal", reason: "Started", source: "kubelet"}, {typ: "Normal", reason: "Pulled", source: "kubelet"}},
		files: []Location{{Path: "cluster-resources/events/shop.json", Pointer: "/items"}}}
	q := &quietEvents{pod: p, list: []quietEvent{{message: "Started container app", count: 1, shape: 0}, {message: "Pulled", count: 1, shape: 1, item: 1}}}
	g := &Graph{quiet: map[string]*quietEvents{p.Ref().key(): q}, quietTables: tables}
	killing := func(e *Event) bool { return e.Reason == "Killing" }
	started := func(e *Event) bool { return e.Reason == "Started" && e.Regarding.Name == "web-1" }
	if tables.any(q, killing) || !tables.any(q, started) {
		t.Fatal("any does not read the events as they are")
	}
	if e, ok := g.quietLatest(p, started); !ok || e == nil || e.Message != "Started container app" || e.Loc.Pointer != "/items/0" {
		t.Fatalf("quietLatest gives %+v, %v", e, ok)
	}
	lookup := testing.AllocsPerRun(50, func() { g.quietLen(p) })
	if n := testing.AllocsPerRun(50, func() { g.eventsForIf(p, killing) }); n != lookup {
		t.Errorf("asking whether a quiet pod has an event allocates %v times, want only the %v of finding the pod", n, lookup)
	}
	if n := testing.AllocsPerRun(50, func() { g.quietLatest(p, killing) }); n != lookup {
		t.Errorf("the latest of a quiet pod's events none of which is wanted allocates %v times, want only the %v of finding the pod", n, lookup)
	}
}
