package analyze

import (
	"reflect"
	"testing"

	"podflow.dev/podflow/bundle"
)

// derivedReplicaSetsBundle holds a Deployment and five ReplicaSets of it: the current
// one (its template the Deployment's and the hash label, with every field a rule reads
// set), an older revision (another image), one with a ReplicaFailure condition, one
// whose template carries an annotation the Deployment's does not, and one that names a
// Deployment the bundle lacks; and a pod of the current one.
func derivedReplicaSetsBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	type m = map[string]any
	template := func(image string, labels m) m {
		return m{"metadata": m{"labels": labels}, "spec": m{
			"containers": []any{m{"name": "web", "image": image, "ports": []any{m{"name": "http", "containerPort": 8080}},
				"resources": m{"requests": m{"cpu": "5m"}}}},
			"volumes": []any{m{"name": "cfg", "configMap": m{"name": "web"}}},
		}}
	}
	owner := func(name string) []any {
		return []any{m{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": "d-" + name, "controller": true}}
	}
	rs := func(name, revision, image string, extra func(rs m)) m {
		labels := m{"app": "web", "pod-template-hash": name}
		o := m{"kind": "ReplicaSet", "apiVersion": "apps/v1",
			"metadata": m{"name": name, "namespace": "shop", "uid": "rs-" + name, "ownerReferences": owner("web"),
				"labels": labels, "annotations": m{RevisionAnnotation: revision}, "creationTimestamp": "2026-11-29T20:25:00Z", "generation": 2},
			"spec":   m{"replicas": 2, "minReadySeconds": 5, "selector": m{"matchLabels": labels}, "template": template(image, labels)},
			"status": m{"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 2}}
		if extra != nil {
			extra(o)
		}
		return o
	}
	deployments := m{"kind": "List", "items": []any{
		m{"kind": "Deployment", "metadata": m{"name": "web", "namespace": "shop", "uid": "d-web", "annotations": m{RevisionAnnotation: "3"}},
			"spec": m{"replicas": 2, "template": template("web:3", m{"app": "web"})}},
	}}
	replicaSets := m{"kind": "List", "items": []any{
		rs("web-old", "2", "web:2", nil),
		rs("web-3", "3", "web:3", nil),
		rs("web-failing", "3", "web:3", func(o m) {
			o["status"].(m)["conditions"] = []any{m{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": "pods \"web\" is forbidden: exceeded quota"}}
		}),
		rs("web-annotated", "3", "web:3", func(o m) {
			o["spec"].(m)["template"].(m)["metadata"].(m)["annotations"] = m{"restartedAt": "now"}
		}),
		rs("api-1", "1", "web:3", func(o m) {
			o["metadata"].(m)["ownerReferences"] = owner("api")
		}),
	}}
	pods := m{"kind": "List", "items": []any{
		m{"kind": "Pod", "metadata": m{"name": "web-3-a", "namespace": "shop", "uid": "pod-a", "ownerReferences": []any{
			m{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-3", "uid": "rs-web-3", "controller": true}}},
			"spec": m{"containers": []any{m{"name": "web", "image": "web:3"}}}, "status": m{"phase": "Pending"}},
	}}
	b := jsonBundle(t, map[string]any{
		bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"): deployments,
		bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"): replicaSets,
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):        pods,
	})
	return b
}

// A ReplicaSet held as what it adds to its Deployment's template gives back, on every
// path that hands out ReplicaSets, the object a load that keeps it whole holds: the same
// fields, location and order. Only the current ReplicaSet is derived: the older one's
// template differs, a condition or a template annotation of its own keeps a ReplicaSet
// whole, and so does an owner the bundle lacks.
func TestReplicaSetsDerivedFromTheirDeploymentReadTheSame(t *testing.T) {
	load := func(derive bool) *Graph {
		t.Helper()
		saved := deriveWhileLoading
		deriveWhileLoading = derive
		defer func() { deriveWhileLoading = saved }()
		return Load([]*bundle.Bundle{derivedReplicaSetsBundle(t)}, nil)
	}
	g, whole := load(true), load(false)
	if len(whole.derivedRS) != 0 || len(whole.replicaSets) != 5 {
		t.Fatalf("without deriving the load holds %d whole and %d derived ReplicaSets", len(whole.replicaSets), len(whole.derivedRS))
	}
	var derived []string
	for _, d := range g.derivedRS {
		derived = append(derived, d.meta.Name)
	}
	if want := []string{"web-3"}; !reflect.DeepEqual(derived, want) {
		t.Fatalf("derived ReplicaSets %v, want %v", derived, want)
	}
	rule := &Rule{ID: "test", Needs: Needs{Optional: []Kind{Deployments, ReplicaSets, Pods}}}
	v, vw := newView(g, rule), newView(whole, rule)

	same := func(what string, got, want []*ReplicaSet) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d ReplicaSets, want %d", what, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].Obj, want[i].Obj) || !reflect.DeepEqual(got[i].Loc, want[i].Loc) || got[i].Ref() != want[i].Ref() ||
				!reflect.DeepEqual(got[i].Meta(), want[i].Meta()) {
				t.Errorf("%s: ReplicaSet %d is %+v at %v, want %+v at %v", what, i, got[i].Obj, got[i].Loc, want[i].Obj, want[i].Loc)
			}
		}
	}
	same("ReplicaSets", v.ReplicaSets(), vw.ReplicaSets())
	same("ReplicaSetsOf", v.ReplicaSetsOf(v.Deployments()[0]), vw.ReplicaSetsOf(vw.Deployments()[0]))
	if got := v.ReplicaSets(); got[1] != g.derivedRS[0].object() {
		t.Errorf("a derived ReplicaSet held is not the one handed out again")
	}
	// A rule that asks for every ReplicaSet again (once per Deployment) is not handed
	// ReplicaSets made again.
	if a, b := v.ReplicaSets(), v.ReplicaSets(); &a[0] != &b[0] {
		t.Errorf("the view made its ReplicaSets again")
	}

	ref := ObjectRef{Kind: "ReplicaSet", Namespace: "shop", Name: "web-3"}
	owners, ownersWhole := v.PodOwners(), vw.PodOwners()
	if got, want := owners.Ref(ref), ownersWhole.Ref(ref); got != want {
		t.Errorf("PodOwners.Ref = %v, want %v", got, want)
	}
	if got, want := owners.Workload(ref), ownersWhole.Workload(ref); got != want || got.Name != "web" {
		t.Errorf("PodOwners.Workload = %v, want %v (the Deployment)", got, want)
	}
	tpl, loc, ok := owners.Template(ref)
	tplWhole, locWhole, _ := ownersWhole.Template(ref)
	if !ok || !reflect.DeepEqual(tpl, tplWhole) || loc != locWhole {
		t.Errorf("PodOwners.Template = %+v at %v, want %+v at %v", tpl, loc, tplWhole, locWhole)
	}
	if owners.Satisfied(ref) != ownersWhole.Satisfied(ref) {
		t.Errorf("PodOwners.Satisfied differs")
	}
	text, ev := owners.Progress(ref)
	textWhole, evWhole := ownersWhole.Progress(ref)
	if text != textWhole || !reflect.DeepEqual(ev, evWhole) || text == "" {
		t.Errorf("PodOwners.Progress = %q %+v, want %q %+v", text, ev, textWhole, evWhole)
	}
	if got, want := g.templateSpec(ref), whole.templateSpec(ref); got == nil || !reflect.DeepEqual(got, want) {
		t.Errorf("templateSpec = %+v, want %+v", got, want)
	}
	pod := v.Pods()[0]
	if got, want := v.Workload(pod), vw.Workload(pod); got == nil || *got != *want || got.Kind != "Deployment" {
		t.Errorf("Workload of the pod = %v, want %v", got, want)
	}
	if got := g.topOwner(&ref); got == nil || got.Kind != "Deployment" {
		t.Errorf("topOwner = %v, want the Deployment", got)
	}
	noPods := &Rule{ID: "test", Needs: Needs{Optional: []Kind{Deployments, ReplicaSets}}}
	if got, want := newView(g, noPods).StandInTemplates("shop"), newView(whole, noPods).StandInTemplates("shop"); len(got) != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("StandInTemplates: %+v, want %+v (the Deployment's)", got, want)
	}
	if got := g.replicaSet("shop", "web-3"); got == nil || got.Obj.Spec.Template.Spec.Containers[0].Image != "web:3" {
		t.Errorf("replicaSet(shop, web-3) = %+v", got)
	}
}
