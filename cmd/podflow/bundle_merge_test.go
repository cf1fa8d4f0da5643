package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

func writeMergeInput(t *testing.T, target string, files map[string]string, m *bundle.Manifest) {
	t.Helper()
	w, err := bundle.Create(target, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, d := range files {
		if err := w.WriteFile(p, []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
}

func TestBundleMergeCommand(t *testing.T) {
	dir := t.TempDir()
	cluster, nodeB, out := filepath.Join(dir, "c.tar.gz"), filepath.Join(dir, "n.tar.gz"), filepath.Join(dir, "all.tar.gz")
	writeMergeInput(t, cluster, map[string]string{bundle.NamespacedResourcePath(bundle.KindPods, "shop"): `{"items":[]}`},
		&bundle.Manifest{Type: "cluster", CollectedAt: time.Now().UTC(), Sources: []bundle.Source{{Name: "pods/shop", Status: bundle.StatusOK}}})
	writeMergeInput(t, nodeB, map[string]string{bundle.NodePath("w1", bundle.NodeKubeletLog): "x\n"},
		&bundle.Manifest{Type: "node", CollectedAt: time.Now().UTC(), Scope: bundle.Scope{Node: "w1"},
			Sources: []bundle.Source{{Name: "kubelet-journal", Status: bundle.StatusOK}}})

	s, stdout, stderr := testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", cluster, nodeB, "-o", out}, s); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if strings.TrimSpace(stdout.String()) != out {
		t.Errorf("stdout = %q", stdout)
	}
	s, stdout, _ = testStreams()
	if code := run(context.Background(), []string{"verify", out}, s); code != exitOK {
		t.Fatalf("merged bundle does not verify: %s", stdout)
	}
	b, err := bundle.Open(out, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.Type != "merged" || b.Manifest.Source("node/w1:kubelet-journal") == nil {
		t.Errorf("manifest = %+v", b.Manifest)
	}

	// A second run without --force refuses to overwrite; one input is a usage error.
	s, _, stderr = testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", cluster, nodeB, "-o", out}, s); code != exitError ||
		!strings.Contains(stderr.String(), "already exists") {
		t.Errorf("overwrite without --force: exit %d, stderr %s", code, stderr)
	}
	s, _, _ = testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", cluster}, s); code != exitUsage {
		t.Errorf("one input: exit %d, want %d", code, exitUsage)
	}
}

func TestBundleMergeConflictExits1(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	p := bundle.NodePath("w1", bundle.NodeKubeletLog)
	writeMergeInput(t, a, map[string]string{p: "one\n"}, &bundle.Manifest{Type: "node", Scope: bundle.Scope{Node: "w1"}})
	writeMergeInput(t, b, map[string]string{p: "two\n"}, &bundle.Manifest{Type: "node", Scope: bundle.Scope{Node: "w1"}})
	s, _, stderr := testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", a, b, "-o", filepath.Join(dir, "m")}, s); code != exitError {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"merge conflict", p, a, b} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not name %q", stderr, want)
		}
	}
}

// A node bundle named after a host no Node is called is merged, with a warning that
// says which node it may be and how to collect it under that name.
func TestBundleMergeWarnsOfANodeNoNodeIsNamed(t *testing.T) {
	dir := t.TempDir()
	cluster, nodeB, out := filepath.Join(dir, "c.tar.gz"), filepath.Join(dir, "n.tar.gz"), filepath.Join(dir, "all.tar.gz")
	writeMergeInput(t, cluster, map[string]string{bundle.ClusterResourcePath(bundle.KindNodes): `{"items":[{"metadata":{"name":"ip-10-0-1-5.ec2.internal"}},{"metadata":{"name":"ip-10-0-1-6.ec2.internal"}}]}`},
		&bundle.Manifest{Type: "cluster", CollectedAt: time.Now().UTC(), Sources: []bundle.Source{{Name: "nodes", Status: bundle.StatusOK}}})
	writeMergeInput(t, nodeB, map[string]string{bundle.NodePath("ip-10-0-1-5", bundle.NodeKubeletLog): "x\n"},
		&bundle.Manifest{Type: "node", CollectedAt: time.Now().UTC(), Scope: bundle.Scope{Node: "ip-10-0-1-5"},
			Sources: []bundle.Source{{Name: "kubelet-journal", Status: bundle.StatusOK}}})
	s, _, stderr := testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", cluster, nodeB, "-o", out}, s); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), `node evidence for \"ip-10-0-1-5\"`) || !strings.Contains(stderr.String(), "--node-name ip-10-0-1-5.ec2.internal") {
		t.Errorf("no warning naming the node and --node-name:\n%s", stderr)
	}
	// A node bundle whose name matches says nothing.
	out2 := filepath.Join(dir, "ok.tar.gz")
	writeMergeInput(t, filepath.Join(dir, "n2.tar.gz"), map[string]string{bundle.NodePath("ip-10-0-1-6.ec2.internal", bundle.NodeKubeletLog): "x\n"},
		&bundle.Manifest{Type: "node", CollectedAt: time.Now().UTC(), Sources: []bundle.Source{{Name: "kubelet-journal", Status: bundle.StatusOK}}})
	s, _, stderr = testStreams()
	if code := run(context.Background(), []string{"bundle", "merge", cluster, filepath.Join(dir, "n2.tar.gz"), "-o", out2}, s); code != exitOK ||
		strings.Contains(stderr.String(), "node evidence for") {
		t.Errorf("matching node: exit %d, stderr %s", code, stderr)
	}
}
