package analyze

import (
	"fmt"
	"strings"
	"testing"

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
