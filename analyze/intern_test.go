package analyze

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Equal maps become one map, whatever their order of insertion; maps that differ in a
// value, or in a quantity's format that String would show, stay apart; what is shared
// reads the same as what was decoded.
func TestInternerSharesOnlyEqualMaps(t *testing.T) {
	var in interner
	a := in.labelMap(map[string]string{"app": "web", "pod-template-hash": "5d8"})
	b := in.labelMap(map[string]string{"pod-template-hash": "5d8", "app": "web"})
	c := in.labelMap(map[string]string{"app": "web", "pod-template-hash": "6f9"})
	if reflect.ValueOf(a).Pointer() != reflect.ValueOf(b).Pointer() {
		t.Error("equal label maps are not shared")
	}
	if reflect.ValueOf(a).Pointer() == reflect.ValueOf(c).Pointer() || c["pod-template-hash"] != "6f9" {
		t.Errorf("different label maps are shared: %v", c)
	}
	// A key and value that run together must not read as another pair.
	d := in.labelMap(map[string]string{"a": "b\x00c"})
	e := in.labelMap(map[string]string{"a\x00b": "c"})
	if len(e) != 1 || e["a\x00b"] != "c" || reflect.ValueOf(d).Pointer() == reflect.ValueOf(e).Pointer() {
		t.Errorf("maps {a: b\\0c} and {a\\0b: c} are shared")
	}

	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	r1 := in.resourceList(corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")})
	r2 := in.resourceList(corev1.ResourceList{corev1.ResourceMemory: q("128Mi"), corev1.ResourceCPU: q("100m")})
	r3 := in.resourceList(corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("134217728")})
	if reflect.ValueOf(r1).Pointer() != reflect.ValueOf(r2).Pointer() {
		t.Error("equal resource lists are not shared")
	}
	mem := r3[corev1.ResourceMemory]
	if reflect.ValueOf(r1).Pointer() == reflect.ValueOf(r3).Pointer() || mem.String() != "134217728" {
		t.Errorf("128Mi and 134217728 (same value, other format) are shared: %s", mem.String())
	}
	if in.labelMap(nil) != nil || in.resourceList(nil) != nil {
		t.Error("nil maps must stay nil")
	}
	if s := in.str("Scheduled"); s != "Scheduled" || in.str("") != "" {
		t.Errorf("str = %q", s)
	}
}

// Once a table is full, new maps are handed back as they are, unshared, and the table
// stops growing.
func TestInternerStopsGrowingAtItsCap(t *testing.T) {
	var in interner
	for i := range internCap + 10 {
		in.labelMap(map[string]string{"i": itoa(i)})
	}
	if len(in.labels) != internCap {
		t.Fatalf("%d maps kept, want the cap %d", len(in.labels), internCap)
	}
	m := map[string]string{"i": itoa(internCap + 5)}
	if got := in.labelMap(m); reflect.ValueOf(got).Pointer() != reflect.ValueOf(m).Pointer() {
		t.Error("a map past the cap is not handed back as it is")
	}
}

// Two pods of one template share their pod-level requests and limits: the spec's (since
// Kubernetes 1.32) and the status's copies of them (since 1.33), which on a large
// cluster were a fifth of what a healthy pod kept.
func TestInternerSharesPodLevelResources(t *testing.T) {
	var in interner
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	mk := func() *corev1.Pod {
		req := func() corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceCPU: q("5m"), corev1.ResourceMemory: q("8Mi")}
		}
		p := &corev1.Pod{}
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: req()}
		p.Status.Phase, p.Status.QOSClass = corev1.PodRunning, corev1.PodQOSBurstable
		p.Status.AllocatedResources = req()
		p.Status.Resources = &corev1.ResourceRequirements{Requests: req(), Limits: corev1.ResourceList{corev1.ResourceMemory: q("32Mi")}}
		return p
	}
	a, b := mk(), mk()
	in.pod(a)
	in.pod(b)
	same := func(x, y corev1.ResourceList) bool {
		return reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer()
	}
	if !same(a.Spec.Resources.Requests, b.Spec.Resources.Requests) {
		t.Error("the pods' spec-level requests are not shared")
	}
	if !same(a.Status.AllocatedResources, b.Status.AllocatedResources) || !same(a.Status.Resources.Limits, b.Status.Resources.Limits) {
		t.Error("the pods' status-level resources are not shared")
	}
	if !same(a.Status.AllocatedResources, a.Status.Resources.Requests) {
		t.Error("equal lists within one pod are not shared")
	}
	mem := b.Status.Resources.Limits[corev1.ResourceMemory]
	if b.Status.Phase != corev1.PodRunning || b.Status.QOSClass != corev1.PodQOSBurstable || mem.String() != "32Mi" {
		t.Errorf("shared values read differently: %s %s %s", b.Status.Phase, b.Status.QOSClass, mem.String())
	}
}

// The decoder grows lists by doubling; the interner keeps a pod's containers, volumes,
// statuses and conditions in lists of their own size, with what they said.
func TestInternerKeepsPodListsInTheirOwnRoom(t *testing.T) {
	names := func(n int, f func(name string) string) string {
		s := ""
		for i := range n {
			if i > 0 {
				s += ","
			}
			s += f(string(rune('a' + i)))
		}
		return s
	}
	data := `{"spec":{"containers":[` + names(3, func(n string) string { return `{"name":"` + n + `","image":"i"}` }) +
		`],"initContainers":[` + names(3, func(n string) string { return `{"name":"init-` + n + `"}` }) +
		`],"volumes":[` + names(5, func(n string) string { return `{"name":"` + n + `","emptyDir":{}}` }) +
		`]},"status":{"conditions":[` + names(5, func(n string) string { return `{"type":"` + n + `","status":"True"}` }) +
		`],"containerStatuses":[` + names(3, func(n string) string { return `{"name":"` + n + `","ready":true}` }) +
		`],"initContainerStatuses":[` + names(3, func(n string) string { return `{"name":"init-` + n + `"}` }) + `]}}`
	var p corev1.Pod
	if err := fastUnmarshal([]byte(data), &p); err != nil {
		t.Fatal(err)
	}
	var want corev1.Pod
	if err := fastUnmarshal([]byte(data), &want); err != nil {
		t.Fatal(err)
	}
	var in interner
	in.pod(&p)
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("interning changed the pod:\n%+v\nwant\n%+v", p, want)
	}
	for _, l := range []struct {
		name     string
		len, cap int
	}{
		{"containers", len(p.Spec.Containers), cap(p.Spec.Containers)},
		{"initContainers", len(p.Spec.InitContainers), cap(p.Spec.InitContainers)},
		{"volumes", len(p.Spec.Volumes), cap(p.Spec.Volumes)},
		{"conditions", len(p.Status.Conditions), cap(p.Status.Conditions)},
		{"containerStatuses", len(p.Status.ContainerStatuses), cap(p.Status.ContainerStatuses)},
		{"initContainerStatuses", len(p.Status.InitContainerStatuses), cap(p.Status.InitContainerStatuses)},
	} {
		if l.cap != l.len {
			t.Errorf("%s: %d kept in room for %d", l.name, l.len, l.cap)
		}
	}
}

// A workload's bookkeeping annotations are shared like its labels; annotations that
// hold a long text (a last-applied configuration) are left as decoded.
func TestInternerSharesShortAnnotations(t *testing.T) {
	var in interner
	rs := func(desired string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Annotations: map[string]string{
			"deployment.kubernetes.io/desired-replicas": desired,
			"deployment.kubernetes.io/max-replicas":     "3",
			"deployment.kubernetes.io/revision":         "1",
		}}
	}
	a, b, c := rs("2"), rs("2"), rs("1")
	for _, m := range []*metav1.ObjectMeta{a, b, c} {
		in.meta(m)
	}
	if reflect.ValueOf(a.Annotations).Pointer() != reflect.ValueOf(b.Annotations).Pointer() {
		t.Error("equal annotations are not shared")
	}
	if reflect.ValueOf(a.Annotations).Pointer() == reflect.ValueOf(c.Annotations).Pointer() || c.Annotations["deployment.kubernetes.io/desired-replicas"] != "1" {
		t.Errorf("different annotations are shared: %v", c.Annotations)
	}
	long := strings.Repeat("x", annotationsMax)
	d := &metav1.ObjectMeta{Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": long}}
	e := &metav1.ObjectMeta{Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": long}}
	in.meta(d)
	in.meta(e)
	if reflect.ValueOf(d.Annotations).Pointer() == reflect.ValueOf(e.Annotations).Pointer() {
		t.Error("long annotations are shared: the interner's table would hold every one")
	}
}
