package rules

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// When two rules claim one pod, the earliest broken stage is the root cause and the other
// finding is listed as its consequence. Each case starts from a real recording of
// testdata/bundles/ and, where one failure was not enough, adds a second one the way the
// cluster would show it (a node that stopped reporting, a Service in front of the pods).
func TestEarliestStageWinsOnRealRecordings(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		patch    func(t *testing.T, files map[string][]byte)
		pod      string // namespace/name prefix of the pod whose root is checked; "" checks the root rule's finding
		root     string
		explains []string // rules the root explains
	}{{
		name:     "image pull failure on a NotReady node",
		scenario: "image-pull-dns",
		patch:    nodeStoppedReporting("podflow-node"),
		pod:      "image-pull-dns/app",
		root:     "node-not-ready",
		explains: []string{"image-pull-dns"},
	}, {
		name:     "sandbox failure on a NotReady node",
		scenario: "runtimeclass-missing",
		patch:    nodeStoppedReporting("podflow-node"),
		pod:      "runtimeclass-missing/sandboxed",
		root:     "node-not-ready",
		explains: []string{"sandbox-create-failed"},
	}, {
		name:     "unschedulable pods behind a Service",
		scenario: "insufficient-cpu",
		patch:    serviceFor("insufficient-cpu", "api", map[string]string{"app": "api"}),
		pod:      "insufficient-cpu/api-",
		root:     "scheduling-insufficient-resources",
		explains: []string{"service-no-ready-endpoints"},
	}, {
		name:     "missing Secret key behind a Service",
		scenario: "secret-key-missing",
		patch:    serviceFor("secret-key-missing", "app", map[string]string{"app": "app"}),
		pod:      "secret-key-missing/app",
		root:     "config-secret-key-missing",
		explains: []string{"service-no-ready-endpoints"},
	}, {
		name:     "quota refusing pods stalls a rollout",
		scenario: "quota-exceeded",
		patch:    progressDeadlineExceeded("quota-exceeded", "web"),
		pod:      "", // the refused pods do not exist: the findings share the Deployment
		root:     "admission-quota-exceeded",
		explains: []string{"controller-progress-deadline-exceeded"},
	}, {
		name:     "failing readiness probe stalls a rollout and empties its Service",
		scenario: "progress-deadline",
		pod:      "progress-deadline/api-",
		root:     "probe-readiness-failing",
		explains: []string{"controller-progress-deadline-exceeded"},
	}, {
		name:     "crashing pods exhaust a Job's backoff limit",
		scenario: "job-backoff-limit",
		pod:      "job-backoff-limit/migrate-",
		root:     "runtime-crash-exit",
		explains: []string{"controller-job-backoff-limit"},
	}, {
		name:     "image pull failure stops a rolling update half way",
		scenario: "rollout-stuck",
		pod:      "rollout-stuck/web-",
		root:     "image-pull-dns",
		explains: []string{"controller-rollout-stuck"},
	}, {
		name:     "failing readiness probe halts a StatefulSet and empties its Service",
		scenario: "statefulset-stuck",
		pod:      "statefulset-stuck/db-0",
		root:     "probe-readiness-failing",
		explains: []string{"controller-statefulset-stuck", "service-no-ready-endpoints"},
	}, {
		name:     "failing readiness probe empties a Service",
		scenario: "readiness-failing",
		pod:      "readiness-failing/web-",
		root:     "probe-readiness-failing",
		explains: []string{"service-no-ready-endpoints"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := readRecording(t, c.scenario)
			if c.patch != nil {
				c.patch(t, files)
			}
			b, err := bundle.New(c.scenario, files)
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), All(), analyze.Options{})
			byID := map[string]*analyze.Finding{}
			for _, f := range rep.Findings {
				byID[f.ID] = f
			}
			var root *analyze.Finding
			for _, p := range rep.Pods {
				if c.pod != "" && strings.HasPrefix(p.Namespace+"/"+p.Name, c.pod) {
					root = byID[p.RootCause]
					break
				}
			}
			for _, f := range rep.Findings {
				if c.pod == "" && f.Rule == c.root {
					root = f
				}
			}
			if root == nil {
				t.Fatalf("no root cause for a pod %s*; findings: %v", c.pod, ruleIDs(rep.Findings))
			}
			if root.Rule != c.root || !root.Root {
				t.Fatalf("root cause of %s* = %s (root=%v), want %s; findings: %v", c.pod, root.Rule, root.Root, c.root, ruleIDs(rep.Findings))
			}
			var explained []string
			for _, id := range root.Explains {
				f := byID[id]
				explained = append(explained, f.Rule)
				if f.Root && len(f.Pods()) == 0 {
					t.Errorf("%s is explained by %s but still marked root", f.ID, root.ID)
				}
			}
			sort.Strings(explained)
			if !reflect.DeepEqual(explained, c.explains) {
				t.Errorf("%s explains %v, want %v", root.ID, explained, c.explains)
			}
		})
	}
}

func ruleIDs(fs []*analyze.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// readRecording reads a recorded scenario bundle directory into memory.
func readRecording(t *testing.T, scenario string) map[string][]byte {
	t.Helper()
	root := filepath.Join("..", "testdata", "bundles", scenario)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// editList decodes a List file of the bundle, lets edit change it, and writes it back.
func editList(t *testing.T, files map[string][]byte, name string, edit func(items []any) []any) {
	t.Helper()
	doc := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": []any{}}
	if data, ok := files[name]; ok {
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	items, _ := doc["items"].([]any)
	doc["items"] = edit(items)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files[name] = append(data, '\n')
}

// nodeStoppedReporting turns a node's conditions into what the node lifecycle controller
// writes once the kubelet stops posting status (nodeutil.MarkPodsNotReady's caller,
// pkg/controller/nodelifecycle: reason NodeStatusUnknown).
func nodeStoppedReporting(node string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		editList(t, files, "cluster-resources/nodes.json", func(items []any) []any {
			found := false
			for _, it := range items {
				n := it.(map[string]any)
				if n["metadata"].(map[string]any)["name"] != node {
					continue
				}
				found = true
				status := n["status"].(map[string]any)
				for _, c := range status["conditions"].([]any) {
					cond := c.(map[string]any)
					cond["status"] = "Unknown"
					cond["reason"] = "NodeStatusUnknown"
					cond["message"] = "Kubelet stopped posting node status."
				}
			}
			if !found {
				t.Fatalf("no node %s in the recording", node)
			}
			return items
		})
	}
}

// serviceFor adds a ClusterIP Service selecting the scenario's pods.
func serviceFor(ns, name string, selector map[string]string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		editList(t, files, "cluster-resources/services/"+ns+".json", func(items []any) []any {
			return append(items, map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": name, "namespace": ns, "creationTimestamp": "2026-01-01T00:00:00Z"},
				"spec": map[string]any{"selector": selector, "type": "ClusterIP",
					"ports": []any{map[string]any{"port": 80, "targetPort": 8080, "protocol": "TCP"}}},
			})
		})
	}
}

// progressDeadlineExceeded sets a Deployment's Progressing condition as the deployment
// controller does when no progress happened in time (pkg/controller/deployment/progress.go).
func progressDeadlineExceeded(ns, name string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		editList(t, files, "cluster-resources/deployments/"+ns+".json", func(items []any) []any {
			for _, it := range items {
				d := it.(map[string]any)
				if d["metadata"].(map[string]any)["name"] != name {
					continue
				}
				status := d["status"].(map[string]any)
				conds, _ := status["conditions"].([]any)
				var kept []any
				for _, c := range conds {
					if c.(map[string]any)["type"] != "Progressing" {
						kept = append(kept, c)
					}
				}
				status["conditions"] = append(kept, map[string]any{
					"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
					"message":            "ReplicaSet \"" + name + "\" has timed out progressing.",
					"lastUpdateTime":     "2026-01-01T00:10:00Z",
					"lastTransitionTime": "2026-01-01T00:10:00Z",
				})
				return items
			}
			t.Fatalf("no deployment %s/%s in the recording", ns, name)
			return items
		})
	}
}
