package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// fakeAPI serves what a collection of namespace "shop" reads: one running pod whose
// log holds a password, empty lists for everything else, and optionally a forbidden
// deployments list.
func fakeAPI(t *testing.T, forbidDeployments bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		switch p := r.URL.Path; {
		case p == "/version":
			_ = enc.Encode(map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
		case p == "/api/v1/namespaces/shop":
			_ = enc.Encode(corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
		case p == "/apis/apps/v1/namespaces/shop/deployments" && forbidDeployments:
			w.WriteHeader(http.StatusForbidden)
			_ = enc.Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: 403,
				Reason: metav1.StatusReasonForbidden, Message: `deployments.apps is forbidden: User "u" cannot list resource "deployments"`})
		case p == "/api/v1/namespaces/shop/pods":
			_ = enc.Encode(corev1.PodList{Items: []corev1.Pod{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
				Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://1",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
			}}})
		case p == "/api/v1/namespaces/shop/pods/web-1/log":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("2026-11-29T10:00:00Z connecting with password=hunter2\n"))
		default:
			_ = enc.Encode(map[string]any{"metadata": map[string]any{}, "items": []any{}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeKubeconfig(t testing.TB, server string) string {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: ` + server + `
contexts:
- name: ctx
  context:
    cluster: testbed
    user: collector
    namespace: shop
current-context: ctx
users:
- name: collector
  user:
    token: not-a-real-token
`
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCollectWritesPartialBundleAndExits4(t *testing.T) {
	kubeconfig := writeKubeconfig(t, fakeAPI(t, true))
	target := filepath.Join(t.TempDir(), "shop.tar.gz")
	s, out, errOut := testStreams()
	code := run(context.Background(), []string{"collect", "--kubeconfig", kubeconfig, "-o", target}, s)
	if code != exitPartial {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitPartial, errOut)
	}
	if strings.TrimSpace(out.String()) != target {
		t.Errorf("stdout = %q, want the bundle path", out)
	}
	if !strings.Contains(errOut.String(), "deployments/shop") || !strings.Contains(errOut.String(), "forbidden") {
		t.Errorf("stderr does not name the failed source:\n%s", errOut)
	}
	b, err := bundle.Open(target, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p := bundle.Verify(b); len(p) != 0 {
		t.Fatalf("bundle does not verify: %v", p)
	}
	m := b.Manifest
	if !slices.Equal(m.Scope.Namespaces, []string{"shop"}) || m.Cluster.Name != "testbed" || m.PodflowVersion != version {
		t.Errorf("manifest scope %+v cluster %+v version %q", m.Scope, m.Cluster, m.PodflowVersion)
	}
	if s := m.Source("deployments/shop"); s == nil || s.Status != bundle.StatusFailed {
		t.Errorf("deployments/shop = %+v", s)
	}
	log, err := b.ReadFile(bundle.LogPath("shop", "web-1", "app", false))
	if err != nil || strings.Contains(string(log), "hunter2") {
		t.Errorf("log = %q (%v): the default redaction policy must mask it", log, err)
	}
	if !m.Redaction.Enabled || m.Redaction.Total == 0 {
		t.Errorf("redaction = %+v", m.Redaction)
	}
}

func TestCollectDefaultOutputName(t *testing.T) {
	kubeconfig := writeKubeconfig(t, fakeAPI(t, false))
	dir := t.TempDir()
	t.Chdir(dir)
	s, out, errOut := testStreams()
	_, g := newRootCmd(s)
	g.logger.SetOutput(errOut)
	o := &collectOptions{globalOptions: g, kubeconfig: kubeconfig, logLines: 10, logBytes: 1 << 10,
		requestTimeout: 5 * time.Second, sourceTimeout: 5 * time.Second, concurrency: 2, qps: 50, burst: 100,
		now: func() time.Time { return time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC) }}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if err := runCollect(context.Background(), o); err != nil {
		t.Fatalf("collect: %v\n%s", err, errOut)
	}
	want := "podflow-testbed-20261129T101500Z.tar.gz"
	if strings.TrimSpace(out.String()) != want {
		t.Errorf("stdout = %q, want %s", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
		t.Error(err)
	}
	if errOut.Len() != 0 {
		t.Errorf("a clean collection to a pipe should print nothing on stderr, got:\n%s", errOut)
	}
}

func TestCollectUnreachableWritesNothing(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	server := srv.URL
	srv.Close() // nothing listens there any more
	kubeconfig := writeKubeconfig(t, server)
	dir := t.TempDir()
	s, _, errOut := testStreams()
	code := run(context.Background(), []string{"collect", "--kubeconfig", kubeconfig, "--request-timeout", "2s",
		"-o", filepath.Join(dir, "out.tar.gz")}, s)
	if code != exitError || !strings.Contains(errOut.String(), "cannot reach the Kubernetes API server at "+server) {
		t.Fatalf("exit %d, stderr %q: want 1 and a clear message", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

func TestCollectInterruptedExits1(t *testing.T) {
	kubeconfig := writeKubeconfig(t, fakeAPI(t, false))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _, errOut := testStreams()
	code := run(ctx, []string{"collect", "--kubeconfig", kubeconfig, "-o", filepath.Join(dir, "out.tar.gz")}, s)
	if code != exitError || !strings.Contains(errOut.String(), "collection interrupted") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

func TestCollectRBAC(t *testing.T) {
	s, out, errOut := testStreams()
	if code := run(context.Background(), []string{"collect", "rbac", "-n", "ops"}, s); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind: ClusterRole\n", "kind: ClusterRoleBinding\n", "namespace: ops\n", "pods/log"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("collect rbac output lacks %q", want)
		}
	}
	// The deprecated flag prints the same, and says on stderr that it is deprecated.
	s2, out2, errOut2 := testStreams()
	if code := run(context.Background(), []string{"collect", "--print-rbac", "--rbac-namespace", "ops"}, s2); code != exitOK {
		t.Fatalf("--print-rbac: exit %d: %s", code, errOut2)
	}
	if out2.String() != out.String() {
		t.Errorf("--print-rbac prints something else than collect rbac:\n%s", out2)
	}
	if !strings.Contains(errOut2.String(), "deprecated") {
		t.Errorf("--print-rbac: no deprecation warning on stderr: %q", errOut2)
	}
}

func TestCollectUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"collect", "-A", "-n", "shop"},
		{"collect", "--pod", "shop/"},
		{"collect", "--pod", "shop/web", "-n", "other"},
		{"collect", "--pod", "shop/web", "-l", "app=web"},
		{"collect", "--log-bytes", "0"},
		{"collect", "--since", "-1h"},
		{"collect", "--print-rbac", "--rbac-namespace", "Not_Valid"},
		{"collect", "rbac", "-n", "Not_Valid"},
		{"collect", "rbac", "extra-arg"},
		{"collect", "--no-redact"},
		{"collect", "extra-arg"},
	} {
		s, _, errOut := testStreams()
		if code := run(context.Background(), args, s); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut)
		}
	}
}

func TestCollectHasNodeSubcommand(t *testing.T) {
	root, _ := newRootCmd(streams{})
	cmd, _, err := root.Find([]string{"collect", "node"})
	if err != nil || cmd.Name() != "node" || cmd.Parent().Name() != "collect" {
		t.Fatalf("collect node = %v, %v", cmd, err)
	}
}

// TestArgumentErrorsAreUsage: cobra's argument and flag errors exit with the usage
// code, by type, at every level of the command tree.
func TestArgumentErrorsAreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"bundle", "no-such-command"},
		{"collect", "no-such-command"},
		{"version", "extra"},
		{"verify"},
		{"analyze", "--no-such-flag", "x"},
	} {
		s, _, errOut := testStreams()
		if code := run(context.Background(), args, s); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut)
		}
	}
	s, out, _ := testStreams()
	if code := run(context.Background(), []string{"bundle"}, s); code != exitOK || !strings.Contains(out.String(), "merge") {
		t.Errorf("bundle alone: exit %d, want its help listing merge:\n%s", code, out)
	}
}
