package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
)

const token = "test-token"

var demo = filepath.Join("..", "testdata", "bundles", "demo")

// start serves bundles over HTTP and returns a clientset with the right token and the
// server's URL.
func start(t *testing.T, bundles ...*bundle.Bundle) (*kubernetes.Clientset, string) {
	t.Helper()
	return startWith(t, Options{Token: token}, bundles...)
}

func startWith(t *testing.T, opts Options, bundles ...*bundle.Bundle) (*kubernetes.Clientset, string) {
	t.Helper()
	srv, err := New(bundles, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	srv.SetAddress(strings.TrimPrefix(hs.URL, "http://"))
	return clientFor(t, hs.URL, token), hs.URL
}

func clientFor(t *testing.T, url, tok string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, BearerToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func openDemo(t *testing.T) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(demo, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fileItems is the items of a list file of the demo bundle, as the bundle holds them.
func fileItems(t *testing.T, b *bundle.Bundle, path string) []map[string]any {
	t.Helper()
	data, err := b.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l struct{ Items []map[string]any }
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func names(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func TestListAndGet(t *testing.T) {
	b := openDemo(t)
	cs, _ := start(t, b)
	ctx := context.Background()

	var want []string
	for _, name := range b.Names() {
		if info := bundle.ParsePath(name); info.Area == "namespaced" && info.Kind == bundle.KindPods {
			for _, it := range fileItems(t, b, name) {
				meta := it["metadata"].(map[string]any)
				want = append(want, meta["namespace"].(string)+"/"+meta["name"].(string))
			}
		}
	}
	slices.Sort(want)
	all, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(all.Items); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("pods across namespaces = %v, want %v", got, want)
	}

	inNS, err := cs.CoreV1().Pods("crash-exit-1").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(inNS.Items); !slices.Equal(got, []string{"crash-exit-1/worker-89b5c5d5-chzvn"}) {
		t.Errorf("pods in crash-exit-1 = %v", got)
	}
	pod, err := cs.CoreV1().Pods("crash-exit-1").Get(ctx, "worker-89b5c5d5-chzvn", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.UID != "7723723c-7166-410d-ba04-463238bd9e5e" || pod.Spec.NodeName != "podflow-node" || len(pod.Status.ContainerStatuses) != 1 {
		t.Errorf("pod decoded as %s on %q with %d statuses", pod.UID, pod.Spec.NodeName, len(pod.Status.ContainerStatuses))
	}
	if _, err := cs.CoreV1().Pods("oom-killed").Get(ctx, "worker-89b5c5d5-chzvn", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a pod of another namespace: %v, want NotFound", err)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, "podflow-node", metav1.GetOptions{})
	if err != nil || node.Name != "podflow-node" {
		t.Fatalf("get node: %v", err)
	}
	deps, err := cs.AppsV1().Deployments("quota-exceeded").List(ctx, metav1.ListOptions{})
	if err != nil || len(deps.Items) == 0 {
		t.Fatalf("deployments: %v (%d)", err, len(deps.Items))
	}
	if deps.Items[0].Kind != "" && deps.Items[0].Kind != "Deployment" {
		t.Errorf("deployment kind %q", deps.Items[0].Kind)
	}
	// Chunked as kubectl asks for them: every pod once, in order.
	var chunked []string
	opts := metav1.ListOptions{Limit: 2}
	for {
		page, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		chunked = append(chunked, names(page.Items)...)
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if !slices.Equal(chunked, want) {
		t.Errorf("chunked list = %v, want %v", chunked, want)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1, Continue: "bm90LWEtbnVtYmVy"}); !apierrors.IsBadRequest(err) {
		t.Errorf("forged continue token: %v, want BadRequest", err)
	}
}

func TestSelectors(t *testing.T) {
	cs, _ := start(t, openDemo(t))
	ctx := context.Background()
	byLabel, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app=worker"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(byLabel.Items); !slices.Equal(got, []string{"crash-exit-1/worker-89b5c5d5-chzvn"}) {
		t.Errorf("app=worker = %v", got)
	}
	notWorker, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app notin (worker)"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(notWorker.Items), "crash-exit-1/worker-89b5c5d5-chzvn") || len(notWorker.Items) == 0 {
		t.Errorf("app notin (worker) = %v", names(notWorker.Items))
	}
	onNode, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=podflow-node"})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	scheduled := 0
	for _, p := range all.Items {
		if p.Spec.NodeName == "podflow-node" {
			scheduled++
		}
	}
	if len(onNode.Items) != scheduled || scheduled == 0 {
		t.Errorf("spec.nodeName=podflow-node: %d pods, want %d", len(onNode.Items), scheduled)
	}
	pending, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Running,metadata.namespace=quota-exceeded"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending.Items {
		if p.Status.Phase == corev1.PodRunning || p.Namespace != "quota-exceeded" {
			t.Errorf("status.phase!=Running in quota-exceeded returned %s (%s)", p.Name, p.Status.Phase)
		}
	}

	// The selector kubectl describe pod sends for the pod's events.
	pod, err := cs.CoreV1().Pods("crash-exit-1").Get(ctx, "worker-89b5c5d5-chzvn", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := "involvedObject.name=worker-89b5c5d5-chzvn,involvedObject.namespace=crash-exit-1,involvedObject.kind=Pod,involvedObject.uid=" + string(pod.UID)
	events, err := cs.CoreV1().Events("crash-exit-1").List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	allEvents, _ := cs.CoreV1().Events("crash-exit-1").List(ctx, metav1.ListOptions{})
	want := 0
	for _, e := range allEvents.Items {
		if e.InvolvedObject.Name == pod.Name && e.InvolvedObject.Kind == "Pod" {
			want++
		}
	}
	if len(events.Items) != want || want == 0 || want == len(allEvents.Items) {
		t.Errorf("events of the pod: %d, want %d of %d", len(events.Items), want, len(allEvents.Items))
	}
	for _, bad := range []metav1.ListOptions{{FieldSelector: "spec.containers=x"}, {LabelSelector: "a in (b"}, {FieldSelector: "a==b==c"}} {
		if _, err := cs.CoreV1().Pods("").List(ctx, bad); !apierrors.IsBadRequest(err) {
			t.Errorf("%+v: %v, want BadRequest", bad, err)
		}
	}
}

func TestLogs(t *testing.T) {
	cs, _ := start(t, openDemo(t))
	ctx := context.Background()
	pods := cs.CoreV1().Pods("crash-exit-1")
	const pod = "worker-89b5c5d5-chzvn"
	current, err := pods.GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(current), "worker 2.4.1 starting\n") || !strings.Contains(string(current), "connection refused") {
		t.Errorf("current log:\n%s", current)
	}
	stamped, err := pods.GetLogs(pod, &corev1.PodLogOptions{Container: "worker", Timestamps: true, TailLines: ptr(int64(1))}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(stamped)), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "2026-11-29T20:25:26.") {
		t.Errorf("last line with its timestamp: %q", stamped)
	}
	previous, err := pods.GetLogs(pod, &corev1.PodLogOptions{Previous: true}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(previous), "unable to retrieve container logs") {
		t.Errorf("previous log: %q", previous)
	}
	limited, err := pods.GetLogs(pod, &corev1.PodLogOptions{LimitBytes: ptr(int64(6))}).DoRaw(ctx)
	if err != nil || string(limited) != "worker" {
		t.Errorf("limitBytes 6: %q, %v", limited, err)
	}
	if _, err := cs.CoreV1().Pods("quota-exceeded").GetLogs("web-699768d496-jvvlr", &corev1.PodLogOptions{Previous: true}).DoRaw(ctx); !apierrors.IsBadRequest(err) {
		t.Errorf("previous log the bundle lacks: %v, want BadRequest", err)
	}
	for _, c := range []string{"../../../../podflow.json", "worker/../worker", "nope"} {
		if _, err := pods.GetLogs(pod, &corev1.PodLogOptions{Container: c}).DoRaw(ctx); !apierrors.IsBadRequest(err) {
			t.Errorf("container %q: %v, want BadRequest", c, err)
		}
	}
	if _, err := pods.GetLogs("nope", &corev1.PodLogOptions{}).DoRaw(ctx); !apierrors.IsNotFound(err) {
		t.Errorf("log of a pod the bundle lacks: %v, want NotFound", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestWritesAndWrongTokenRefused(t *testing.T) {
	cs, url := start(t, openDemo(t))
	ctx := context.Background()
	err := cs.CoreV1().Pods("crash-exit-1").Delete(ctx, "worker-89b5c5d5-chzvn", metav1.DeleteOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("delete: %v, want MethodNotAllowed", err)
	}
	_, err = cs.CoreV1().ConfigMaps("crash-exit-1").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: %v, want MethodNotAllowed", err)
	}
	_, err = cs.CoreV1().Nodes().Patch(ctx, "podflow-node", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("patch: %v, want MethodNotAllowed", err)
	}
	// The pod is still there: nothing was written.
	if _, err := cs.CoreV1().Pods("crash-exit-1").Get(ctx, "worker-89b5c5d5-chzvn", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	for _, tok := range []string{"wrong", token + "x", ""} {
		if _, err := clientFor(t, url, tok).CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("token %q: %v, want Unauthorized", tok, err)
		}
	}
	// A write with a wrong token is refused as unauthorized, before anything else.
	err = clientFor(t, url, "wrong").CoreV1().Pods("crash-exit-1").Delete(ctx, "worker-89b5c5d5-chzvn", metav1.DeleteOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("delete with a wrong token: %v, want Unauthorized", err)
	}
}

func TestDiscoveryAndVersion(t *testing.T) {
	cs, _ := start(t, openDemo(t))
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.37.2" {
		t.Fatalf("version %v: %v", v, err)
	}
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]metav1.APIResource{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			got[l.GroupVersion+" "+r.Name] = r
		}
	}
	for _, want := range []string{"v1 pods", "v1 nodes", "v1 events", "v1 namespaces", "apps/v1 deployments", "apps/v1 replicasets",
		"batch/v1 jobs", "storage.k8s.io/v1 storageclasses", "coordination.k8s.io/v1 leases"} {
		r, ok := got[want]
		if !ok {
			t.Errorf("discovery lacks %s", want)
			continue
		}
		if slices.Contains(r.Verbs, "delete") || !slices.Contains(r.Verbs, "list") {
			t.Errorf("%s verbs %v", want, r.Verbs)
		}
	}
	if r := got["v1 pods"]; !r.Namespaced || !slices.Contains(r.ShortNames, "po") || r.Kind != "Pod" {
		t.Errorf("pods discovered as %+v", r)
	}
	if r := got["v1 nodes"]; r.Namespaced {
		t.Error("nodes discovered as namespaced")
	}
}

// get fetches a URL of the server with the token and an Accept header.
func get(t *testing.T, url, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// kubectlTable is the Accept header kubectl get sends.
const kubectlTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

func TestTable(t *testing.T) {
	// The pod was created at 20:25:01.
	_, url := startWith(t, Options{Token: token, Now: time.Date(2026, 11, 29, 20, 26, 31, 0, time.UTC)}, openDemo(t))
	code, body := get(t, url+"/api/v1/namespaces/crash-exit-1/pods", kubectlTable)
	if code != http.StatusOK {
		t.Fatalf("%d: %s", code, body)
	}
	var tab metav1.Table
	if err := json.Unmarshal(body, &tab); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tab.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if !slices.Equal(cols, []string{"Name", "Ready", "Status", "Restarts", "Age"}) || tab.Kind != "Table" {
		t.Errorf("%s columns %v", tab.Kind, cols)
	}
	if len(tab.Rows) != 1 {
		t.Fatalf("%d rows", len(tab.Rows))
	}
	cells := tab.Rows[0].Cells
	if cells[0] != "worker-89b5c5d5-chzvn" || cells[1] != "0/1" || cells[3] != "2 (78s ago)" || cells[6] != "podflow-node" {
		t.Errorf("cells %v", cells)
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(tab.Rows[0].Object.Raw, &meta); err != nil || meta.Namespace != "crash-exit-1" || meta.Kind != "PartialObjectMetadata" {
		t.Errorf("row object %s: %v", tab.Rows[0].Object.Raw, err)
	}
	if cells[4] != "90s" {
		t.Errorf("age %v, want 90s", cells[4])
	}
	// RESTARTS says when the last restart was, and the events' COUNT is an integer, as
	// the API server prints them.
	code, body = get(t, url+"/api/v1/namespaces/crash-exit-1/events", kubectlTable)
	if code != http.StatusOK {
		t.Fatalf("%d: %s", code, body)
	}
	var events metav1.Table
	if err := json.Unmarshal(body, &events); err != nil || len(events.Rows) == 0 {
		t.Fatalf("events table: %v (%d rows)", err, len(events.Rows))
	}
	for _, r := range events.Rows {
		if n, ok := r.Cells[8].(float64); !ok || n < 1 {
			t.Errorf("event COUNT %#v, want an integer of at least 1", r.Cells[8])
		}
	}
	// Plain JSON when the client does not ask for a table.
	code, body = get(t, url+"/api/v1/namespaces/crash-exit-1/pods", "application/json")
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"PodList"`) {
		t.Errorf("%d %s", code, body)
	}
	code, body = get(t, url+"/api/v1/nodes", kubectlTable)
	if code != http.StatusOK || !strings.Contains(string(body), `"Ready"`) {
		t.Errorf("nodes table %d %s", code, body)
	}
	code, body = get(t, url+"/api/v1/namespaces/crash-exit-1/events", kubectlTable)
	if code != http.StatusOK || !strings.Contains(string(body), `"pod/worker-89b5c5d5-chzvn"`) {
		t.Errorf("events table %d %s", code, body)
	}
}

func TestUntrustedBundle(t *testing.T) {
	hostile := `{"items":[
		"not an object",
		{"metadata":"not an object"},
		{"metadata":{"namespace":"ns"}},
		{"metadata":{"name":"evil\u001b]0;owned\u0007","namespace":"ns","labels":{"app":"x"}},
		 "spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running\u001b[2J"}}
	]}`
	b, err := bundle.New("hostile", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "ns"):            []byte(hostile),
		bundle.NamespacedResourcePath(bundle.KindEvents, "ns"):          []byte(`not json`),
		bundle.LogPath("ns", "evil", "c", false):                        []byte("line\n"),
		bundle.ClusterResources + "/pods/logs/ns/evil/../../secret.log": []byte("nope"),
	})
	if err != nil {
		// A bundle refuses a traversing name itself; serve the rest.
		b, err = bundle.New("hostile", map[string][]byte{
			bundle.NamespacedResourcePath(bundle.KindPods, "ns"):   []byte(hostile),
			bundle.NamespacedResourcePath(bundle.KindEvents, "ns"): []byte(`not json`),
			bundle.LogPath("ns", "evil", "c", false):               []byte("line\n"),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	srv, err := New([]*bundle.Bundle{b}, Options{Token: token, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Skipped() != 4 {
		t.Errorf("skipped %d items, want 4 (three items and one unreadable list)", srv.Skipped())
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	code, body := get(t, hs.URL+"/api/v1/namespaces/ns/pods", kubectlTable)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var tab metav1.Table
	if err := json.Unmarshal(body, &tab); err != nil || len(tab.Rows) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	for _, c := range tab.Rows[0].Cells {
		if s, ok := c.(string); ok && strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("cell %q carries control characters to the terminal", s)
		}
	}
	for _, p := range []string{
		"/api/v1/namespaces/ns/pods/../../../podflow.json",
		"/api/v1/namespaces/ns/pods/evil/log/../../x",
		"/api/v1/namespaces/../../etc/passwd",
		"/apis/../api/v1/pods",
		"/api/v1/" + strings.Repeat("a/", 2000),
	} {
		if code, body := get(t, hs.URL+p, ""); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
}

// TestImportedFormat serves a paste of kubectl describe pod, imported as analyze
// imports it: the pod it describes is listed and its events selected by name.
func TestImportedFormat(t *testing.T) {
	b, _, err := importer.Open(filepath.Join("..", "importer", "testdata", "loose", "oom-killed"), importer.Options{Limits: bundle.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := start(t, b)
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods of the paste: %v (%d)", err, len(pods.Items))
	}
	p := pods.Items[0]
	got, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil || got.Name != p.Name {
		t.Fatalf("get %s/%s: %v", p.Namespace, p.Name, err)
	}
	events, err := cs.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + p.Name + ",involvedObject.kind=Pod,involvedObject.uid=" + string(p.UID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Error("the pasted events of the pod are not selected by the selector kubectl describe sends")
	}
}
