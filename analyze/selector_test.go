package analyze

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// setSelects must answer as the selector apimachinery builds from the same set, which
// the Service controller uses to pick a Service's pods.
func TestSetSelectsAsSelectorFromSet(t *testing.T) {
	sets := []map[string]string{
		nil,
		{},
		{"app": "web"},
		{"app": "web", "tier": "front"},
		{"app": ""},
		{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "a"},
	}
	for _, sel := range sets {
		for _, l := range sets {
			want := labels.SelectorFromSet(sel).Matches(labels.Set(l))
			if got := setSelects(sel, l); got != want {
				t.Errorf("setSelects(%v, %v) = %v, SelectorFromSet says %v", sel, l, got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { setSelects(sets[3], sets[5]) }); n != 0 {
		t.Errorf("setSelects allocates %v times per call; it is asked for every pod of a namespace and every Service", n)
	}
}
