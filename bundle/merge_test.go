package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// mergeInput writes a bundle with the given files and manifest and opens it.
func mergeInput(t *testing.T, name string, files map[string]string, m *Manifest) *Bundle {
	t.Helper()
	target := filepath.Join(t.TempDir(), name)
	w, err := Create(target, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		if err := w.WriteFile(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clusterInput(t *testing.T) *Bundle {
	red := Redaction{Policy: "default", Version: "1", Enabled: true}
	red.Add(LogPath("shop", "web-1", "app", false), "jwt", 2)
	return mergeInput(t, "cluster.tar.gz", map[string]string{
		NamespacedResourcePath(KindPods, "shop"): `{"kind":"PodList","items":[]}`,
		ClusterResourcePath(KindNodes):           `{"kind":"NodeList","items":[]}`,
		LogPath("shop", "web-1", "app", false):   "token=[REDACTED]\n",
		NodePath("worker-1", "shared-note.txt"):  "same bytes\n",
	}, &Manifest{
		Type: "cluster", CollectedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		Scope:     Scope{Namespaces: []string{"shop"}},
		Cluster:   Cluster{Name: "prod", Server: "https://10.0.0.1:6443", ServerVersion: "v1.37.2", ClockSkewSeconds: 1.5},
		Sources:   []Source{{Name: "pods/shop", Status: StatusOK, Files: []string{NamespacedResourcePath(KindPods, "shop")}}},
		Redaction: red,
	})
}

func nodeInput(t *testing.T, node string, at time.Time, extra map[string]string) *Bundle {
	red := Redaction{Policy: "default", Version: "1", Enabled: true}
	red.Add(NodePath(node, NodeKubeletLog), "password-in-url", 1)
	files := map[string]string{
		NodePath(node, NodeKubeletLog):    "2026-11-29T10:01:02+0000 " + node + " kubelet[1]: started\n",
		NodePath(node, NodeCRIPods):       `{"items":[]}`,
		NodePath(node, "shared-note.txt"): "same bytes\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return mergeInput(t, "node-"+node+".tar.gz", files, &Manifest{
		Type: "node", CollectedAt: at, Scope: Scope{Node: node, Since: "24h0m0s"},
		Sources: []Source{
			{Name: "kubelet-journal", Status: StatusOK, Files: []string{NodePath(node, NodeKubeletLog)}},
			{Name: "cri", Status: StatusFailed, Error: "socket missing"},
		},
		Redaction: red,
	})
}

func TestMergeClusterAndNodesVerifies(t *testing.T) {
	cluster := clusterInput(t)
	latest := time.Date(2026, 11, 29, 10, 20, 0, 0, time.UTC)
	n1 := nodeInput(t, "worker-1", latest, nil)
	n2 := nodeInput(t, "worker-2", time.Date(2026, 11, 29, 10, 5, 0, 0, time.UTC), nil)
	target := filepath.Join(t.TempDir(), "merged.tar.gz")
	if _, err := Merge(target, []*Bundle{cluster, n1, n2}, MergeOptions{PodflowVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if problems := Verify(b); len(problems) != 0 {
		t.Fatalf("merged bundle does not verify: %v", problems)
	}
	m := b.Manifest
	if m.Type != "merged" || !m.CollectedAt.Equal(latest) || m.PodflowVersion != "test" {
		t.Errorf("manifest = %+v", m)
	}
	if m.Cluster != cluster.Manifest.Cluster || !slices.Equal(m.Scope.Namespaces, []string{"shop"}) || m.Scope.Node != "" {
		t.Errorf("scope/cluster not taken from the cluster bundle: %+v %+v", m.Scope, m.Cluster)
	}
	var names []string
	for _, s := range m.Sources {
		names = append(names, s.Name)
	}
	want := []string{"pods/shop", "node/worker-1:kubelet-journal", "node/worker-1:cri", "node/worker-2:kubelet-journal", "node/worker-2:cri"}
	if !slices.Equal(names, want) {
		t.Errorf("sources = %q, want %q", names, want)
	}
	if src := m.Source("node/worker-2:cri"); src == nil || src.Status != StatusFailed || src.Error != "socket missing" {
		t.Errorf("node source status lost: %+v", src)
	}
	wantFiles := []string{
		"cluster-resources/nodes.json", "cluster-resources/pods/logs/shop/web-1/app.log", "cluster-resources/pods/shop.json",
		"nodes/worker-1/crictl/pods.json", "nodes/worker-1/kubelet.log", "nodes/worker-1/shared-note.txt",
		"nodes/worker-2/crictl/pods.json", "nodes/worker-2/kubelet.log", "nodes/worker-2/shared-note.txt",
		"podflow.json", "version.yaml",
	}
	if !slices.Equal(b.Names(), wantFiles) {
		t.Errorf("files = %q\nwant %q", b.Names(), wantFiles)
	}
	r := m.Redaction
	if r.Total != 4 || r.ByRule["jwt"] != 2 || r.ByRule["password-in-url"] != 2 || r.ByFile["nodes/worker-2/kubelet.log"]["password-in-url"] != 1 ||
		r.Policy != "default" || r.Version != "1" || !r.Enabled {
		t.Errorf("redaction = %+v", r)
	}
}

func TestMergeConflictNamesPathAndInputs(t *testing.T) {
	cluster := clusterInput(t)
	n1 := nodeInput(t, "worker-1", time.Now(), map[string]string{
		LogPath("shop", "web-1", "app", false): "a different log\n",
	})
	target := filepath.Join(t.TempDir(), "merged.tar.gz")
	_, err := Merge(target, []*Bundle{cluster, n1}, MergeOptions{})
	var ce *MergeConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a MergeConflictError", err)
	}
	if ce.Path != "cluster-resources/pods/logs/shop/web-1/app.log" || ce.First != cluster.Source || ce.Second != n1.Source {
		t.Errorf("conflict = %+v", ce)
	}
	for _, want := range []string{ce.Path, cluster.Source, n1.Source} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed merge left %s behind", target)
	}
}

func TestMergeRefusesDamagedInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "node-dir")
	w, err := Create(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(NodePath("worker-1", NodeKubeletLog), []byte("original\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Manifest{Type: "node", Scope: Scope{Node: "worker-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nodes/worker-1/kubelet.log"), []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged, err := Open(dir, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Merge(filepath.Join(t.TempDir(), "m.tar.gz"), []*Bundle{clusterInput(t), damaged}, MergeOptions{})
	if err == nil || !strings.Contains(err.Error(), "does not verify") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want the damaged input named", err)
	}
}

func TestMergeNeedsTwoInputs(t *testing.T) {
	if _, err := Merge(filepath.Join(t.TempDir(), "m.tar.gz"), []*Bundle{clusterInput(t)}, MergeOptions{}); err == nil {
		t.Fatal("merge of one bundle accepted")
	}
}

func TestMergeOfMergedKeepsOrigins(t *testing.T) {
	first := filepath.Join(t.TempDir(), "first.tar.gz")
	if _, err := Merge(first, []*Bundle{clusterInput(t), nodeInput(t, "worker-1", time.Now(), nil)}, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	fb, err := Open(first, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "second")
	m, err := Merge(second, []*Bundle{fb, nodeInput(t, "worker-2", time.Now(), nil)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Source("node/worker-1:kubelet-journal") == nil || m.Source("node/worker-2:kubelet-journal") == nil ||
		m.Source("node/worker-1:node/worker-1:kubelet-journal") != nil || m.Cluster.Name != "prod" {
		t.Errorf("sources = %+v cluster = %+v", m.Sources, m.Cluster)
	}
}

func TestMergeForeignBundle(t *testing.T) {
	foreign, err := New("support-bundle", map[string][]byte{
		"cluster-resources/pods/kube-system.json": []byte(`{"items":[]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "m.tar.gz")
	m, err := Merge(target, []*Bundle{clusterInput(t), foreign}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := m.Source("import:support-bundle")
	if src == nil || !slices.Equal(src.Files, []string{"cluster-resources/pods/kube-system.json"}) || m.Redaction.Enabled {
		t.Fatalf("sources = %+v, redaction = %+v", m.Sources, m.Redaction)
	}
}
