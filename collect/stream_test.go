package collect

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"podflow.dev/podflow/bundle"
)

// clusterPods serves an all-namespaces pod list in pages of "namespace/name" keyed by
// continue token, each pod running one container.
type clusterPods struct {
	pages      map[string][]string
	next       map[string]string
	expireOnce string
}

func (p *clusterPods) react(action k8stesting.Action) (bool, runtime.Object, error) {
	opts := action.(k8stesting.ListActionImpl).ListOptions
	if opts.Continue != "" && opts.Continue == p.expireOnce {
		p.expireOnce = ""
		return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: p.next[opts.Continue]}}
	for _, key := range p.pages[opts.Continue] {
		ns, name, _ := strings.Cut(key, "/")
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.PodSpec{NodeName: "node-" + ns, Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://" + name,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
		})
	}
	return true, list, nil
}

func namespaces(names ...string) []runtime.Object {
	var out []runtime.Object
	for _, n := range names {
		out = append(out, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func collectClusterPods(t *testing.T, p *clusterPods, ns ...string) (*Result, *bundle.Bundle) {
	t.Helper()
	client, cs := newFakeClient(namespaces(ns...)...)
	cs.PrependReactor("list", "pods", p.react)
	opts := testOptions(t)
	opts.Namespaces, opts.AllNamespaces = nil, true
	return collectBundle(t, client, opts)
}

func TestStreamWritesEachNamespaceOnce(t *testing.T) {
	p := &clusterPods{
		// Pages end inside a namespace, as the API server's do.
		pages: map[string][]string{"": {"a/a1", "a/a2"}, "t1": {"a/a3", "b/b1"}, "t2": {"c/c1"}},
		next:  map[string]string{"": "t1", "t1": "t2"},
	}
	res, b := collectClusterPods(t, p, "a", "b", "c", "d")
	if s := sourceByName(t, res.Manifest, bundle.KindPods); s.Status != bundle.StatusOK || len(s.Files) != 4 {
		t.Fatalf("pods source = %+v, want ok with a file per namespace", s)
	}
	want := map[string][]string{"a": {"a1", "a2", "a3"}, "b": {"b1"}, "c": {"c1"}, "d": {}}
	for ns, names := range want {
		if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, ns))); !slices.Equal(got, names) {
			t.Errorf("pods in %s = %v, want %v", ns, got, names)
		}
	}
	for _, key := range []string{"a/a1", "a/a3", "b/b1", "c/c1"} {
		ns, name, _ := strings.Cut(key, "/")
		if s := sourceByName(t, res.Manifest, "logs/"+ns+"/"+name+"/app"); s.Status != bundle.StatusOK {
			t.Errorf("log of %s = %+v", key, s)
		}
	}
	var nodes []string
	for _, s := range res.Manifest.Sources {
		if n, ok := strings.CutPrefix(s.Name, "kubelet-config/"); ok {
			nodes = append(nodes, n)
		}
	}
	if !slices.Equal(nodes, []string{"node-a", "node-b", "node-c"}) {
		t.Errorf("kubelet config sources for nodes %v, want one per node", nodes)
	}
}

func TestStreamRefusesInterleavedNamespaces(t *testing.T) {
	p := &clusterPods{
		pages: map[string][]string{"": {"a/a1", "b/b1"}, "t1": {"a/a2"}},
		next:  map[string]string{"": "t1"},
	}
	res, b := collectClusterPods(t, p, "a", "b")
	s := sourceByName(t, res.Manifest, bundle.KindPods)
	if s.Status != bundle.StatusPartial || !strings.Contains(s.Error, `namespace "a" after those of another namespace`) {
		t.Fatalf("pods source = %+v, want partial with the order named", s)
	}
	if !slices.Equal(s.Files, []string{bundle.NamespacedResourcePath(bundle.KindPods, "a")}) {
		t.Errorf("files = %v, want only namespace a, complete before b began", s.Files)
	}
	if b.Has(bundle.NamespacedResourcePath(bundle.KindPods, "b")) || !b.Has(bundle.ErrorsPath(bundle.KindPods)) {
		t.Error("want no file for the namespace being read when the list failed, and the pods errors file")
	}
}

func TestStreamRestartsAfterExpiredContinue(t *testing.T) {
	p := &clusterPods{
		pages:      map[string][]string{"": {"a/a1", "a/a2", "b/b1"}, "t1": {"b/b2", "c/c1"}},
		next:       map[string]string{"": "t1"},
		expireOnce: "t1",
	}
	res, b := collectClusterPods(t, p, "a", "b", "c")
	if s := sourceByName(t, res.Manifest, bundle.KindPods); s.Status != bundle.StatusOK {
		t.Fatalf("pods source = %+v", s)
	}
	want := map[string][]string{"a": {"a1", "a2"}, "b": {"b1", "b2"}, "c": {"c1"}}
	for ns, names := range want {
		if got := itemNames(readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, ns))); !slices.Equal(got, names) {
			t.Errorf("pods in %s = %v, want %v", ns, got, names)
		}
	}
	count := 0
	for _, s := range res.Manifest.Sources {
		if s.Name == "logs/b/b1/app" {
			count++
		}
	}
	if count != 1 {
		t.Errorf("log source of b/b1 planned %d times, want once", count)
	}
}
