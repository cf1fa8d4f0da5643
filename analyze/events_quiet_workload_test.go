package analyze

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
)

// A ReplicaSet or Deployment whose events are all routine keeps them compact in a load
// for an analysis, and nothing read of them changes: the events a rule asks for, the
// lines made of them and their order among the other events' lines, the count. A
// ReplicaSet that also failed to create a pod keeps its events whole, and its
// FailedCreate is still read from the list of every event (admissionFacts).
func TestRoutineWorkloadEventsKeptCompactReadTheSame(t *testing.T) {
	files := map[string][]byte{}
	files[bundle.NamespacedResourcePath(bundle.KindDeployments, "shop")] = []byte(`{"kind":"DeploymentList","items":[
{"metadata":{"name":"web","namespace":"shop","uid":"uid-web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"web:1"}]}}},"status":{"replicas":2,"readyReplicas":2}},
{"metadata":{"name":"api","namespace":"shop","uid":"uid-api"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"api"}},"template":{"metadata":{"labels":{"app":"api"}},"spec":{"containers":[{"name":"app","image":"api:1"}]}}},"status":{"replicas":1}}]}`)
	rs := func(name, owner, ownerUID string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"shop","uid":"uid-%s","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":%q,"uid":%q,"controller":true}]},
"spec":{"replicas":1,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"app","image":"x:1"}]}}},"status":{"replicas":1}}`,
			name, name, owner, ownerUID, owner, owner)
	}
	files[bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop")] = []byte(`{"kind":"ReplicaSetList","items":[` +
		rs("web-5d85c85fbb", "web", "uid-web") + "," + rs("api-7f9c8d", "api", "uid-api") + `]}`)
	n := 0
	event := func(kind, name, uid, typ, reason, message string, sec int) string {
		n++
		return fmt.Sprintf(`{"metadata":{"name":"ev-%d","namespace":"shop","uid":"ev-%d"},"involvedObject":{"kind":%q,"namespace":"shop","name":%q,"uid":%q},
"type":%q,"reason":%q,"message":%q,"source":{"component":"controller"},"firstTimestamp":"2026-11-29T20:00:%02dZ","lastTimestamp":"2026-11-29T20:00:%02dZ","count":%d}`,
			n, n, kind, name, uid, typ, reason, message, sec, sec, 1+n%7)
	}
	evs := []string{
		event("ReplicaSet", "web-5d85c85fbb", "uid-web-5d85c85fbb", "Normal", "SuccessfulCreate", "Created pod: web-5d85c85fbb-a", 9),
		event("Deployment", "web", "uid-web", "Normal", "ScalingReplicaSet", "Scaled up replica set web-5d85c85fbb to 2", 3),
		event("ReplicaSet", "api-7f9c8d", "uid-api-7f9c8d", "Normal", "SuccessfulCreate", "Created pod: api-7f9c8d-b", 5),
		event("ReplicaSet", "api-7f9c8d", "uid-api-7f9c8d", "Warning", "FailedCreate", `Error creating: pods "api-7f9c8d-c" is forbidden: exceeded quota: shop`, 7),
		event("ReplicaSet", "web-5d85c85fbb", "", "Normal", "SuccessfulCreate", "Created pod: web-5d85c85fbb-b", 5),
		event("Node", "n1", "", "Warning", "NodeNotReady", "Node n1 status is now: NodeNotReady", 4),
		event("Deployment", "api", "uid-api", "Normal", "ScalingReplicaSet", "Scaled up replica set api-7f9c8d to 1", 1),
		event("ReplicaSet", "web-5d85c85fbb", "uid-web-5d85c85fbb", "Normal", "SuccessfulDelete", "Deleted pod: web-5d85c85fbb-a", 5),
	}
	files[bundle.NamespacedResourcePath(bundle.KindEvents, "shop")] = []byte(`{"kind":"EventList","items":[` + strings.Join(evs, ",") + "]}")
	load := func(troubleOnly bool) *Graph { return loadFiles(t, files, LoadOptions{TroubleOnly: troubleOnly}) }
	got, want := load(true), load(false)
	compact := []string{"Deployment/shop/web", "Deployment/shop/api", "ReplicaSet/shop/web-5d85c85fbb"}
	for _, k := range compact {
		if got.quiet[k] == nil {
			t.Errorf("the events of %s are routine but were not kept compact", k)
		}
	}
	if got.quiet["ReplicaSet/shop/api-7f9c8d"] != nil {
		t.Error("a ReplicaSet that failed to create a pod had its events made compact")
	}
	if got.quietCount != 5 || len(got.events) != 3 || len(want.events) != 8 {
		t.Errorf("%d events compact and %d whole, want 5 and 3 (of %d)", got.quietCount, len(got.events), len(want.events))
	}

	// The lines before any event is made whole, then after: a line keeps reading its
	// compact event.
	wantLines := linesSaid(want.Lines())
	if g := linesSaid(got.Lines()); g != wantLines {
		t.Errorf("lines:\n got %s\nwant %s", g, wantLines)
	}
	failed := got.admissionFacts()
	if len(failed) != 1 || failed[0].Owner.Name != "api-7f9c8d" || !strings.Contains(failed[0].Message, "exceeded quota") {
		t.Errorf("admission facts %+v, want the FailedCreate of api-7f9c8d", failed)
	}
	for _, ref := range []ObjectRef{
		{Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d85c85fbb", UID: "uid-web-5d85c85fbb"},
		{Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d85c85fbb"},
		{Kind: "ReplicaSet", Namespace: "shop", Name: "api-7f9c8d", UID: "uid-api-7f9c8d"},
		{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
		{Kind: "Deployment", Namespace: "shop", Name: "api"},
	} {
		g, w := jsonOf(t, derefEvents(got.eventsFor(ref))), jsonOf(t, derefEvents(want.eventsFor(ref)))
		if g != w || w == "[]" {
			t.Errorf("events of %s:\n got %s\nwant %s", ref, g, w)
		}
	}
	if len(got.quiet) != 0 {
		t.Errorf("still compact after every workload was asked about: %v", keysOf(got.quiet))
	}
	if g := linesSaid(got.Lines()); g != wantLines {
		t.Errorf("lines once the events are whole again:\n got %s\nwant %s", g, wantLines)
	}
}

// linesSaid is everything a reader of the lines can ask of them.
func linesSaid(lines []Line) string {
	var b strings.Builder
	for i := range lines {
		l := &lines[i]
		bundleName, path := l.source()
		fmt.Fprintf(&b, "%q %s %q %v %v %q %q %d %+v %s %s %v\n", l.Text, l.Kind(), l.Reason(), l.Object(), l.Pod != nil,
			l.Node(), l.Container(), l.Count(), l.Evidence(), bundleName, path, l.Warning)
	}
	return b.String()
}

// Workload events made compact as the load adds them (quietLoad) leave the graph as
// making them compact after the load does: the same workloads compact, the same
// events whole, the same lines in the same order, the same events asked for. A
// workload is found not routine only by a late event: a FailedCreate after routine
// ones, its UID under another name (before or after its own events). A ReplicaSet
// the load derives from its Deployment, one the bundle does not have and a Deployment
// whose events tie in time with others' are read the same.
func TestWorkloadEventsMadeCompactWhileLoadingAreThoseMadeAfter(t *testing.T) {
	files := map[string][]byte{}
	deploy := func(name string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"shop","uid":"uid-%s"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"app","image":"web:1"}]}}},"status":{"replicas":1}}`,
			name, name, name, name)
	}
	files[bundle.NamespacedResourcePath(bundle.KindDeployments, "shop")] = []byte(`{"kind":"DeploymentList","items":[` +
		deploy("web") + "," + deploy("api") + "," + deploy("db") + "," + deploy("cache") + `]}`)
	rs := func(name, owner, image string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"shop","uid":"uid-%s","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":%q,"uid":"uid-%s","controller":true}]},
"spec":{"replicas":1,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"app","image":%q}]}}},"status":{"replicas":1}}`,
			name, name, owner, owner, owner, owner, image)
	}
	files[bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop")] = []byte(`{"kind":"ReplicaSetList","items":[` +
		rs("web-1", "web", "web:1") + "," + rs("web-2", "web", "web:2") + "," + rs("api-1", "api", "api:1") + "," + rs("db-1", "db", "db:1") + `]}`)
	n := 0
	event := func(kind, name, uid, typ, reason string, sec int) string {
		n++
		return fmt.Sprintf(`{"metadata":{"name":"ev-%d","namespace":"shop","uid":"ev-%d"},"involvedObject":{"kind":%q,"namespace":"shop","name":%q,"uid":%q},
"type":%q,"reason":%q,"message":"%s of %s","source":{"component":"controller"},"firstTimestamp":"2026-11-29T20:00:%02dZ","lastTimestamp":"2026-11-29T20:00:%02dZ","count":1}`,
			n, n, kind, name, uid, typ, reason, reason, name, sec, sec)
	}
	evs := []string{
		event("ReplicaSet", "web-1", "uid-web-1", "Normal", "SuccessfulCreate", 9), // derived from web
		event("ReplicaSet", "web-2", "uid-web-2", "Normal", "SuccessfulCreate", 3),
		event("ReplicaSet", "api-1", "uid-api-1", "Normal", "SuccessfulCreate", 5),
		event("ReplicaSet", "db-old", "uid-db-1", "Normal", "SuccessfulDelete", 5), // db-1's UID, before db-1's own events
		event("Deployment", "web", "uid-web", "Normal", "ScalingReplicaSet", 3),
		event("ReplicaSet", "gone-1", "uid-gone-1", "Normal", "SuccessfulCreate", 4), // not in the bundle
		event("Node", "n1", "", "Warning", "NodeNotReady", 3),
		event("ReplicaSet", "db-1", "uid-db-1", "Normal", "SuccessfulCreate", 6),
		event("ReplicaSet", "api-1", "uid-api-1", "Warning", "FailedCreate", 7), // api-1 after routine ones
		event("Deployment", "api", "uid-api", "Normal", "ScalingReplicaSet", 3),
		event("ReplicaSet", "web-2", "", "Normal", "SuccessfulDelete", 3),
		event("Deployment", "cache", "uid-cache", "Normal", "ScalingReplicaSet", 1),
		event("Deployment", "cache-old", "uid-cache", "Normal", "ScalingReplicaSet", 2), // cache's UID, after
		event("ReplicaSet", "web-1", "uid-web-1", "Normal", "SuccessfulDelete", 3),
	}
	files[bundle.NamespacedResourcePath(bundle.KindEvents, "shop")] = []byte(`{"kind":"EventList","items":[` + strings.Join(evs, ",") + "]}")
	// Two files, so that events of the same time sort by file too.
	files[bundle.NamespacedResourcePath(bundle.KindEvents, "aaa")] = []byte(`{"kind":"EventList","items":[` +
		event("Deployment", "web", "uid-web", "Normal", "ScalingReplicaSet", 3) + "]}")
	got, want := loadQuietBothWays(t, files)
	if len(got.derivedRS) != 1 || got.derivedRS[0].meta.Name != "web-1" {
		t.Fatalf("the test's bundle should have web-1 derived, not %d ReplicaSets", len(got.derivedRS))
	}
	wantQuiet := []string{"Deployment/shop/api", "Deployment/shop/web", "ReplicaSet/shop/web-1", "ReplicaSet/shop/web-2"}
	if !reflect.DeepEqual(keysOf(want.quiet), wantQuiet) {
		t.Fatalf("the test's bundle should leave %v compact, not %v", wantQuiet, keysOf(want.quiet))
	}
	if !reflect.DeepEqual(keysOf(got.quiet), keysOf(want.quiet)) || got.quietCount != want.quietCount {
		t.Errorf("compact %v (%d events), want %v (%d)", keysOf(got.quiet), got.quietCount, keysOf(want.quiet), want.quietCount)
	}
	for k, q := range want.quiet {
		g := got.quiet[k]
		if g == nil || !reflect.DeepEqual(eventsOfQuiet(got, g), eventsOfQuiet(want, q)) || !reflect.DeepEqual(g.w.ranks, q.w.ranks) {
			t.Errorf("compact events of %s differ", k)
		}
		if g != nil && g.owner().meta != got.workloadMeta(k) {
			t.Errorf("the compact events of %s are about another copy of it than the graph's", k)
		}
	}
	if g, w := jsonOf(t, derefEvents(got.events)), jsonOf(t, derefEvents(want.events)); g != w {
		t.Errorf("events kept whole:\n got %s\nwant %s", g, w)
	}
	wantLines := linesSaid(want.Lines())
	if g := linesSaid(got.Lines()); g != wantLines {
		t.Errorf("lines:\n got %s\nwant %s", g, wantLines)
	}
	for _, k := range []string{"web", "api", "db", "cache", "cache-old"} {
		ref := ObjectRef{Kind: "Deployment", Namespace: "shop", Name: k}
		if g, w := jsonOf(t, derefEvents(got.eventsFor(ref))), jsonOf(t, derefEvents(want.eventsFor(ref))); g != w {
			t.Errorf("events of %s:\n got %s\nwant %s", ref, g, w)
		}
	}
	for _, k := range []string{"web-1", "web-2", "api-1", "db-1", "db-old", "gone-1"} {
		ref := ObjectRef{Kind: "ReplicaSet", Namespace: "shop", Name: k, UID: "uid-" + k}
		if g, w := jsonOf(t, derefEvents(got.eventsFor(ref))), jsonOf(t, derefEvents(want.eventsFor(ref))); g != w {
			t.Errorf("events of %s:\n got %s\nwant %s", ref, g, w)
		}
	}
	if g := linesSaid(got.Lines()); g != wantLines {
		t.Errorf("lines once the events are whole again:\n got %s\nwant %s", g, wantLines)
	}
}

// The events of a workload whose events are all routine never sit whole in the graph
// while the load adds them: at 80k pods, such events kept whole until every one was in
// were about 90 MB more at the load's first peak.
func TestRoutineWorkloadEventsAreCompactAsTheyAreAdded(t *testing.T) {
	var evs []string
	for i := range 50 {
		evs = append(evs, fmt.Sprintf(`{"metadata":{"name":"ev-%d","namespace":"shop","uid":"ev-%d"},"involvedObject":{"kind":"ReplicaSet","namespace":"shop","name":"web-1","uid":"uid-web-1"},
"type":"Normal","reason":"SuccessfulCreate","message":"Created pod: web-1-%d","source":{"component":"replicaset-controller"},"firstTimestamp":"2026-11-29T20:00:00Z","lastTimestamp":"2026-11-29T20:00:00Z","count":1}`, i, i, i))
	}
	b, err := bundle.New("mem", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"): []byte(`{"kind":"ReplicaSetList","items":[{"metadata":{"name":"web-1","namespace":"shop","uid":"uid-web-1"},"spec":{"replicas":1}}]}`),
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"):      []byte(`{"kind":"EventList","items":[` + strings.Join(evs, ",") + "]}"),
	})
	if err != nil {
		t.Fatal(err)
	}
	l := &loader{ctx: context.Background(), g: newGraph(), log: logrus.New(), share: newSharedDecode(), quietAtLoad: true}
	l.addManifest(b, false)
	l.loadObjects(l.bundles[0])
	if len(l.g.events) != 0 {
		t.Errorf("%d of the ReplicaSet's routine events were kept whole while they loaded", len(l.g.events))
	}
	if w := l.quiet.workloads["ReplicaSet/shop/web-1"]; w == nil || len(w.list) != 50 {
		t.Error("the ReplicaSet's routine events were not kept compact while they loaded")
	}
}
