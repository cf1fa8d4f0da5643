package analyze_test

import (
	"reflect"
	"testing"

	"podflow.dev/podflow/analyze"
)

func ownedBy(kind, name, uid string) obj {
	return obj{"ownerReferences": []any{obj{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true}}}
}

func replicaSetObj(name, rev string, owner obj) obj {
	meta := obj{"name": name, "namespace": "shop", "uid": "uid-" + name}
	if rev != "" {
		meta["annotations"] = obj{analyze.RevisionAnnotation: rev}
	}
	for k, v := range owner {
		meta[k] = v
	}
	return obj{"metadata": meta, "spec": obj{"selector": obj{}, "template": obj{}}}
}

func TestOwnerAccessors(t *testing.T) {
	web := ownedBy("Deployment", "web", "uid-web")
	pod := func(name string, owner obj) obj {
		p := podObj("shop", name, "n1", nil)
		for k, v := range owner {
			p["metadata"].(obj)[k] = v
		}
		return p
	}
	g := load(t, map[string]any{
		"cluster-resources/deployments/shop.json": list(obj{"metadata": obj{"name": "web", "namespace": "shop", "uid": "uid-web",
			"annotations": obj{analyze.RevisionAnnotation: "10"}}, "spec": obj{"selector": obj{}, "template": obj{}}}),
		"cluster-resources/replicasets/shop.json": list(
			replicaSetObj("web-1", "1", web),
			replicaSetObj("web-10", "10", web),
			replicaSetObj("web-2", "2", web),
			replicaSetObj("web-adopted", "", web),
			replicaSetObj("web-old-uid", "3", ownedBy("Deployment", "web", "uid-earlier-web")),
			replicaSetObj("api-1", "1", ownedBy("Deployment", "api", "uid-api")),
		),
		"cluster-resources/pods/shop.json": list(
			pod("web-10-b", ownedBy("ReplicaSet", "web-10", "uid-web-10")),
			pod("web-10-a", ownedBy("ReplicaSet", "web-10", "uid-web-10")),
			pod("web-1-a", ownedBy("ReplicaSet", "web-1", "uid-web-1")),
			pod("db-0", ownedBy("StatefulSet", "db", "")),
			pod("loose", nil),
		),
		"cluster-resources/pods/other.json": list(podObj("other", "web-10-x", "n1", nil)),
	})
	var rsNames, podNames, dbNames []string
	var undeclared int
	probe := &analyze.Rule{ID: "probe", Stage: analyze.StageController, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Deployments, analyze.ReplicaSets, analyze.Pods}},
		Run: func(v *analyze.View) []analyze.Finding {
			d := v.Deployments()[0]
			for _, rs := range v.ReplicaSetsOf(d) {
				rsNames = append(rsNames, rs.Obj.Name)
			}
			for _, p := range v.PodsControlledBy(analyze.ObjectRef{Kind: "ReplicaSet", Namespace: "shop", Name: "web-10", UID: "uid-web-10"}) {
				podNames = append(podNames, p.Obj.Name)
			}
			for _, p := range v.PodsControlledBy(analyze.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "db", UID: "uid-db"}) {
				dbNames = append(dbNames, p.Obj.Name)
			}
			return nil
		}}
	sneaky := &analyze.Rule{ID: "sneaky", Stage: analyze.StageController, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Deployments}},
		Run: func(v *analyze.View) []analyze.Finding {
			undeclared = len(v.ReplicaSetsOf(v.Deployments()[0])) + len(v.PodsControlledBy(analyze.ObjectRef{Kind: "ReplicaSet", Namespace: "shop", Name: "web-10"}))
			return nil
		}}
	rep := analyze.Run(g, []*analyze.Rule{probe, sneaky}, analyze.Options{})
	if want := []string{"web-10", "web-2", "web-1", "web-adopted"}; !reflect.DeepEqual(rsNames, want) {
		t.Errorf("ReplicaSetsOf = %q, want %q (newest revision first, another Deployment's and an earlier namesake's left out)", rsNames, want)
	}
	if want := []string{"web-10-a", "web-10-b"}; !reflect.DeepEqual(podNames, want) {
		t.Errorf("PodsControlledBy(ReplicaSet web-10) = %q, want %q", podNames, want)
	}
	if want := []string{"db-0"}; !reflect.DeepEqual(dbNames, want) {
		t.Errorf("PodsControlledBy(StatefulSet db) = %q, want %q (a reference without a UID matches by name)", dbNames, want)
	}
	if undeclared != 0 || len(rep.Violations) != 2 {
		t.Errorf("undeclared kinds: got %d objects and violations %v, want none and two", undeclared, rep.Violations)
	}
}
