package bundle

import (
	"slices"
	"testing"
)

// TestListsDescribeEveryList checks the one table of resource lists: names unique and
// where ParsePath finds them, every field a consumer derives from filled in, and each
// API kind answered by exactly one list.
func TestListsDescribeEveryList(t *testing.T) {
	seen := map[string]bool{}
	byKind := map[string][]string{}
	for _, l := range Lists() {
		if seen[l.Name] {
			t.Errorf("list %s described twice", l.Name)
		}
		seen[l.Name] = true
		if l.Version == "" || l.Resource == "" || l.Kind == "" || l.Describe == "" {
			t.Errorf("%s: version, resource, kind and description are all needed: %+v", l.Name, l)
		}
		if l.Use != ReadByAnalyze && l.Use != CompatibilityOnly {
			t.Errorf("%s: say whether analyze reads it or it is kept for compatibility only", l.Name)
		}
		if l.Namespaced && l.Namespace != "" {
			t.Errorf("%s: a namespaced list is not read from one namespace", l.Name)
		}
		p, area := ClusterResourcePath(l.Name), "cluster"
		if l.Namespaced {
			p, area = NamespacedResourcePath(l.Name, "ns"), "namespaced"
		}
		if info := ParsePath(p); info.Area != area || info.Kind != l.Name {
			t.Errorf("%s: ParsePath(%q) = %+v, want area %s", l.Name, p, info, area)
		}
		if got, ok := ListNamed(l.Name); !ok || got != l {
			t.Errorf("ListNamed(%q) = %+v, %v", l.Name, got, ok)
		}
		if l.Namespace == "" {
			byKind[l.Kind] = append(byKind[l.Kind], l.Name)
		}
	}
	for kind, names := range byKind {
		if len(names) != 1 {
			t.Errorf("kind %s is held by %v: an imported object would have no single list", kind, names)
		}
		if got, ok := ListOfKind(kind); !ok || got.Name != names[0] {
			t.Errorf("ListOfKind(%q) = %s, want %s", kind, got.Name, names[0])
		}
	}
	if got := append(slices.Clone(ClusterScopedKinds), NamespacedKinds...); len(got) != len(Lists()) {
		t.Errorf("ClusterScopedKinds and NamespacedKinds hold %d lists, want %d", len(got), len(Lists()))
	}
	if _, ok := ListOfKind("Lease"); !ok {
		t.Error("Lease objects have no list")
	}
	if l, _ := ListOfKind("Lease"); l.Name != KindLeases {
		t.Errorf("ListOfKind(Lease) = %s, want %s: node-leases is a view of one namespace", l.Name, KindLeases)
	}
}

// TestNodeNamedDot: evidence of a node named "." or ".." keeps a folder of its own
// and is read back under that name, instead of landing in nodes/ or the bundle's top.
func TestNodeNamedDot(t *testing.T) {
	seen := map[string]bool{}
	for _, node := range []string{".", "..", "n1"} {
		for _, p := range []string{NodePath(node, NodeKubeletLog), NodeCRIInspectPath(node, "abc"), NodeCRIInspectPodPath(node, "def")} {
			if err := checkName(p); err != nil {
				t.Errorf("node %q: %s: %v", node, p, err)
			}
			info := ParsePath(p)
			if info.Area != "node" || info.Node != node {
				t.Errorf("node %q: %s parses as %+v", node, p, info)
			}
			if seen[p] {
				t.Errorf("node %q: %s shared with another node", node, p)
			}
			seen[p] = true
		}
	}
}
