package collect

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"podflow.dev/podflow/bundle"
)

// Values that must never reach a bundle.
const (
	configMapValue = "cm-value-do-not-leak-7f3a"
	secretValue    = "secret-value-do-not-leak-91c2"
)

func objMeta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid),
		CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour)),
		ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}}
}

func controllerRef(kind, name, uid string) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
}

// shopFixture is a namespace "shop" with Deployment web → ReplicaSet web-abc → pods
// web-abc-1 (running on n1, restarted once) and web-abc-2 (waiting on its image), an
// older ReplicaSet of the same Deployment, an unrelated pod "batch-1", two Services with
// EndpointSlices, events, a ConfigMap and a Secret whose values must not leak, and a
// second namespace "other".
func shopFixture() []runtime.Object {
	replicas := int32(2)
	web := &appsv1.Deployment{ObjectMeta: objMeta("shop", "web", "uid-deploy-web"),
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: objMeta("shop", "web-abc", "uid-rs-web-abc")}
	rs.OwnerReferences = controllerRef("Deployment", "web", "uid-deploy-web")
	oldRS := &appsv1.ReplicaSet{ObjectMeta: objMeta("shop", "web-old", "uid-rs-web-old")}
	oldRS.OwnerReferences = controllerRef("Deployment", "web", "uid-deploy-web")
	otherRS := &appsv1.ReplicaSet{ObjectMeta: objMeta("shop", "db-1", "uid-rs-db")}

	running := &corev1.Pod{ObjectMeta: objMeta("shop", "web-abc-1", "uid-pod-1"),
		Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "web",
			Containers: []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}}},
			InitContainers: []corev1.Container{{Name: "init"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "web-data"}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", ContainerID: "containerd://i1",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, ContainerID: "containerd://i1"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://c2", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", ContainerID: "containerd://c1"}}}}}}
	running.Labels = map[string]string{"app": "web"}
	running.OwnerReferences = controllerRef("ReplicaSet", "web-abc", "uid-rs-web-abc")

	waiting := &corev1.Pod{ObjectMeta: objMeta("shop", "web-abc-2", "uid-pod-2"),
		Spec: corev1.PodSpec{NodeName: "n2", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}
	waiting.Labels = map[string]string{"app": "web"}
	waiting.OwnerReferences = controllerRef("ReplicaSet", "web-abc", "uid-rs-web-abc")

	batch := &corev1.Pod{ObjectMeta: objMeta("shop", "batch-1", "uid-pod-batch"),
		Spec: corev1.PodSpec{NodeName: "n2", Containers: []corev1.Container{{Name: "job"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "job",
			ContainerID: "containerd://b1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	batch.Labels = map[string]string{"app": "batch"}

	svc := func(name, app string) *corev1.Service {
		return &corev1.Service{ObjectMeta: objMeta("shop", name, "uid-svc-"+name), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app}}}
	}
	slice := func(name, svc string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: objMeta("shop", name, "uid-eps-"+name), AddressType: discoveryv1.AddressTypeIPv4}
		s.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
		return s
	}
	event := func(name, kind, obj, uid, reason string, age time.Duration) *corev1.Event {
		t := metav1.NewTime(time.Now().Add(-age))
		return &corev1.Event{ObjectMeta: objMeta("shop", name, "uid-ev-"+name),
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: obj, UID: types.UID(uid)},
			Reason:         reason, Message: reason + " message", FirstTimestamp: t, LastTimestamp: t, Count: 1, Type: "Warning"}
	}
	cm := &corev1.ConfigMap{ObjectMeta: objMeta("shop", "web-config", "uid-cm-web"),
		Data: map[string]string{"DATABASE_URL": configMapValue}, BinaryData: map[string][]byte{"blob": []byte(configMapValue)}}
	cm.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"DATABASE_URL":"` + configMapValue + `"}}`, "team": "shop"}
	unusedCM := &corev1.ConfigMap{ObjectMeta: objMeta("shop", "unused", "uid-cm-unused"), Data: map[string]string{"k": "v"}}
	secret := &corev1.Secret{ObjectMeta: objMeta("shop", "web-secret", "uid-secret-web"), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte(secretValue)}}
	secret.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"token":"` + secretValue + `"}}`}

	node := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: objMeta("", name, "uid-node-"+name)} }
	lease := func(ns, name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: objMeta(ns, name, "uid-lease-"+ns+"-"+name)}
	}
	return []runtime.Object{
		&corev1.Namespace{ObjectMeta: objMeta("", "shop", "uid-ns-shop")},
		&corev1.Namespace{ObjectMeta: objMeta("", "other", "uid-ns-other")},
		&corev1.Namespace{ObjectMeta: objMeta("", NodeLeaseNamespace, "uid-ns-lease")},
		node("n1"), node("n2"), lease(NodeLeaseNamespace, "n1"), lease(NodeLeaseNamespace, "n2"), lease("shop", "leader"),
		web, rs, oldRS, otherRS, running, waiting, batch,
		svc("web", "web"), svc("db", "db"), slice("web-x1", "web"), slice("db-x1", "db"),
		event("web-abc-1.1", "Pod", "web-abc-1", "uid-pod-1", "BackOff", 5*time.Minute),
		event("web-abc.1", "ReplicaSet", "web-abc", "uid-rs-web-abc", "SuccessfulCreate", 10*time.Minute),
		event("batch-1.1", "Pod", "batch-1", "uid-pod-batch", "Pulled", 5*time.Minute),
		event("web-abc-1.old", "Pod", "web-abc-1", "uid-pod-1", "Scheduled", 3*time.Hour),
		cm, unusedCM, secret,
		&corev1.PersistentVolumeClaim{ObjectMeta: objMeta("shop", "web-data", "uid-pvc-web"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-web"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: objMeta("shop", "db-data", "uid-pvc-db")},
		&corev1.PersistentVolume{ObjectMeta: objMeta("", "pv-web", "uid-pv-web"), Spec: corev1.PersistentVolumeSpec{
			ClaimRef: &corev1.ObjectReference{Namespace: "shop", Name: "web-data"}}},
		&corev1.PersistentVolume{ObjectMeta: objMeta("", "pv-db", "uid-pv-db"), Spec: corev1.PersistentVolumeSpec{
			ClaimRef: &corev1.ObjectReference{Namespace: "shop", Name: "db-data"}}},
		&corev1.ServiceAccount{ObjectMeta: objMeta("shop", "web", "uid-sa-web")},
		&corev1.ServiceAccount{ObjectMeta: objMeta("shop", "default", "uid-sa-default")},
		&corev1.ResourceQuota{ObjectMeta: objMeta("shop", "compute", "uid-quota")},
		&corev1.Pod{ObjectMeta: objMeta("other", "lonely", "uid-pod-other"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
	}
}

// logReactor answers log requests with text naming the container and instance.
func logReactor(action k8stesting.Action) (bool, runtime.Object, error) {
	opts, ok := action.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
	if !ok {
		return false, nil, nil
	}
	which := "current"
	if opts.Previous {
		which = "previous"
	}
	line := "2026-01-01T00:00:00Z " + action.GetNamespace() + " " + opts.Container + " " + which + " log line\n"
	return true, &runtime.Unknown{Raw: []byte(line)}, nil
}

func newFakeClient(objs ...runtime.Object) (*Client, *fake.Clientset) {
	cs := fake.NewClientset(objs...)
	cs.PrependReactor("get", "pods/log", logReactor)
	return &Client{Kube: cs, Name: "test-cluster", Server: "https://api.test:6443"}, cs
}

func testOptions(t *testing.T) Options {
	t.Helper()
	logger := logrus.New()
	logger.SetOutput(testWriter{t})
	logger.SetLevel(logrus.DebugLevel)
	return Options{
		Target:         filepath.Join(t.TempDir(), "out.tar.gz"),
		PodflowVersion: "test",
		Namespaces:     []string{"shop"},
		Logger:         logger,
		// Asking again for a previous log is tested with its own wait.
		PreviousLogRetry: time.Millisecond,
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// collectBundle runs a collection and opens what it wrote.
func collectBundle(t *testing.T, client *Client, opts Options) (*Result, *bundle.Bundle) {
	t.Helper()
	res, err := Run(context.Background(), client, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := bundle.Open(res.Target, bundle.Limits{})
	if err != nil {
		t.Fatalf("open written bundle: %v", err)
	}
	if problems := bundle.Verify(b); len(problems) > 0 {
		t.Fatalf("written bundle does not verify: %v", problems)
	}
	return res, b
}

// decodedList is a list file decoded loosely, to check what a reader of the bundle sees.
type decodedList struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Items      []map[string]any `json:"items"`
}

func readList(t *testing.T, b *bundle.Bundle, path string) decodedList {
	t.Helper()
	data, err := b.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var l decodedList
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return l
}

func itemNames(l decodedList) []string {
	names := []string{}
	for _, it := range l.Items {
		md, _ := it["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		names = append(names, name)
	}
	return names
}

func sourceByName(t *testing.T, m *bundle.Manifest, name string) bundle.Source {
	t.Helper()
	s := m.Source(name)
	if s == nil {
		t.Fatalf("manifest has no source %q", name)
	}
	return *s
}
