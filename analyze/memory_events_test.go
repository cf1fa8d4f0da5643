package analyze_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// routineEvents are what the scheduler and the kubelet report about pod i of healthyPod
// as it starts: one Warning among them (a readiness probe that failed once).
func routineEvents(ns string, i int) []any {
	name := fmt.Sprintf("web-5d85c85fbb-%05d", i)
	at := fmt.Sprintf("2026-11-29T20:%02d:%02dZ", i/60%60, i%60)
	ev := func(n int, typ, reason, message, source, field string) obj {
		e := obj{"metadata": obj{"name": fmt.Sprintf("%s.%x", name, n), "namespace": ns, "uid": fmt.Sprintf("ev-%s-%05d-%d", ns, i, n)},
			"involvedObject": obj{"kind": "Pod", "namespace": ns, "name": name, "uid": fmt.Sprintf("uid-%s-%05d", ns, i)},
			"type":           typ, "reason": reason, "message": message, "source": obj{"component": source},
			"firstTimestamp": at, "lastTimestamp": at, "count": 1}
		if field != "" {
			e["involvedObject"].(obj)["fieldPath"] = field
		}
		return e
	}
	const web = "spec.containers{web}"
	return []any{
		ev(0, "Normal", "Scheduled", fmt.Sprintf("Successfully assigned %s/%s to node-%03d", ns, name, i%10), "default-scheduler", ""),
		ev(1, "Normal", "Pulled", `Container image "registry.example/web:1" already present on machine`, "kubelet", web),
		ev(2, "Normal", "Created", "Created container: web", "kubelet", web),
		ev(3, "Normal", "Started", "Started container web", "kubelet", web),
		ev(4, "Warning", "Unhealthy", "Readiness probe failed: connection refused", "kubelet", web),
	}
}

// loadHealthy loads the healthy pods of TestHealthyPodsCostLittle's shape, with their
// routine events when events is set, as analyze loads a cluster, and returns the graph
// and the live heap the load added.
func loadHealthy(t *testing.T, events bool, troubleOnly bool) (*analyze.Graph, int64) {
	const namespaces, perNamespace = 10, 100
	raw := map[string][]byte{}
	for n := range namespaces {
		ns := fmt.Sprintf("team-%02d", n)
		pods, evs := make([]any, perNamespace), []any{}
		for i := range pods {
			pods[i] = healthyPod(ns, i)
			evs = append(evs, routineEvents(ns, i)...)
		}
		files := map[string][]any{bundle.NamespacedResourcePath(bundle.KindPods, ns): pods}
		if events {
			files[bundle.NamespacedResourcePath(bundle.KindEvents, ns)] = evs
		}
		addLists(t, raw, files)
	}
	b, err := bundle.New("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	var g *analyze.Graph
	grew := heapGrowth(func() {
		g, err = analyze.LoadWith(context.Background(), []*bundle.Bundle{b}, nil, analyze.LoadOptions{TroubleOnly: troubleOnly})
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(b)
	return g, grew
}

// TestHealthyPodsEventsCostLittle bounds what the events of running pods cost once
// loaded for an analysis (LoadOptions.TroubleOnly): kept as Events and indexed they
// cost about 400 bytes each here; kept compact until a rule asks about their pod,
// 50 to 150. And the events a rule then reads are those a load that keeps everything
// gives.
func TestHealthyPodsEventsCostLittle(t *testing.T) {
	const events = 10 * 100 * 5
	_, podsOnly := loadHealthy(t, false, true)
	g, withEvents := loadHealthy(t, true, true)
	perEvent := (withEvents - podsOnly) / events
	t.Logf("%d bytes kept per event of a running pod", perEvent)
	if perEvent > 250 {
		t.Errorf("an event of a running pod keeps %d bytes, want at most 250: it is kept whole though no rule asked for it", perEvent)
	}
	full, _ := loadHealthy(t, true, false)
	for _, ns := range []string{"team-00", "team-07"} {
		for _, i := range []int{0, 42, 99} {
			name := fmt.Sprintf("web-5d85c85fbb-%05d", i)
			got, want := eventsOf(g, ns, name), eventsOf(full, ns, name)
			if len(want) != 5 || !reflect.DeepEqual(got, want) {
				t.Errorf("events of %s/%s:\n got %+v\nwant %+v", ns, name, got, want)
			}
		}
	}
	runtime.KeepAlive(g)
}

// eventsOf is what a rule reads of a pod's events.
func eventsOf(g *analyze.Graph, ns, name string) []analyze.Event {
	var out []analyze.Event
	analyze.Run(g, []*analyze.Rule{{
		ID: "events-of", Stage: analyze.StageNode, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods, analyze.Events}},
		Run: func(v *analyze.View) []analyze.Finding {
			p := v.Pod(ns, name)
			for _, e := range v.EventsFor(p.Ref()) {
				out = append(out, *e)
			}
			return nil
		},
	}}, analyze.Options{})
	return out
}

// TestKeptEventsLeaveNoHoles bounds the memory the spans of the events kept whole hold
// beyond the events themselves. Events are decoded one by one, and when those of the
// running pods go compact (TestHealthyPodsEventsCostLittle) the others, left one or two
// to a span, held every span they sat in: here an event about a pod the bundle does not
// hold sits after each running pod's five, and the spans then held about 2,500 bytes
// unused per event kept; moved into one block, the events leave about 850 (what the
// decoded texts leave), and the spans free to be used again.
func TestKeptEventsLeaveNoHoles(t *testing.T) {
	const namespaces, perNamespace = 10, 200
	raw := map[string][]byte{}
	for n := range namespaces {
		ns := fmt.Sprintf("team-%02d", n)
		pods, evs := make([]any, perNamespace), []any{}
		for i := range pods {
			pods[i] = healthyPod(ns, i)
			evs = append(evs, routineEvents(ns, i)...)
			gone := routineEvents(ns, perNamespace+i)[4].(obj)
			gone["metadata"].(obj)["uid"] = fmt.Sprintf("ev-gone-%s-%05d", ns, i)
			evs = append(evs, gone)
		}
		addLists(t, raw, map[string][]any{bundle.NamespacedResourcePath(bundle.KindPods, ns): pods, bundle.NamespacedResourcePath(bundle.KindEvents, ns): evs})
	}
	b, err := bundle.New("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	g, err := analyze.LoadWith(context.Background(), []*bundle.Bundle{b}, nil, analyze.LoadOptions{TroubleOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	settle()
	runtime.ReadMemStats(&after)
	holes := int64(after.HeapInuse-after.HeapAlloc) - int64(before.HeapInuse-before.HeapAlloc)
	kept := int64(namespaces * perNamespace)
	t.Logf("%d bytes of spans in use hold no object, %d per event kept whole", holes, holes/kept)
	if holes/kept > 1500 {
		t.Errorf("the spans of the events kept whole hold %d bytes per event unused, want at most 1500: the events kept are scattered among the freed ones", holes/kept)
	}
	runtime.KeepAlive(g)
	runtime.KeepAlive(b)
}

// addLists writes each file's items into raw as one compact JSON list, as the memory
// tests' bundles hold them.
func addLists(t *testing.T, raw map[string][]byte, files map[string][]any) {
	t.Helper()
	for path, items := range files {
		data, err := json.Marshal(list(items...))
		if err != nil {
			t.Fatal(err)
		}
		raw[path] = data
	}
}
