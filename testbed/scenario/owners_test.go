package scenario

import (
	"testing"

	"podflow.dev/podflow/bundle"
)

func TestOwnersCoverTheChain(t *testing.T) {
	b, err := bundle.New("test", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): []byte(`{"items":[
			{"metadata":{"name":"web-5d-x","ownerReferences":[{"kind":"ReplicaSet","name":"web-5d"}]}},
			{"metadata":{"name":"loop","ownerReferences":[{"kind":"Pod","name":"loop"}]}},
			{"metadata":{"name":"bare"}}]}`),
		bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"): []byte(`{"items":[
			{"metadata":{"name":"web-5d","ownerReferences":[{"kind":"Deployment","name":"web"}]}}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := OwnersFromBundle(b, "shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		subject, want string
		covers        bool
	}{
		{"Pod/shop/web-5d-x", "Deployment/shop/web", true},
		{"ReplicaSet/shop/web-5d", "Deployment/shop/web", true},
		{"Deployment/shop/web", "Deployment/shop/web", true},
		{"Pod/shop/bare", "Deployment/shop/web", false},
		{"Deployment/shop/web", "Pod/shop/web-5d-x", false},
		{"Pod/shop/loop", "Deployment/shop/web", false}, // a cycle ends the walk
	} {
		if got := o.Covers(tc.subject, tc.want); got != tc.covers {
			t.Errorf("Covers(%s, %s) = %t, want %t", tc.subject, tc.want, got, tc.covers)
		}
	}
	bad, err := bundle.New("test", map[string][]byte{bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"): []byte("[")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OwnersFromBundle(bad, "shop"); err == nil {
		t.Error("a corrupt ReplicaSet list was accepted")
	}
}
