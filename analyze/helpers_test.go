package analyze_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// files builds an in-memory bundle; values that are not []byte or string are JSON-encoded.
func memBundle(t testing.TB, files map[string]any) *bundle.Bundle {
	t.Helper()
	raw := map[string][]byte{}
	for name, v := range files {
		switch d := v.(type) {
		case []byte:
			raw[name] = d
		case string:
			raw[name] = []byte(d)
		default:
			data, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			raw[name] = data
		}
	}
	b, err := bundle.New("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func load(t testing.TB, files map[string]any) *analyze.Graph {
	t.Helper()
	return analyze.Load([]*bundle.Bundle{memBundle(t, files)}, nil)
}

func list(items ...any) map[string]any {
	if items == nil {
		items = []any{}
	}
	return map[string]any{"kind": "List", "apiVersion": "v1", "items": items}
}

type obj = map[string]any

func podObj(ns, name, node string, extra obj) obj {
	p := obj{
		"metadata": obj{"name": name, "namespace": ns, "uid": "uid-" + name, "creationTimestamp": "2026-11-29T10:00:00Z"},
		"spec":     obj{"nodeName": node, "containers": []any{obj{"name": "app", "image": "registry.example/app:1"}}},
		"status":   obj{"phase": "Pending"},
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func pullFailing(ns, name, node, msg string) obj {
	return podObj(ns, name, node, obj{"status": obj{
		"phase":      "Pending",
		"conditions": []any{obj{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-29T10:00:01Z"}},
		"containerStatuses": []any{obj{"name": "app", "image": "registry.example/app:1", "imageID": "", "ready": false, "restartCount": 0,
			"state": obj{"waiting": obj{"reason": "ErrImagePull", "message": msg}}, "lastState": obj{}}},
	}})
}

func nodeObj(name, ready string) obj {
	return obj{"metadata": obj{"name": name, "uid": "uid-node-" + name},
		"status": obj{"allocatable": obj{"cpu": "2", "memory": "4Gi", "pods": "110"},
			"conditions": []any{obj{"type": "Ready", "status": ready, "reason": "NodeStatusUnknown",
				"message": "Kubelet stopped posting node status.", "lastTransitionTime": "2026-11-29T09:58:00Z"}}}}
}

func ids(fs []*analyze.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s root=%t explains=%v explainedBy=%v", f.ID, f.Root, f.Explains, f.ExplainedBy))
	}
	return out
}
