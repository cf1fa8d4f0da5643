package analyze_test

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// A container refused at config time reads its status message, or the latest kubelet
// "Error: " event when the status has none; a container in another state is no refusal.
func TestConfigError(t *testing.T) {
	waiting := func(name, msg string) obj {
		return podObj("shop", name, "n1", obj{"status": obj{"phase": "Pending", "containerStatuses": []any{
			obj{"name": "app", "state": obj{"waiting": obj{"reason": "CreateContainerConfigError", "message": msg}}}}}})
	}
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(waiting("web", `secret "db" not found`), waiting("api", ""), podObj("shop", "ok", "n1", nil)),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "api", "spec.containers{app}", "Failed", `Error: configmap "cfg" not found`, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "api", "spec.containers{app}", "Failed", `Failed to pull image "x"`, "2026-11-29T10:00:06Z"),
		),
	})
	got := viewOf(t, g, allKinds, func(v *analyze.View) map[string]string {
		out := map[string]string{}
		for _, p := range v.Pods() {
			for _, c := range analyze.Containers(p) {
				if msg, e, ok := v.ConfigError(p, c); ok {
					out[p.Obj.Name] = msg
					if (e != nil) != (p.Obj.Name == "api") {
						t.Errorf("%s: event %v", p.Obj.Name, e)
					}
				}
			}
		}
		return out
	})
	if len(got) != 2 || got["web"] != `secret "db" not found` || got["api"] != `Error: configmap "cfg" not found` {
		t.Errorf("config errors = %q", got)
	}
}
