package analyze_test

import (
	"slices"
	"testing"

	"podflow.dev/podflow/analyze"
)

// The Services a selector fills and their would-be endpoints: ExternalName Services and
// Services without a selector are left out, and only ready pods not finished count.
func TestSelectorServicesAndReadyPods(t *testing.T) {
	ready := obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}}}
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(
			podObj("shop", "web-1", "n1", obj{"metadata": obj{"name": "web-1", "namespace": "shop", "uid": "u1", "labels": obj{"app": "web"}}, "status": ready}),
			podObj("shop", "web-2", "n1", obj{"metadata": obj{"name": "web-2", "namespace": "shop", "uid": "u2", "labels": obj{"app": "web"}},
				"status": obj{"phase": "Running"}}),
			podObj("shop", "web-3", "n1", obj{"metadata": obj{"name": "web-3", "namespace": "shop", "uid": "u3", "labels": obj{"app": "web"}},
				"status": obj{"phase": "Succeeded", "conditions": []any{obj{"type": "Ready", "status": "True"}}}}),
		),
		"cluster-resources/services/shop.json": list(
			obj{"metadata": obj{"name": "web", "namespace": "shop"}, "spec": obj{"selector": obj{"app": "web"}}},
			obj{"metadata": obj{"name": "manual", "namespace": "shop"}, "spec": obj{}},
			obj{"metadata": obj{"name": "ext", "namespace": "shop"}, "spec": obj{"type": "ExternalName", "externalName": "x.example", "selector": obj{"app": "web"}}},
		),
	})
	got := viewOf(t, g, []analyze.Kind{analyze.Pods, analyze.Services}, func(v *analyze.View) []string {
		var out []string
		for _, s := range v.SelectorServices() {
			out = append(out, "service "+s.Obj.Name)
			for _, p := range v.ReadyPodsSelectedBy(s.Obj) {
				out = append(out, "ready "+p.Obj.Name)
			}
		}
		return out
	})
	if want := []string{"service web", "ready web-1"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	finished := viewOf(t, g, []analyze.Kind{analyze.Pods}, func(v *analyze.View) []string {
		var out []string
		for _, p := range v.Pods() {
			if analyze.PodFinished(p) {
				out = append(out, p.Obj.Name)
			}
		}
		return out
	})
	if want := []string{"web-3"}; !slices.Equal(finished, want) {
		t.Errorf("finished = %v, want %v", finished, want)
	}
}
