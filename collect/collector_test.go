package collect

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"podflow.dev/podflow/bundle"
)

func TestCollectNamespace(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	res, b := collectBundle(t, client, testOptions(t))
	m := b.Manifest

	if m.Type != "cluster" || m.PodflowVersion != "test" || m.Cluster.Name != "test-cluster" || m.Cluster.Server != "https://api.test:6443" {
		t.Errorf("manifest header = type %q version %q cluster %+v", m.Type, m.PodflowVersion, m.Cluster)
	}
	if !slices.Equal(m.Scope.Namespaces, []string{"shop"}) || m.Scope.AllNamespaces {
		t.Errorf("scope = %+v, want namespace shop", m.Scope)
	}
	if m.Cluster.ServerVersion == "" {
		t.Error("server version not recorded")
	}
	if got := res.Incomplete(); len(got) > 0 {
		t.Errorf("failed sources: %+v", got)
	}
	// Every kind of the layout is written, except Secrets, which are not even a source.
	for _, kind := range bundle.ClusterScopedKinds {
		if !b.Has(bundle.ClusterResourcePath(kind)) {
			t.Errorf("missing %s", bundle.ClusterResourcePath(kind))
		}
	}
	for _, kind := range bundle.NamespacedKinds {
		p := bundle.NamespacedResourcePath(kind, "shop")
		if kind == bundle.KindSecrets {
			if b.Has(p) || m.Source("secrets/shop") != nil {
				t.Errorf("secrets collected without being asked")
			}
			continue
		}
		if !b.Has(p) {
			t.Errorf("missing %s", p)
		}
		if s := sourceByName(t, m, kind+"/shop"); s.Status != bundle.StatusOK || !slices.Contains(s.Files, p) {
			t.Errorf("source %s = %+v, want ok with file %s", kind+"/shop", s, p)
		}
	}
	if b.Has(bundle.NamespacedResourcePath(bundle.KindPods, "other")) {
		t.Error("namespace other was collected though only shop was asked for")
	}

	pods := readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, "shop"))
	if pods.APIVersion != "v1" || pods.Kind != "PodList" {
		t.Errorf("pods list is %s %s, want v1 PodList", pods.APIVersion, pods.Kind)
	}
	if got, want := itemNames(pods), []string{"batch-1", "web-abc-1", "web-abc-2"}; !slices.Equal(sorted(got), want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	for _, it := range pods.Items {
		md := it["metadata"].(map[string]any)
		if it["apiVersion"] != "v1" || it["kind"] != "Pod" {
			t.Errorf("item %v has apiVersion %v kind %v", md["name"], it["apiVersion"], it["kind"])
		}
		if _, ok := md["managedFields"]; ok {
			t.Errorf("item %v keeps managedFields", md["name"])
		}
	}
	deploys := readList(t, b, bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"))
	if deploys.APIVersion != "apps/v1" || deploys.Kind != "DeploymentList" || deploys.Items[0]["kind"] != "Deployment" {
		t.Errorf("deployments list is %s %s with item kind %v", deploys.APIVersion, deploys.Kind, deploys.Items[0]["kind"])
	}
	leases := readList(t, b, bundle.ClusterResourcePath(bundle.KindNodeLeases))
	if got := sorted(itemNames(leases)); !slices.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("node leases = %v", got)
	}
	if got := itemNames(readList(t, b, bundle.ClusterResourcePath(bundle.KindNamespaces))); !slices.Equal(got, []string{"shop"}) {
		t.Errorf("namespaces = %v, want only shop", got)
	}
	cv, err := b.ReadFile(bundle.ClusterVersionPath)
	if err != nil || !bytes.Contains(cv, []byte(`"string": "`+m.Cluster.ServerVersion+`"`)) {
		t.Errorf("cluster version file = %s (%v)", cv, err)
	}
}

func TestCollectConfigMapKeysOnly(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	_, b := collectBundle(t, client, testOptions(t))
	assertNoValue(t, b, configMapValue)
	cms := readList(t, b, bundle.NamespacedResourcePath(bundle.KindConfigMaps, "shop"))
	for _, it := range cms.Items {
		md := it["metadata"].(map[string]any)
		if md["name"] != "web-config" {
			continue
		}
		data := it["data"].(map[string]any)
		if v, ok := data["DATABASE_URL"]; !ok || v != "" {
			t.Errorf("configmap data = %v, want key DATABASE_URL with an empty value", data)
		}
		ann := md["annotations"].(map[string]any)
		if ann[ValueSizesAnnotation] != fmt.Sprintf(`{"DATABASE_URL":%d,"blob":%[1]d}`, len(configMapValue)) {
			t.Errorf("value sizes = %v", ann[ValueSizesAnnotation])
		}
		if ann["team"] != "shop" {
			t.Errorf("unrelated annotation dropped: %v", ann)
		}
		return
	}
	t.Fatal("configmap web-config not in the bundle")
}

func TestCollectSecretKeysNeverValues(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.IncludeSecretKeys = true
	seen := &recordingFilter{}
	opts.Filter = seen
	_, b := collectBundle(t, client, opts)

	// Not in the bundle, and not even handed to the writer.
	assertNoValue(t, b, secretValue)
	seen.mu.Lock()
	for name, data := range seen.files {
		if bytes.Contains(data, []byte(secretValue)) || bytes.Contains(data, []byte(base64.StdEncoding.EncodeToString([]byte(secretValue)))) {
			t.Errorf("secret value reached the writer in %s", name)
		}
	}
	seen.mu.Unlock()
	secrets := readList(t, b, bundle.NamespacedResourcePath(bundle.KindSecrets, "shop"))
	if len(secrets.Items) != 1 {
		t.Fatalf("secrets = %v", itemNames(secrets))
	}
	s := secrets.Items[0]
	if s["type"] != "Opaque" || s["kind"] != "Secret" {
		t.Errorf("secret type %v kind %v", s["type"], s["kind"])
	}
	if data := s["data"].(map[string]any); len(data) != 1 || data["token"] != "" {
		t.Errorf("secret data = %v, want key token with no value", data)
	}
	ann := s["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann[ValueSizesAnnotation] != fmt.Sprintf(`{"token":%d}`, len(secretValue)) || ann[corev1.LastAppliedConfigAnnotation] != nil {
		t.Errorf("secret annotations = %v", ann)
	}
}

// recordingFilter keeps every file handed to the writer.
type recordingFilter struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (f *recordingFilter) Apply(name string, data []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[name] = append([]byte(nil), data...)
	return data, nil
}

func assertNoValue(t *testing.T, b *bundle.Bundle, value string) {
	t.Helper()
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	for name, data := range b.Files() {
		if bytes.Contains(data, []byte(value)) || bytes.Contains(data, []byte(encoded)) {
			t.Errorf("%s contains a value that must not be collected", name)
		}
	}
}

func TestCollectLogs(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	_, b := collectBundle(t, client, testOptions(t))
	m := b.Manifest

	// Restarted container: current and previous instance.
	for _, prev := range []bool{false, true} {
		p := bundle.LogPath("shop", "web-abc-1", "app", prev)
		data, err := b.ReadFile(p)
		want := "current"
		if prev {
			want = "previous"
		}
		if err != nil || !strings.Contains(string(data), "app "+want+" log line") {
			t.Errorf("%s = %q (%v)", p, data, err)
		}
	}
	if s := sourceByName(t, m, "logs/shop/web-abc-1/app"); s.Status != bundle.StatusOK || len(s.Files) != 2 {
		t.Errorf("logs/shop/web-abc-1/app = %+v", s)
	}
	// Init container that completed: its log, no previous one.
	if !b.Has(bundle.LogPath("shop", "web-abc-1", "init", false)) || b.Has(bundle.LogPath("shop", "web-abc-1", "init", true)) {
		t.Error("init container log: want current only")
	}
	// Never started: no file, skipped with the reason, not failed.
	if b.Has(bundle.LogPath("shop", "web-abc-2", "app", false)) {
		t.Error("a container that never started has a log file")
	}
	s := sourceByName(t, m, "logs/shop/web-abc-2/app")
	if s.Status != bundle.StatusSkipped || !strings.Contains(s.Error, "ImagePullBackOff") {
		t.Errorf("logs/shop/web-abc-2/app = %+v, want skipped naming ImagePullBackOff", s)
	}
}

func TestCollectLogBoundsAndErrors(t *testing.T) {
	client, cs := newFakeClient(shopFixture()...)
	var mu sync.Mutex
	var asked []*corev1.PodLogOptions
	cs.PrependReactor("get", "pods/log", func(action k8stesting.Action) (bool, runtime.Object, error) {
		opts := action.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		mu.Lock()
		asked = append(asked, opts)
		mu.Unlock()
		switch {
		case opts.Container == "job":
			return true, nil, errors.New("connection reset by kubelet")
		case opts.Previous && opts.Container == "app":
			// The kubelet's answer, with status 200, when the instance was removed.
			return true, &runtime.Unknown{Raw: []byte("unable to retrieve container logs for containerd://c1")}, nil
		case opts.Previous:
			return true, nil, apierrors.NewBadRequest(`previous terminated container in pod not found`)
		}
		return true, &runtime.Unknown{Raw: []byte(strings.Repeat("0123456789abcdefghi\n", 100))}, nil
	})
	opts := testOptions(t)
	opts.LogLines, opts.LogBytes, opts.Since = 50, 100, 90*time.Second
	res, b := collectBundle(t, client, opts)

	for _, o := range asked {
		if o.TailLines == nil || *o.TailLines != 50 || o.SinceSeconds == nil || *o.SinceSeconds != 90 || !o.Timestamps {
			t.Errorf("log request %+v: want tail 50, since 90s, timestamps", o)
		}
	}
	data, err := b.ReadFile(bundle.LogPath("shop", "web-abc-1", "app", false))
	if err != nil || len(data) > 100 || !strings.HasPrefix(string(data), "0123") || !strings.HasSuffix(string(data), "ghi\n") {
		t.Errorf("bounded log = %q (%v): want whole lines, at most 100 bytes", data, err)
	}
	// A previous instance the kubelet no longer has is no evidence, not a failure.
	if s := sourceByName(t, b.Manifest, "logs/shop/web-abc-1/app"); s.Status != bundle.StatusOK || len(s.Files) != 1 {
		t.Errorf("logs/shop/web-abc-1/app = %+v", s)
	}
	for _, name := range b.Names() {
		if info := bundle.ParsePath(name); info.Area == "log" && info.Previous {
			t.Errorf("%s written: a previous log the kubelet no longer has must not be saved", name)
		}
	}
	failed := res.Incomplete()
	if len(failed) != 1 || failed[0].Name != "logs/shop/batch-1/job" || !strings.Contains(failed[0].Error, "connection reset") {
		t.Errorf("failed = %+v, want only logs/shop/batch-1/job", failed)
	}
	if b.Manifest.Scope.Since != "1m30s" {
		t.Errorf("scope since = %q", b.Manifest.Scope.Since)
	}
}

// A previous instance the kubelet cannot give at the first request (a crash-looping
// container caught mid-restart) is asked for again, a few times at most; one that ended long ago is
// not, and a cancelled collection does not wait for the second request.
func TestCollectAsksAgainForAPreviousLog(t *testing.T) {
	objs := shopFixture()
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Name == "web-abc-1" {
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt = metav1.NewTime(time.Now().Add(-10 * time.Second))
		}
	}
	client, cs := newFakeClient(objs...)
	var mu sync.Mutex
	previousAsked := 0
	cs.PrependReactor("get", "pods/log", func(action k8stesting.Action) (bool, runtime.Object, error) {
		opts := action.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		if !opts.Previous {
			return true, &runtime.Unknown{Raw: []byte("current\n")}, nil
		}
		mu.Lock()
		defer mu.Unlock()
		previousAsked++
		if previousAsked <= 3 {
			// A busy kubelet settles the restart only at the fourth request.
			return true, nil, apierrors.NewBadRequest(`previous terminated container "app" in pod "web-abc-1" not found`)
		}
		return true, &runtime.Unknown{Raw: []byte("OOM at last\n")}, nil
	})
	_, b := collectBundle(t, client, testOptions(t))
	data, err := b.ReadFile(bundle.LogPath("shop", "web-abc-1", "app", true))
	if err != nil || string(data) != "OOM at last\n" {
		t.Fatalf("previous log = %q (%v), want the last answer", data, err)
	}
	if previousAsked != 1+previousLogTries {
		t.Errorf("previous log asked %d times, want %d", previousAsked, 1+previousLogTries)
	}
	if s := sourceByName(t, b.Manifest, "logs/shop/web-abc-1/app"); s.Status != bundle.StatusOK || len(s.Files) != 2 {
		t.Errorf("logs/shop/web-abc-1/app = %+v, want both instances", s)
	}

	now := time.Now()
	lately := func(finished time.Duration) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			FinishedAt: metav1.NewTime(now.Add(-finished))}}}
	}
	if !restartedLately(lately(30*time.Second), now) || restartedLately(lately(time.Hour), now) ||
		restartedLately(&corev1.ContainerStatus{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}, now) ||
		!restartedLately(&corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}, now) {
		t.Error("restartedLately: want true 30 s after the last instance ended and while stopped, false an hour after or with no time")
	}

	c := &collector{client: client, opts: Options{PreviousLogRetry: time.Hour}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first := fmt.Errorf("%w: first answer", errNoLog)
	if _, err := c.fetchPreviousAgain(ctx, logTarget{namespace: "shop", pod: "web-abc-1", container: "app"}, first); !errors.Is(err, first) {
		t.Errorf("cancelled wait returned %v, want the first answer", err)
	}
}

func TestCollectEventsWindow(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Since = time.Hour
	_, b := collectBundle(t, client, opts)
	got := sorted(itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, "shop"))))
	if want := []string{"batch-1.1", "web-abc-1.1", "web-abc.1"}; !slices.Equal(got, want) {
		t.Errorf("events in the last hour = %v, want %v", got, want)
	}
}

func TestCollectForbiddenSource(t *testing.T) {
	client, cs := newFakeClient(shopFixture()...)
	cs.PrependReactor("list", "deployments", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "",
			errors.New(`User "system:serviceaccount:podflow:podflow-collector" cannot list resource "deployments"`))
	})
	res, b := collectBundle(t, client, testOptions(t))

	s := sourceByName(t, b.Manifest, "deployments/shop")
	if s.Status != bundle.StatusFailed || !strings.Contains(s.Error, "forbidden") || len(s.Files) != 0 {
		t.Errorf("deployments/shop = %+v, want failed and forbidden", s)
	}
	if failed := res.Incomplete(); len(failed) != 1 || failed[0].Name != "deployments/shop" {
		t.Errorf("failed = %+v", failed)
	}
	if b.Has(bundle.NamespacedResourcePath(bundle.KindDeployments, "shop")) {
		t.Error("a failed list left a file that claims there are no deployments")
	}
	errs, err := b.ReadFile(bundle.ErrorsPath(bundle.KindDeployments))
	if err != nil || !strings.Contains(string(errs), "forbidden") {
		t.Errorf("%s = %s (%v)", bundle.ErrorsPath(bundle.KindDeployments), errs, err)
	}
	if s := sourceByName(t, b.Manifest, "pods/shop"); s.Status != bundle.StatusOK {
		t.Errorf("pods/shop = %+v: one failure stopped the others", s)
	}
}

func TestCollectInterrupted(t *testing.T) {
	client, cs := newFakeClient(shopFixture()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs.PrependReactor("list", "services", func(action k8stesting.Action) (bool, runtime.Object, error) {
		cancel()
		return false, nil, nil
	})
	opts := testOptions(t)
	_, err := Run(ctx, client, opts)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run after cancel = %v, want ErrInterrupted", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(opts.Target))
	if len(entries) != 0 {
		t.Errorf("an interrupted collection left %v", entries)
	}
}

func TestCollectPodChain(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Namespaces = nil
	opts.Pod = "shop/web-abc-1"
	opts.IncludeSecretKeys = true
	res, b := collectBundle(t, client, opts)
	if len(res.Incomplete()) > 0 {
		t.Fatalf("failed sources: %+v", res.Incomplete())
	}
	if b.Manifest.Scope.Pod != "shop/web-abc-1" || !slices.Equal(b.Manifest.Scope.Namespaces, []string{"shop"}) {
		t.Errorf("scope = %+v", b.Manifest.Scope)
	}
	want := map[string][]string{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):            {"web-abc-1"},
		bundle.NamespacedResourcePath(bundle.KindReplicaSets, "shop"):     {"web-abc", "web-old"},
		bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"):     {"web"},
		bundle.NamespacedResourcePath(bundle.KindStatefulSets, "shop"):    {},
		bundle.NamespacedResourcePath(bundle.KindServices, "shop"):        {"web"},
		bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "shop"):  {"web-x1"},
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"):          {"web-abc-1.1", "web-abc-1.old", "web-abc.1"},
		bundle.NamespacedResourcePath(bundle.KindConfigMaps, "shop"):      {"web-config"},
		bundle.NamespacedResourcePath(bundle.KindSecrets, "shop"):         {},
		bundle.NamespacedResourcePath(bundle.KindPVCs, "shop"):            {"web-data"},
		bundle.NamespacedResourcePath(bundle.KindServiceAccounts, "shop"): {"web"},
		bundle.NamespacedResourcePath(bundle.KindResourceQuotas, "shop"):  {"compute"},
		bundle.ClusterResourcePath(bundle.KindPVs):                        {"pv-web"},
		bundle.ClusterResourcePath(bundle.KindNodes):                      {"n1"},
		bundle.ClusterResourcePath(bundle.KindNodeLeases):                 {"n1"},
		bundle.ClusterResourcePath(bundle.KindNamespaces):                 {"shop"},
	}
	for p, names := range want {
		if got := sorted(itemNames(readList(t, b, p))); !slices.Equal(got, names) {
			t.Errorf("%s = %v, want %v", p, got, names)
		}
	}
	if b.Has(bundle.NamespacedResourcePath(bundle.KindLeases, "shop")) {
		t.Error("namespaced leases are not part of a pod's chain")
	}
	for _, name := range b.Names() {
		if info := bundle.ParsePath(name); info.Area == "log" && info.Pod != "web-abc-1" {
			t.Errorf("log of another pod collected: %s", name)
		}
	}
}

func TestCollectPodNotFound(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Namespaces, opts.Pod = nil, "shop/nope"
	_, err := Run(context.Background(), client, opts)
	if err == nil || !strings.Contains(err.Error(), "pod shop/nope not found") {
		t.Fatalf("Run = %v, want pod not found", err)
	}
	if _, err := os.Stat(opts.Target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target exists after a failed start: %v", err)
	}
}

func TestCollectLabelSelector(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.LabelSelector = "app=batch"
	_, b := collectBundle(t, client, opts)
	if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, "shop"))); !slices.Equal(got, []string{"batch-1"}) {
		t.Errorf("pods = %v, want the selected one only", got)
	}
	// Owners are not filtered by the pod selector.
	if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindDeployments, "shop"))); !slices.Equal(got, []string{"web"}) {
		t.Errorf("deployments = %v", got)
	}
	if b.Has(bundle.LogPath("shop", "web-abc-1", "app", false)) || !b.Has(bundle.LogPath("shop", "batch-1", "job", false)) {
		t.Error("logs do not follow the selector")
	}
	if b.Manifest.Scope.LabelSelector != "app=batch" {
		t.Errorf("scope = %+v", b.Manifest.Scope)
	}
}

func TestCollectAllNamespaces(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Namespaces, opts.AllNamespaces = nil, true
	res, b := collectBundle(t, client, opts)
	if len(res.Incomplete()) > 0 {
		t.Fatalf("failed: %+v", res.Incomplete())
	}
	if !b.Manifest.Scope.AllNamespaces || sourceByName(t, b.Manifest, "pods").Status != bundle.StatusOK {
		t.Errorf("scope %+v", b.Manifest.Scope)
	}
	if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, "other"))); !slices.Equal(got, []string{"lonely"}) {
		t.Errorf("pods in other = %v", got)
	}
	// A namespace with no deployments still gets a list: absence is evidence.
	if got := readList(t, b, bundle.NamespacedResourcePath(bundle.KindDeployments, "other")); len(got.Items) != 0 || got.Kind != "DeploymentList" {
		t.Errorf("deployments in other = %+v", got)
	}
	if b.Has(bundle.NamespacedResourcePath(bundle.KindLeases, NodeLeaseNamespace)) {
		t.Error("node leases written twice")
	}
	if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindLeases, "shop"))); !slices.Equal(got, []string{"leader"}) {
		t.Errorf("leases in shop = %v", got)
	}
}

func TestCollectNamespaceNamedTwice(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Namespaces = []string{"shop", "other", "shop"}
	_, b := collectBundle(t, client, opts)
	if got := b.Manifest.Scope.Namespaces; !slices.Equal(got, []string{"other", "shop"}) {
		t.Errorf("scope namespaces = %v", got)
	}
}

func TestCollectRefusesExistingTarget(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	// A file podflow did not write is never replaced, --force or not.
	if err := os.WriteFile(opts.Target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		opts.Force = force
		var nr *bundle.NotReplaceableError
		if _, err := Run(context.Background(), client, opts); !errors.As(err, &nr) || strings.Contains(err.Error(), "--force") {
			t.Fatalf("Run (force %v) over a file podflow did not write = %v, want NotReplaceableError without --force advice", force, err)
		}
	}
	if data, _ := os.ReadFile(opts.Target); string(data) != "keep me" {
		t.Fatalf("the file was changed: %q", data)
	}
	// A bundle podflow wrote is replaced with --force only.
	if err := os.Remove(opts.Target); err != nil {
		t.Fatal(err)
	}
	opts.Force = false
	collectBundle(t, client, opts)
	if _, err := Run(context.Background(), client, opts); !errors.Is(err, bundle.ErrExists) {
		t.Fatalf("Run over an existing bundle = %v, want ErrExists", err)
	}
	opts.Force = true
	collectBundle(t, client, opts)
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"pod and all", func(o *Options) { o.Pod, o.AllNamespaces = "a/b", true }, "cannot be combined"},
		{"bad pod", func(o *Options) { o.Pod = "just-a-name" }, "want namespace/name"},
		{"namespaces and all", func(o *Options) { o.AllNamespaces = true }, "cannot be combined"},
		{"no namespace", func(o *Options) { o.Namespaces = nil }, "no namespace"},
		{"negative bound", func(o *Options) { o.LogBytes = -1 }, "must not be negative"},
		{"bad namespace", func(o *Options) { o.Namespaces = []string{"../etc"} }, `namespace "../etc"`},
		{"bad pod namespace", func(o *Options) { o.Pod = "Shop/web" }, `pod "Shop/web": namespace`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Target: "x.tar.gz", Namespaces: []string{"shop"}}
			tc.edit(&o)
			if err := o.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("validate = %v, want %q", err, tc.want)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A namespace that does not exist is said so, never collected as an empty bundle.
func TestCollectMissingNamespace(t *testing.T) {
	client, _ := newFakeClient(shopFixture()...)
	opts := testOptions(t)
	opts.Namespaces = []string{"shpo"}
	_, err := Run(context.Background(), client, opts)
	var nf *NamespacesNotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), `namespace "shpo" does not exist`) || !strings.Contains(err.Error(), "shop") {
		t.Fatalf("Run = %v, want that shpo does not exist, naming shop", err)
	}
	if _, err := os.Stat(opts.Target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bundle was written for a namespace that does not exist: %v", err)
	}

	// With one that exists, the bundle is written and the missing one is a failed source.
	opts = testOptions(t)
	opts.Namespaces = []string{"shop", "shpo"}
	res, b := collectBundle(t, client, opts)
	if got := b.Manifest.Scope.Namespaces; !slices.Equal(got, []string{"shop"}) {
		t.Errorf("scope namespaces = %v, want shop", got)
	}
	failed := res.Incomplete()
	if len(failed) != 1 || failed[0].Name != "namespace/shpo" || !strings.Contains(failed[0].Error, `namespace "shpo" does not exist`) {
		t.Errorf("incomplete sources %+v, want namespace/shpo", failed)
	}
}
