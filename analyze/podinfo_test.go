package analyze

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Containers pairs specs with statuses by name and places each in the pod's object; the
// places are made only when asked, so listing a pod's containers allocates the list
// alone (every container of a big cluster is listed in the facts).
func TestContainersPlaceEachAndAllocateOnce(t *testing.T) {
	obj := &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup"}},
			Containers:     []corev1.Container{{Name: "app"}, {Name: "sidecar"}, {Name: "late"}},
		},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup"}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "sidecar"}, {Name: "app"}},
		},
	}
	p := &Pod{Obj: obj, Loc: Location{Path: "cluster-resources/pods/shop.json", Pointer: "/items/4"}, kind: "Pod", meta: &obj.ObjectMeta}
	want := []struct {
		name         string
		spec, status string
		hasStatus    bool
	}{
		{"setup", "/items/4/spec/initContainers/0", "/items/4/status/initContainerStatuses/0", true},
		{"app", "/items/4/spec/containers/0", "/items/4/status/containerStatuses/1", true},
		{"sidecar", "/items/4/spec/containers/1", "/items/4/status/containerStatuses/0", true},
		{"late", "/items/4/spec/containers/2", "", false},
	}
	cs := Containers(p)
	if len(cs) != len(want) {
		t.Fatalf("%d containers, want %d", len(cs), len(want))
	}
	for i, w := range want {
		c := cs[i]
		if c.Name != w.name || c.SpecLoc().Pointer != w.spec || c.StatusLoc().Pointer != w.status || (c.Status != nil) != w.hasStatus {
			t.Errorf("container %d: %s at %q / %q (status %v), want %s at %q / %q", i, c.Name, c.SpecLoc().Pointer, c.StatusLoc().Pointer, c.Status != nil, w.name, w.spec, w.status)
		}
		if c.SpecLoc().Path != p.Loc.Path {
			t.Errorf("container %s cited in %q, want %q", c.Name, c.SpecLoc().Path, p.Loc.Path)
		}
	}
	if got := (ContainerInfo{Name: "app"}).SpecLoc(); got != (Location{}) {
		t.Errorf("a container without its pod's object is placed at %+v", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Containers(p) }); n != 1 {
		t.Errorf("listing 4 containers allocates %.0f times, want once", n)
	}
}
