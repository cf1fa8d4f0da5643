package analyze

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// A scoped load holds of other namespaces their pods and the owners a plan climbs,
// and nothing else: no events about their objects, no workload, service, claim or
// config, no container log. The same bundle loaded whole holds all of them.
func TestScopedLoadLeavesOtherNamespacesUndecoded(t *testing.T) {
	const scope = "crash-exit-1"
	dir := filepath.Join("..", "testdata", "bundles", "demo")
	load := func(ns string) *Graph {
		b, err := bundle.OpenReadOnce(context.Background(), dir, bundle.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		return loadScoped(t, b, ns)
	}
	// elsewhere counts what the graph holds of namespaces other than the scope's, by
	// what it is.
	elsewhere := func(g *Graph) map[string]int {
		n := map[string]int{}
		for key := range g.byKey {
			kind, rest, _ := strings.Cut(key, "/")
			if ns, _, _ := strings.Cut(rest, "/"); ns != "" && ns != scope {
				n[kind]++
			}
		}
		for _, e := range g.events {
			if e.Regarding.Namespace != "" && e.Regarding.Namespace != scope {
				n["event"]++
			}
		}
		for _, c := range g.logs {
			if c.Namespace != scope {
				n["log"]++
			}
		}
		return n
	}
	full, scoped := elsewhere(load("")), elsewhere(load(scope))
	for _, what := range []string{"Deployment", "ResourceQuota", "event", "log"} {
		if full[what] == 0 {
			t.Fatalf("the demo bundle holds no %s outside %s: the test shows nothing", what, scope)
		}
	}
	for what, n := range scoped {
		// A node's Lease is in kube-node-lease, read from a list of the cluster's.
		if !slices.Contains([]string{"Pod", "ReplicaSet", "Job", "Lease"}, what) {
			t.Errorf("the scoped load holds %d %s(s) of other namespaces", n, what)
		}
		if n != full[what] {
			t.Errorf("the scoped load holds %d %s(s) of other namespaces, the full load %d", n, what, full[what])
		}
	}
	b, err := bundle.Open(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var want int
	for _, name := range b.Names() {
		info := bundle.ParsePath(name)
		if k, ok := listKinds[info.Kind]; ok && info.Area == "namespaced" && info.Namespace != scope && !slices.Contains(ownerKinds, k) {
			want++
		}
	}
	if s := load(scope).Scoped(); s == nil || s.Skimmed != want || s.Skipped != want {
		t.Errorf("scoped load: %+v, want %d list files skimmed and skipped", s, want)
	}
}

// Of another namespace's events file a scoped load adds the events about a node, and
// a list it cannot read is decoded as a full load decodes it, with the same warning.
func TestScopedLoadKeepsNodeEventsAndWarnings(t *testing.T) {
	ev := func(ns, name, kind, objNS, obj string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name, "namespace": ns},
			"involvedObject": map[string]any{"kind": kind, "name": obj, "namespace": objNS},
			"type":           "Warning", "reason": "Test", "message": name, "count": 1, "lastTimestamp": "2026-11-29T10:00:00Z"}
	}
	list := func(items ...any) map[string]any {
		return map[string]any{"kind": "List", "apiVersion": "v1", "items": items}
	}
	pod := func(ns, name string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-" + name},
			"spec": map[string]any{"nodeName": "n1"}, "status": map[string]any{"phase": "Pending"}}
	}
	files := map[string]any{
		bundle.ManifestPath: map[string]any{"formatVersion": "1.0", "type": "cluster", "collectedAt": "2026-11-29T12:00:00Z"},
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):         list(pod("shop", "web")),
		bundle.NamespacedResourcePath(bundle.KindPods, "other"):        list(pod("other", "batch")),
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"):       list(ev("shop", "web.1", "Pod", "shop", "web")),
		bundle.NamespacedResourcePath(bundle.KindEvents, "other"):      list(ev("other", "n1.1", "Node", "", "n1"), ev("other", "batch.1", "Pod", "other", "batch")),
		bundle.NamespacedResourcePath(bundle.KindConfigMaps, "other"):  list(map[string]any{"metadata": map[string]any{"name": "c", "namespace": "other"}}),
		bundle.NamespacedResourcePath(bundle.KindConfigMaps, "broken"): `{"items": [`,
	}
	load := func(ns string) *Graph { return loadScoped(t, jsonBundle(t, files), ns) }
	messages := func(g *Graph) []string {
		var out []string
		for _, e := range g.events {
			out = append(out, e.Message)
		}
		slices.Sort(out)
		return out
	}
	full, scoped := load(""), load("shop")
	if got, want := messages(scoped), []string{"n1.1", "web.1"}; !slices.Equal(got, want) {
		t.Errorf("scoped load's events %v, want %v (the full load's: %v)", got, want, messages(full))
	}
	if !reflect.DeepEqual(scoped.Warnings(), full.Warnings()) || len(full.Warnings()) != 1 {
		t.Errorf("scoped load warns %v, the full load %v", scoped.Warnings(), full.Warnings())
	}
	if s := scoped.Scoped(); s == nil || s.Skimmed != 3 || s.Skipped != 1 {
		t.Errorf("scoped load: %+v, want 3 lists skimmed (other's events and config maps, broken's), 1 skipped", s)
	}
	if _, ok := scoped.byKey["ConfigMap/other/c"]; ok {
		t.Error("the scoped load decoded a config map of another namespace")
	}
}

// loadScoped loads b for a report about namespace ns ("" loads everything).
func loadScoped(t *testing.T, b *bundle.Bundle, ns string) *Graph {
	t.Helper()
	return loadBundleWith(t, b, LoadOptions{Namespace: ns})
}
