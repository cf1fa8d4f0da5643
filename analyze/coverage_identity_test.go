package analyze_test

import (
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// A collector that may not list events or read logs in a namespace recorded so in its
// manifest: coverage says "not permitted", not that nothing happened.
func TestCoverageSaysWhatTheCollectorMayNotRead(t *testing.T) {
	manifest := `{"formatVersion": "1.0", "collectedAt": "2026-11-29T10:15:00Z", "identity": {"username": "jane", "source": "SelfSubjectReview",
		"permissions": [{"namespace": "shop", "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]},
		                {"namespace": "other", "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}]}}`
	crash := func(ns string) obj {
		return podObj(ns, ns+"-web", "n1", obj{"status": obj{"phase": "Running", "containerStatuses": []any{obj{"name": "app", "image": "registry.example/app:1",
			"restartCount": 3, "state": obj{"waiting": obj{"reason": "CrashLoopBackOff"}}, "lastState": obj{"terminated": obj{"exitCode": 1, "reason": "Error"}}}}}})
	}
	g := load(t, map[string]any{
		"podflow.json":                      manifest,
		"cluster-resources/pods/shop.json":  list(crash("shop")),
		"cluster-resources/pods/other.json": list(crash("other")),
	})
	rep := analyze.Run(g, nil, analyze.Options{Timelines: true})
	missing := map[string][]string{}
	for _, p := range rep.Pods {
		for _, c := range p.Coverage {
			if c.Stage == analyze.StageScheduling || c.Stage == analyze.StageRuntime {
				missing[p.Namespace+"/"+string(c.Stage)] = append(missing[p.Namespace+"/"+string(c.Stage)], c.Missing...)
			}
		}
	}
	if want := "events for namespace shop: no evidence: not permitted to list events in shop (as jane)"; !slices.Contains(missing["shop/scheduling"], want) {
		t.Errorf("shop scheduling coverage misses %q: %q", want, missing["shop/scheduling"])
	}
	if want := "container logs: no evidence: not permitted to get pods/log (container logs) in shop (as jane)"; !slices.Contains(missing["shop/runtime"], want) {
		t.Errorf("shop runtime coverage misses %q: %q", want, missing["shop/runtime"])
	}
	for _, m := range append(missing["other/scheduling"], missing["other/runtime"]...) {
		if m == "" || strings.Contains(m, "not permitted") {
			t.Errorf("other: the collector could read everything, yet coverage says %q", m)
		}
	}
}
