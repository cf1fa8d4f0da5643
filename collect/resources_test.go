package collect

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"podflow.dev/podflow/bundle"
)

func sourceFor(t *testing.T, kind string) *resourceSource {
	t.Helper()
	for i := range resourceSources {
		if resourceSources[i].kind == kind {
			return &resourceSources[i]
		}
	}
	t.Fatalf("no source for kind %s", kind)
	return nil
}

// TestEveryBundleListHasACollector ties the collector to bundle.Lists: each list has a
// lister, no lister is left without a list, and the lister returns a list of the kind
// the layout says the file holds.
func TestEveryBundleListHasACollector(t *testing.T) {
	var got, want []string
	for _, l := range bundle.Lists() {
		want = append(want, l.Name)
	}
	for _, s := range resourceSources {
		got = append(got, s.kind)
		if s.list == nil {
			t.Errorf("bundle list %s has no lister in collect", s.kind)
			continue
		}
		obj, err := s.list(context.Background(), fake.NewClientset(), "ns", metav1.ListOptions{})
		if err != nil {
			t.Errorf("%s: list: %v", s.kind, err)
			continue
		}
		if name := reflect.TypeOf(obj).Elem().Name(); name != s.itemKind+"List" {
			t.Errorf("%s: lister returns %s, want %sList as bundle.Lists says", s.kind, name, s.itemKind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("source kinds = %v\nwant bundle.Lists %v", got, want)
	}
	for name := range listers {
		if _, ok := bundle.ListNamed(name); !ok {
			t.Errorf("lister for %s, which is not a bundle list", name)
		}
	}
}

// pagedPods serves pods in pages keyed by continue token and records each request.
type pagedPods struct {
	pages    map[string][]string // continue token → pod names
	next     map[string]string   // continue token → token of the following page
	requests []metav1.ListOptions
	// expireOnce makes the first request with this token fail as expired.
	expireOnce string
}

func (p *pagedPods) react(action k8stesting.Action) (bool, runtime.Object, error) {
	opts := action.(k8stesting.ListActionImpl).ListOptions
	p.requests = append(p.requests, opts)
	if opts.Continue != "" && opts.Continue == p.expireOnce {
		p.expireOnce = ""
		return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	names := p.pages[opts.Continue]
	if opts.Limit == 0 {
		names = nil
		for tok := ""; ; {
			names = append(names, p.pages[tok]...)
			if tok = p.next[tok]; tok == "" {
				break
			}
		}
	} else {
		list.Continue = p.next[opts.Continue]
	}
	for _, n := range names {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: n,
			Labels: map[string]string{"app": "web"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}})
	}
	return true, list, nil
}

func names(items []runtime.Object) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.(*corev1.Pod).Name)
	}
	return out
}

func TestListAllPaginates(t *testing.T) {
	p := &pagedPods{
		pages: map[string][]string{"": {"a", "b"}, "t1": {"c"}, "t2": {"d"}},
		next:  map[string]string{"": "t1", "t1": "t2"},
	}
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", p.react)
	items, rv, err := listAll(context.Background(), cs, sourceFor(t, bundle.KindPods), "shop", metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(items); !slices.Equal(got, []string{"a", "b", "c", "d"}) || rv != "42" {
		t.Errorf("items = %v rv %q, want a b c d at 42", got, rv)
	}
	var tokens []string
	for _, r := range p.requests {
		tokens = append(tokens, r.Continue)
		if r.Limit != PageSize || r.LabelSelector != "app=web" {
			t.Errorf("request %+v: want limit %d and the selector on every page", r, PageSize)
		}
	}
	if !slices.Equal(tokens, []string{"", "t1", "t2"}) {
		t.Errorf("continue tokens sent = %q", tokens)
	}
	for _, it := range items {
		pod := it.(*corev1.Pod)
		if pod.Kind != "Pod" || pod.APIVersion != "v1" || pod.ManagedFields != nil {
			t.Errorf("item %s not prepared: kind %q apiVersion %q managedFields %v", pod.Name, pod.Kind, pod.APIVersion, pod.ManagedFields)
		}
	}
}

func TestListAllRestartsWhenContinueExpires(t *testing.T) {
	p := &pagedPods{
		pages:      map[string][]string{"": {"a", "b"}, "t1": {"c"}},
		next:       map[string]string{"": "t1"},
		expireOnce: "t1",
	}
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", p.react)
	items, _, err := listAll(context.Background(), cs, sourceFor(t, bundle.KindPods), "shop", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(items); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("items after an expired token = %v, want each pod once", got)
	}
	if last := p.requests[len(p.requests)-1]; last.Limit != 0 || last.Continue != "" {
		t.Errorf("fallback request = %+v, want one full list", last)
	}
}

func TestListAllStopsOnRepeatedToken(t *testing.T) {
	p := &pagedPods{pages: map[string][]string{"": {"a"}, "loop": {"b"}}, next: map[string]string{"": "loop", "loop": "loop"}}
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", p.react)
	_, _, err := listAll(context.Background(), cs, sourceFor(t, bundle.KindPods), "shop", metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), `continue token "loop" twice`) {
		t.Fatalf("listAll = %v, want a repeated-token error", err)
	}
}

func TestListAllNamesWhatFailed(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("boom")
	})
	_, _, err := listAll(context.Background(), cs, sourceFor(t, bundle.KindDeployments), "shop", metav1.ListOptions{})
	if err == nil || err.Error() != `list deployments.apps in namespace "shop": boom` {
		t.Fatalf("listAll = %v", err)
	}
}
