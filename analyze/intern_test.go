package analyze

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
