package analyze

import (
	"testing"

	"podflow.dev/podflow/bundle"
)

// A ReplicaSet whose template holds the containers and volumes of its Deployment's
// keeps the Deployment's lists instead of copies of its own; one whose template differs
// (an older revision) keeps its own.
func TestReplicaSetSharesItsDeploymentsTemplate(t *testing.T) {
	type m = map[string]any
	template := func(image string) m {
		return m{"metadata": m{"labels": m{"app": "web"}}, "spec": m{
			"containers": []any{m{"name": "web", "image": image, "resources": m{"requests": m{"cpu": "5m"}}}},
			"volumes":    []any{m{"name": "cfg", "configMap": m{"name": "web"}}},
		}}
	}
	owner := func(name string) []any {
		return []any{m{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": "d-" + name, "controller": true}}
	}
	deployments := m{"kind": "List", "items": []any{
		m{"kind": "Deployment", "metadata": m{"name": "web", "namespace": "shop", "uid": "d-web"}, "spec": m{"template": template("web:2")}},
	}}
	replicaSets := m{"kind": "List", "items": []any{
		m{"kind": "ReplicaSet", "metadata": m{"name": "web-2", "namespace": "shop", "uid": "rs-2", "ownerReferences": owner("web")}, "spec": m{"template": template("web:2")}},
		m{"kind": "ReplicaSet", "metadata": m{"name": "web-1", "namespace": "shop", "uid": "rs-1", "ownerReferences": owner("web")}, "spec": m{"template": template("web:1")}},
	}}
	b := jsonBundle(t, map[string]any{
		bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"): deployments,
		bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"): replicaSets,
	})
	// A ReplicaSet kept whole shares as well (one with a condition is never derived).
	saved := deriveWhileLoading
	deriveWhileLoading = false
	defer func() { deriveWhileLoading = saved }()
	g := Load([]*bundle.Bundle{b}, nil)
	if len(g.deployments) != 1 || len(g.replicaSets) != 2 {
		t.Fatalf("loaded %d deployments and %d replicasets", len(g.deployments), len(g.replicaSets))
	}
	d := &g.deployments[0].Obj.Spec.Template.Spec
	for _, rs := range g.replicaSets {
		s := &rs.Obj.Spec.Template.Spec
		shared := &s.Containers[0] == &d.Containers[0] && &s.Volumes[0] == &d.Volumes[0]
		if want := rs.meta.Name == "web-2"; shared != want {
			t.Errorf("ReplicaSet %s shares its Deployment's template lists: %v, want %v", rs.meta.Name, shared, want)
		}
		if rs.meta.Name == "web-1" && s.Containers[0].Image != "web:1" {
			t.Errorf("ReplicaSet web-1 reads image %q", s.Containers[0].Image)
		}
	}
}
