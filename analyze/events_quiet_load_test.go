package analyze

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
)

// Events made compact as they are added (quietLoad) leave the graph as making them
// compact after the load does (quietenEvents): the same pods quiet, the same events
// kept whole in the same order, and the load's warnings in file order though the events
// files are added last. A pod is found not quiet only by a late event: one with its
// UID under another name, one that names another UID, one of a pod the load does not
// quieten (a Deployment's).
func TestEventsMadeCompactWhileLoadingAreThoseMadeAfter(t *testing.T) {
	files := map[string][]byte{}
	pod := func(name string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"shop","uid":"uid-%s"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"state":{"running":{}}}]}}`, name, name)
	}
	n := 0
	event := func(kind, name, uid, reason string) string {
		n++
		return fmt.Sprintf(`{"metadata":{"name":"ev-%d","namespace":"shop","uid":"ev-%d"},"involvedObject":{"kind":%q,"namespace":"shop","name":%q,"uid":%q},
"type":"Normal","reason":%q,"message":"%s of %s","source":{"component":"kubelet"},"firstTimestamp":"2026-11-29T20:00:%02dZ","lastTimestamp":"2026-11-29T20:00:%02dZ","count":1}`,
			n, n, kind, name, uid, reason, reason, name, n%3, n%3)
	}
	files[bundle.NamespacedResourcePath(bundle.KindPods, "shop")] = []byte(`{"kind":"PodList","items":[` + pod("a") + "," + pod("b") + "," + pod("c") + "," + pod("d") + `]}`)
	evs := []string{
		event("Pod", "a", "uid-a", "Scheduled"), event("Pod", "b", "uid-b", "Scheduled"), event("Pod", "c", "uid-c", "Scheduled"),
		event("Deployment", "web", "", "ScalingReplicaSet"),
		event("Pod", "a", "uid-a", "Started"), event("Pod", "b", "uid-b", "Started"), event("Pod", "c", "", "Started"),
		event("Pod", "d", "uid-d", "Started"),
		// b's UID under another name, c's name with another UID: both are not quiet.
		event("Pod", "b-old", "uid-b", "Killing"), event("Pod", "c", "uid-c-old", "Killing"),
		event("Pod", "a", "uid-a", "Pulled"), event("Pod", "d", "uid-d", "Pulled"),
	}
	list := `{"kind":"EventList","items":[`
	for i, e := range evs {
		if i > 0 {
			list += ","
		}
		list += e
	}
	files[bundle.NamespacedResourcePath(bundle.KindEvents, "shop")] = []byte(list + "]}")
	// Warnings of files before and after the events files in the bundle's order.
	files[bundle.NamespacedResourcePath(bundle.KindEvents, "aaa")] = []byte(`{"kind":"EventList","items":[{"metadata":{"namespace":"aaa"}}]}`)
	files[bundle.NamespacedResourcePath(bundle.KindDeployments, "shop")] = []byte(`{"kind":"DeploymentList","items":[{"metadata":{"namespace":"shop"}}]}`)
	files[bundle.NamespacedResourcePath(bundle.KindServices, "shop")] = []byte(`{"kind":"ServiceList","items":[{"metadata":{"namespace":"shop"}}]}`)

	got, want := loadQuietBothWays(t, files)
	if len(want.quiet) != 2 || want.quiet["Pod/shop/a"] == nil || want.quiet["Pod/shop/d"] == nil {
		t.Fatalf("the test's bundle should leave pods a and d quiet, not %v", keysOf(want.quiet))
	}
	if !reflect.DeepEqual(keysOf(got.quiet), keysOf(want.quiet)) || got.quietCount != want.quietCount {
		t.Errorf("quiet pods %v (%d events), want %v (%d)", keysOf(got.quiet), got.quietCount, keysOf(want.quiet), want.quietCount)
	}
	for k, q := range want.quiet {
		if g := got.quiet[k]; g == nil || !reflect.DeepEqual(eventsOfQuiet(got, g), eventsOfQuiet(want, q)) {
			t.Errorf("compact events of %s differ", k)
		}
	}
	if g, w := jsonOf(t, derefEvents(got.events)), jsonOf(t, derefEvents(want.events)); g != w {
		t.Errorf("events kept whole:\n got %s\nwant %s", g, w)
	}
	if len(want.Warnings()) < 3 || !reflect.DeepEqual(got.Warnings(), want.Warnings()) {
		t.Errorf("warnings:\n got %v\nwant %v", got.Warnings(), want.Warnings())
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		ref := ObjectRef{Kind: "Pod", Namespace: "shop", Name: name, UID: "uid-" + name}
		if g, w := jsonOf(t, derefEvents(got.eventsFor(ref))), jsonOf(t, derefEvents(want.eventsFor(ref))); g != w {
			t.Errorf("events of pod %s:\n got %s\nwant %s", name, g, w)
		}
	}
}

func keysOf(m map[string]*quietEvents) []string { return sortedKeys(m) }

func eventsOfQuiet(g *Graph, q *quietEvents) []Event {
	var out []Event
	for _, c := range q.list {
		out = append(out, *g.quietTables.event(c, q.owner()))
	}
	return out
}

func derefEvents(list []*Event) []Event {
	out := make([]Event, len(list))
	for i, e := range list {
		out[i] = *e
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A load of one bundle lets go of the logs of healthy pods once its pods are loaded,
// before its events and journals: what it keeps and counts of the logs is what a load
// that leaves them out as it comes to them keeps.
func TestHealthyPodsLogsGoOnceThePodsAreLoaded(t *testing.T) {
	healthy := `{"metadata":{"name":"a","namespace":"shop","uid":"uid-a"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"state":{"running":{}}}]}}`
	crashing := `{"metadata":{"name":"b","namespace":"shop","uid":"uid-b"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},
"status":{"phase":"Running","containerStatuses":[{"name":"app","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`
	for _, withEvents := range []bool{true, false} {
		files := map[string][]byte{
			bundle.NamespacedResourcePath(bundle.KindPods, "shop"): []byte(`{"kind":"PodList","items":[` + healthy + "," + crashing + `]}`),
			bundle.LogPath("shop", "a", "app", false):              []byte("serving\n"),
			bundle.LogPath("shop", "b", "app", false):              []byte("panic: no config\n"),
		}
		if withEvents {
			files[bundle.NamespacedResourcePath(bundle.KindEvents, "shop")] = []byte(`{"kind":"EventList","items":[]}`)
		}
		load := func(whileLoading bool) *Graph {
			saved := quietWhileLoading
			quietWhileLoading = whileLoading
			defer func() { quietWhileLoading = saved }()
			b, err := bundle.New("mem", files)
			if err != nil {
				t.Fatal(err)
			}
			b.ReadOnce()
			g, err := LoadWith(context.Background(), []*bundle.Bundle{b}, nil, LoadOptions{TroubleOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		got, want := load(true), load(false)
		if len(got.logs) != 1 || got.logs[logKey("shop", "b", "app", false)] == nil || got.logsSkipped != 1 ||
			!reflect.DeepEqual(podsNamed(got.podsWithLogs), podsNamed(want.podsWithLogs)) || len(got.podsWithLogs) != 2 {
			t.Errorf("events %v: logs %v (%d left out), pods with logs %v; want those of pod b (1 left out), %v", withEvents,
				keysOfLogs(got.logs), got.logsSkipped, podsNamed(got.podsWithLogs), podsNamed(want.podsWithLogs))
		}
	}
}

func keysOfLogs(m map[string]*ContainerLog) []string { return sortedKeys(m) }

// The logs of healthy pods are let go of by the time the lists are loaded, before the
// node evidence and logs are read; the others' are still there to read.
func TestHealthyPodsLogsAreLetGoOfWithTheLists(t *testing.T) {
	healthy := `{"metadata":{"name":"a","namespace":"shop","uid":"uid-a"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"state":{"running":{}}}]}}`
	crashing := `{"metadata":{"name":"b","namespace":"shop","uid":"uid-b"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},
"status":{"phase":"Running","containerStatuses":[{"name":"app","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`
	b, err := bundle.New("mem", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):   []byte(`{"kind":"PodList","items":[` + healthy + "," + crashing + `]}`),
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"): []byte(`{"kind":"EventList","items":[]}`),
		bundle.LogPath("shop", "a", "app", false):                []byte("serving\n"),
		bundle.LogPath("shop", "b", "app", false):                []byte("panic: no config\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	b.ReadOnce()
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	l := &loader{ctx: context.Background(), g: newGraph(), log: log, share: newSharedDecode(), quietAtLoad: true}
	l.addManifest(b, false)
	l.loadObjects(l.bundles[0])
	if _, err := b.ReadFile(bundle.LogPath("shop", "a", "app", false)); err == nil {
		t.Error("the healthy pod's log is still held once the lists are loaded")
	}
	if data, err := b.ReadFile(bundle.LogPath("shop", "b", "app", false)); err != nil || string(data) != "panic: no config\n" {
		t.Errorf("the crashing pod's log: %q, %v", data, err)
	}
}

// loadFiles loads a bundle made of files (a copy: the load may keep what it reads).
func loadFiles(t *testing.T, files map[string][]byte, opts LoadOptions) *Graph {
	t.Helper()
	b, err := bundle.New("mem", maps.Clone(files))
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadWith(context.Background(), []*bundle.Bundle{b}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A load of one bundle lets go of the tables of shared parts once every list but the
// events is in, before the events are decoded; the events decode without them.
func TestSharedPartsGoBeforeTheEvents(t *testing.T) {
	b, err := bundle.New("mem", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):   []byte(`{"kind":"PodList","items":[{"metadata":{"name":"a","namespace":"shop","uid":"uid-a"}}]}`),
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"): []byte(`{"kind":"EventList","items":[]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	l := &loader{ctx: context.Background(), g: newGraph(), log: logrus.New(), share: newSharedDecode(), quietAtLoad: true}
	l.addManifest(b, false)
	l.loadObjects(l.bundles[0])
	if l.share != nil {
		t.Error("the tables of shared parts are still held once the events are loaded")
	}
}

// loadQuietBothWays loads files trouble-only twice: with quiet events made compact while
// they load (got), and once the load is done (want), for tests that both read the same.
func loadQuietBothWays(t *testing.T, files map[string][]byte) (got, want *Graph) {
	t.Helper()
	load := func(whileLoading bool) *Graph {
		saved := quietWhileLoading
		quietWhileLoading = whileLoading
		defer func() { quietWhileLoading = saved }()
		return loadFiles(t, files, LoadOptions{TroubleOnly: true})
	}
	return load(true), load(false)
}

// podsNamed is the namespace/name of each pod of a set, sorted.
func podsNamed(set map[*Pod]bool) []string {
	var out []string
	for p := range set {
		out = append(out, p.Ref().nsName())
	}
	slices.Sort(out)
	return out
}
