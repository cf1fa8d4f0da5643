package collect

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"podflow.dev/podflow/bundle"
)

// apiServer is a small stand-in for kube-apiserver over real HTTP: it serves /version
// with a chosen clock, one namespace "shop" with one running pod on node n1, that
// pod's log, the node proxy's configz, and an empty list for every other list.
type apiServer struct {
	clock   time.Duration // added to the local clock in the Date header
	configz func(w http.ResponseWriter)
	// hang lists paths that never answer until the client gives up.
	hang map[string]bool
	// versionStatus, when set, is returned for /version instead of the version.
	versionStatus int
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Date", time.Now().Add(a.clock).UTC().Format(http.TimeFormat))
	if a.hang[r.URL.Path] {
		<-r.Context().Done()
		return
	}
	writeJSON := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v) // the client reports a broken answer itself
	}
	switch p := r.URL.Path; {
	case p == "/version":
		if a.versionStatus != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.versionStatus)
			writeJSON(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
				Code: int32(a.versionStatus), Reason: metav1.StatusReasonUnauthorized, Message: "Unauthorized"})
			return
		}
		writeJSON(map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
	case p == "/api/v1/namespaces/shop":
		writeJSON(corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "uid-ns"}})
	case p == "/api/v1/namespaces/shop/pods":
		writeJSON(corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p1", UID: "uid-p1"},
			Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
		}}})
	case p == "/api/v1/namespaces/shop/pods/p1/log":
		_, _ = w.Write([]byte("2026-01-01T00:00:00Z hello from app\n"))
	case p == "/api/v1/nodes/n1/proxy/configz":
		a.configz(w)
	default:
		writeJSON(map[string]any{"metadata": map[string]string{"resourceVersion": "9"}, "items": []any{}})
	}
}

func forbiddenConfigz(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
		Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `nodes "n1" is forbidden: User "system:serviceaccount:podflow:podflow-collector" cannot get resource "nodes/proxy"`})
}

func serveAPI(t *testing.T, a *apiServer) *Client {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c, err := NewClient(&rest.Config{Host: srv.URL}, "httptest")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCollectOverHTTP(t *testing.T) {
	a := &apiServer{clock: 2 * time.Hour, configz: forbiddenConfigz,
		hang: map[string]bool{"/apis/apps/v1/namespaces/shop/deployments": true}}
	client := serveAPI(t, a)
	opts := testOptions(t)
	opts.SourceTimeout = 500 * time.Millisecond
	res, b := collectBundle(t, client, opts)
	m := b.Manifest

	if m.Cluster.ServerVersion != "v1.37.2" || m.Cluster.Server != client.Server {
		t.Errorf("cluster = %+v", m.Cluster)
	}
	if math.Abs(m.Cluster.ClockSkewSeconds-7200) > 1 {
		t.Errorf("clock skew = %vs, want about 7200s", m.Cluster.ClockSkewSeconds)
	}
	// nodes/proxy forbidden: skipped with the reason, not failed.
	kc := sourceByName(t, m, "kubelet-config/n1")
	if kc.Status != bundle.StatusSkipped || !strings.Contains(kc.Error, "nodes/proxy is not permitted") {
		t.Errorf("kubelet-config/n1 = %+v", kc)
	}
	// A list that never answers fails on its own timeout; the rest is written.
	failed := res.Incomplete()
	if len(failed) != 1 || failed[0].Name != "deployments/shop" || !strings.Contains(failed[0].Error, "timed out after 500ms") {
		t.Errorf("failed = %+v, want deployments/shop timed out", failed)
	}
	if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, "shop"))); len(got) != 1 || got[0] != "p1" {
		t.Errorf("pods = %v", got)
	}
	if data, err := b.ReadFile(bundle.LogPath("shop", "p1", "app", false)); err != nil || !strings.Contains(string(data), "hello from app") {
		t.Errorf("log = %q (%v)", data, err)
	}
}

func TestCollectKubeletConfigOverHTTP(t *testing.T) {
	a := &apiServer{configz: func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kubeletconfig":{"enableServer":true,"maxPods":110,"evictionHard":{"memory.available":"100Mi"}}}`))
	}}
	client := serveAPI(t, a)
	_, b := collectBundle(t, client, testOptions(t))
	data, err := b.ReadFile(bundle.NodePath("n1", bundle.NodeKubeletConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: KubeletConfiguration", "apiVersion: kubelet.config.k8s.io/v1beta1", "maxPods: 110", "memory.available: 100Mi"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("kubelet-config.yaml lacks %q:\n%s", want, data)
		}
	}
	if s := sourceByName(t, b.Manifest, "kubelet-config/n1"); s.Status != bundle.StatusOK {
		t.Errorf("kubelet-config/n1 = %+v", s)
	}
}

func TestUnreachableAPIServer(t *testing.T) {
	client := serveAPI(t, &apiServer{hang: map[string]bool{"/version": true}})
	opts := testOptions(t)
	opts.RequestTimeout = 300 * time.Millisecond
	began := time.Now()
	_, err := Run(context.Background(), client, opts)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Kubernetes API server at "+client.Server) {
		t.Fatalf("Run = %v, want unreachable", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("gave up after %s, want about the request timeout", took)
	}
	if _, err := os.Stat(opts.Target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bundle was written for an unreachable server: %v", err)
	}
}

func TestRejectedCredentials(t *testing.T) {
	client := serveAPI(t, &apiServer{versionStatus: http.StatusUnauthorized})
	opts := testOptions(t)
	_, err := Run(context.Background(), client, opts)
	if err == nil || !strings.Contains(err.Error(), "rejected the credentials") {
		t.Fatalf("Run = %v, want rejected credentials", err)
	}
	if _, err := os.Stat(opts.Target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bundle was written: %v", err)
	}
}

func TestClockSkew(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		sent, received time.Duration
		date           time.Duration
		want           time.Duration
	}{
		// The header is truncated to the second: a server in step looks up to 1s behind.
		{"in step", 200 * time.Millisecond, 400 * time.Millisecond, 0, 0},
		{"server ahead", 0, 100 * time.Millisecond, 90 * time.Second, 90 * time.Second},
		{"server behind", 0, 100 * time.Millisecond, -30 * time.Second, -30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clockSkew(base.Add(tc.sent), base.Add(tc.received), base.Add(tc.date)); got != tc.want {
				t.Errorf("clockSkew = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestKubeletConfigYAML(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"keeps kind", `{"kubeletconfig":{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","cgroupDriver":"systemd"}}`,
			"cgroupDriver: systemd"},
		{"not json", `<html>`, "decode configz answer"},
		{"no kubeletconfig", `{"other":{}}`, "no kubeletconfig object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := kubeletConfigYAML([]byte(tc.in))
			got := string(out)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("kubeletConfigYAML = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDefaultTarget(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	for cluster, want := range map[string]string{
		"prod": "podflow-prod-20261129T091500Z.tar.gz",
		"arn:aws:eks:eu-west-1:1:cluster/shop-eks": "podflow-arn-aws-eks-eu-west-1-1-cluster-shop-eks-20261129T091500Z.tar.gz",
		"":      "podflow-cluster-20261129T091500Z.tar.gz",
		"../..": "podflow-cluster-20261129T091500Z.tar.gz",
	} {
		if got := DefaultTarget(cluster, at); got != want {
			t.Errorf("DefaultTarget(%q) = %q, want %q", cluster, got, want)
		}
	}
}

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/config"
	cfg := `apiVersion: v1
kind: Config
clusters:
- {name: prod, cluster: {server: "https://prod.example:6443"}}
- {name: staging, cluster: {server: "https://staging.example:6443"}}
contexts:
- {name: a, context: {cluster: prod, user: u, namespace: shop}}
- {name: b, context: {cluster: staging, user: u}}
current-context: a
users:
- {name: u, user: {token: t}}
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := LoadKubeconfig(p, "")
	if err != nil || k.Cluster != "prod" || k.Namespace != "shop" || k.Config.Host != "https://prod.example:6443" {
		t.Errorf("current context = %+v (%v)", k, err)
	}
	k, err = LoadKubeconfig(p, "b")
	if err != nil || k.Cluster != "staging" || k.Namespace != "default" {
		t.Errorf("context b = %+v (%v)", k, err)
	}
	if _, err := LoadKubeconfig(p, "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("unknown context: %v", err)
	}
	t.Setenv("KUBECONFIG", dir+"/none")
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := LoadKubeconfig("", ""); err == nil || !strings.Contains(err.Error(), "no kubeconfig found") {
		t.Errorf("no kubeconfig: %v", err)
	}
}
