package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree writes files (destination: source) under a new directory.
func copyTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for dst, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(dst))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAnalyzeMustGatherWithSosreport analyzes a must-gather and a node's sosreport
// together, as a support engineer gets them: both are detected, the diagnosis is the
// recorded one, and the evidence cites both tools' own files.
func TestAnalyzeMustGatherWithSosreport(t *testing.T) {
	rec := filepath.Join("..", "..", "testdata", "bundles", "crash-exit-1")
	res := filepath.Join(rec, "cluster-resources")
	node := filepath.Join(rec, "nodes", "podflow-node")
	mg := copyTree(t, map[string]string{
		"must-gather.local.1/image/timestamp":                                      filepath.Join(rec, "version.yaml"),
		"must-gather.local.1/image/cluster-scoped-resources/core/nodes/nodes.yaml": filepath.Join(res, "nodes.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/core/pods.yaml":         filepath.Join(res, "pods", "crash-exit-1.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/core/events.yaml":       filepath.Join(res, "events", "crash-exit-1.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/apps/replicasets.yaml":  filepath.Join(res, "replicasets", "crash-exit-1.json"),
		"must-gather.local.1/image/namespaces/crash-exit-1/apps/deployments.yaml":  filepath.Join(res, "deployments", "crash-exit-1.json"),
		"must-gather.local.1/image/host_service_logs/masters/kubelet_service.log":  filepath.Join(node, "kubelet.log"),
	})
	sosFiles := map[string]string{
		"sosreport-podflow-node-1/sos_commands/kubernetes/journalctl_--no-pager_--unit_kubelet": filepath.Join(node, "kubelet.log"),
		"sosreport-podflow-node-1/var/lib/kubelet/config.yaml":                                  filepath.Join(node, "kubelet-config.yaml"),
	}
	inspects, _ := filepath.Glob(filepath.Join(node, "crictl", "inspect", "*.json"))
	for _, p := range inspects {
		sosFiles["sosreport-podflow-node-1/sos_commands/crio/containers/crictl_inspect_"+strings.TrimSuffix(filepath.Base(p), ".json")] = p
	}
	sos := copyTree(t, sosFiles)
	for _, p := range []string{"sos_commands/host/hostname", "etc/hostname"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sos, "sosreport-podflow-node-1", p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sos, "sosreport-podflow-node-1", p), []byte("podflow-node\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runPodflow(t, "analyze", mg, sos, "-o", "json", "--fail-on", "none")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Findings []struct {
			Rule     string
			Root     bool
			Evidence []struct{ Path string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	root := false
	for _, f := range rep.Findings {
		root = root || (f.Root && f.Rule == "runtime-crash-exit")
		for _, e := range f.Evidence {
			if strings.HasPrefix(e.Path, "cluster-resources/") || strings.HasPrefix(e.Path, "nodes/") {
				t.Errorf("%s cites produced path %s", f.Rule, e.Path)
			}
		}
	}
	if !root {
		t.Errorf("no root runtime-crash-exit finding in\n%s", stdout)
	}
}
