package redact

import (
	"testing"

	"podflow.dev/podflow/bundle"
)

// TestItemKindOfEveryList checks that redaction knows the kind of the items of every
// bundle list (typed client-go lists drop it), from bundle.Lists.
func TestItemKindOfEveryList(t *testing.T) {
	for _, l := range bundle.Lists() {
		p := bundle.ClusterResourcePath(l.Name)
		if l.Namespaced {
			p = bundle.NamespacedResourcePath(l.Name, "shop")
		}
		if got := fileItemKind(p); got != l.Kind {
			t.Errorf("fileItemKind(%q) = %q, want %q", p, got, l.Kind)
		}
	}
	if got := fileItemKind(bundle.NodePath("n1", bundle.NodeKubeletLog)); got != "" {
		t.Errorf("a node file has item kind %q, want none", got)
	}
}
