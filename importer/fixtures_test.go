package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/bundle"
)

// The fixtures below are exported from the recorded podflow bundles of real scenarios,
// laid out exactly as the other tool writes them, so an import can be compared with the
// podflow bundle of the same cluster state.

func scenarioDir(scenario string) string {
	return filepath.Join("..", "testdata", "bundles", scenario)
}

func openScenario(t testing.TB, scenario string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(scenarioDir(scenario), bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTree(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// troubleshootVersion is the version.yaml a Troubleshoot support bundle starts with.
const troubleshootVersion = `apiVersion: troubleshoot.sh/v1beta2
kind: SupportBundle
spec:
  versionNumber: v0.117.0
`

// troubleshootExport lays a podflow bundle out as Troubleshoot writes it: cluster
// resources and logs as they are, the kubelet journal from a journald host collector,
// and nothing of podflow's node evidence.
func troubleshootExport(t testing.TB, scenario string) map[string][]byte {
	t.Helper()
	b := openScenario(t, scenario)
	root := "support-bundle-2026-11-29T20_07_59/"
	files := map[string][]byte{root + bundle.VersionMarkerPath: []byte(troubleshootVersion)}
	for _, name := range b.Names() {
		data, _ := b.ReadFile(name)
		info := bundle.ParsePath(name)
		switch {
		case strings.HasPrefix(name, bundle.ClusterResources+"/") || name == bundle.ClusterVersionPath:
			files[root+name] = data
		case info.Area == "node" && info.NodeFile == bundle.NodeKubeletLog:
			files[root+path.Join(hostCollectorsDir, "journald", "kubelet.txt")] = data
		}
	}
	files[root+"analysis.json"] = []byte("[]\n")
	return files
}

// kubectlJSON re-indents JSON as kubectl's JSON printer does (four spaces).
func kubectlJSON(t testing.TB, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(data), "", "    "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// dumpLists are the per-namespace lists of `kubectl cluster-info dump`, with their
// podflow counterpart ("" for one podflow does not collect).
var dumpLists = []struct{ dump, podflow, kind string }{
	{"events", bundle.KindEvents, "EventList"},
	{"replication-controllers", "", "ReplicationControllerList"},
	{"services", bundle.KindServices, "ServiceList"},
	{"daemonsets", bundle.KindDaemonSets, "DaemonSetList"},
	{"deployments", bundle.KindDeployments, "DeploymentList"},
	{"replicasets", bundle.KindReplicaSets, "ReplicaSetList"},
	{"pods", bundle.KindPods, "PodList"},
}

// clusterInfoDumpExport writes what `kubectl cluster-info dump --output-directory` would
// have written for the scenario's namespaces, in JSON or (ext "yaml") YAML.
func clusterInfoDumpExport(t testing.TB, scenario, ext string) map[string][]byte {
	t.Helper()
	b := openScenario(t, scenario)
	files := map[string][]byte{}
	put := func(name string, data []byte) {
		data = kubectlJSON(t, data)
		if ext == "yaml" {
			y, err := yaml.JSONToYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			data = y
		}
		files[name+"."+ext] = data
	}
	nodes, err := b.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
	if err != nil {
		t.Fatal(err)
	}
	put("nodes", nodes)
	for _, ns := range scenarioNamespaces(b) {
		for _, l := range dumpLists {
			data, err := b.ReadFile(bundle.NamespacedResourcePath(l.podflow, ns))
			if l.podflow == "" || err != nil {
				data = []byte(fmt.Sprintf(`{"kind":%q,"apiVersion":"v1","metadata":{"resourceVersion":"4711"},"items":[]}`, l.kind))
			}
			put(path.Join(ns, l.dump), data)
		}
		for name, data := range dumpPodLogs(t, b, ns) {
			files[name] = data
		}
	}
	return files
}

func scenarioNamespaces(b *bundle.Bundle) []string {
	var out []string
	for _, name := range b.Names() {
		if info := bundle.ParsePath(name); info.Area == "namespaced" && info.Kind == bundle.KindPods {
			out = append(out, info.Namespace)
		}
	}
	return out
}

// dumpPodLogs writes <ns>/<pod>/logs.txt with kubectl's markers, init containers first,
// and kubectl's error line for a container whose log the API would not give.
func dumpPodLogs(t testing.TB, b *bundle.Bundle, ns string) map[string][]byte {
	t.Helper()
	data, _ := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, ns))
	var pods struct {
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct {
				InitContainers []struct{ Name string } `json:"initContainers"`
				Containers     []struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal(data, &pods); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range pods.Items {
		var buf bytes.Buffer
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			fmt.Fprintf(&buf, "==== START logs for container %s of pod %s/%s ====\n", c.Name, ns, p.Metadata.Name)
			if log, err := b.ReadFile(bundle.LogPath(ns, p.Metadata.Name, c.Name, false)); err == nil {
				buf.Write(log)
			} else {
				fmt.Fprintf(&buf, "Request log error: the server rejected our request for an unknown reason (get pods %s)\n", p.Metadata.Name)
			}
			fmt.Fprintf(&buf, "==== END logs for container %s of pod %s/%s ====\n", c.Name, ns, p.Metadata.Name)
		}
		files[path.Join(ns, p.Metadata.Name, "logs.txt")] = buf.Bytes()
	}
	return files
}
