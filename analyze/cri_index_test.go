package analyze

import (
	"slices"
	"testing"

	"podflow.dev/podflow/bundle"
)

// TestCRIRecordsOfAPod checks the search that replaced the maps from pod UID to CRI
// records: each pod's records in load order, a container without a UID given its
// sandbox's, none for an unknown or empty UID, and no room in a result that an append
// could write into the next pod's records with.
func TestCRIRecordsOfAPod(t *testing.T) {
	g := newGraph()
	g.sandboxes = []*CRISandbox{
		{Node: "n1", ID: "s-b", PodUID: "uid-b"},
		{Node: "n1", ID: "s-a1", PodUID: "uid-a"},
		{Node: "n1", ID: "s-none"},
		{Node: "n2", ID: "s-a2", PodUID: "uid-a"},
	}
	g.containers = []*CRIContainer{
		{Node: "n1", ID: "c-b", PodUID: "uid-b"},
		{Node: "n1", ID: "c-a2", SandboxID: "s-a1", Attempt: 2},
		{Node: "n1", ID: "c-a1", PodUID: "uid-a", Attempt: 1},
		{Node: "n1", ID: "c-lost", SandboxID: "s-none"},
	}
	g.indexCRI()
	ids := func(list []*CRIContainer) []string {
		var out []string
		for _, c := range list {
			out = append(out, c.ID)
		}
		return out
	}
	if got, want := ids(g.containersOf("uid-a")), []string{"c-a2", "c-a1"}; !slices.Equal(got, want) {
		t.Errorf("containers of uid-a = %v, want %v (load order, the first named by its sandbox)", got, want)
	}
	var sbs []string
	for _, s := range g.sandboxesOf("uid-a") {
		sbs = append(sbs, s.ID)
	}
	if want := []string{"s-a1", "s-a2"}; !slices.Equal(sbs, want) {
		t.Errorf("sandboxes of uid-a = %v, want %v", sbs, want)
	}
	for _, uid := range []string{"", "uid-c"} {
		if got := g.containersOf(uid); got != nil {
			t.Errorf("containers of %q = %v, want none", uid, ids(got))
		}
	}
	a := g.containersOf("uid-a")
	_ = append(a, &CRIContainer{ID: "appended"})
	if got := ids(g.containersOf("uid-b")); !slices.Equal(got, []string{"c-b"}) {
		t.Errorf("after an append to uid-a's containers, uid-b's are %v", got)
	}
}

// TestOnlyPodsAreLookedUpByUIDOnceLoaded checks that the UID index a load keeps holds
// the pods alone, and still finds each of them.
func TestOnlyPodsAreLookedUpByUIDOnceLoaded(t *testing.T) {
	files := map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): []byte(`{"items":[{"metadata":{"name":"a","namespace":"shop","uid":"uid-a"}},` +
			`{"metadata":{"name":"b","namespace":"shop","uid":"uid-dup"}}]}`),
		bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"): []byte(`{"items":[{"metadata":{"name":"web","namespace":"shop","uid":"uid-dup"}}]}`),
		bundle.NamespacedResourcePath(bundle.KindServices, "shop"):    []byte(`{"items":[{"metadata":{"name":"web","namespace":"shop","uid":"uid-svc"}}]}`),
	}
	b, err := bundle.New("mem", files)
	if err != nil {
		t.Fatal(err)
	}
	g := Load([]*bundle.Bundle{b}, nil)
	v := newView(g, &Rule{ID: "test", Needs: Needs{Optional: []Kind{Pods}}})
	if p := v.PodByUID("uid-a"); p == nil || p.meta.Name != "a" {
		t.Errorf("pod uid-a not found by its UID")
	}
	if p := v.PodByUID("uid-dup"); p != nil {
		t.Errorf("the Deployment's UID finds pod %s, which the load left out as another object's", p.meta.Name)
	}
	if len(g.byUID) != 1 {
		t.Errorf("the UID index holds %d objects once loaded, want the one pod", len(g.byUID))
	}
}
