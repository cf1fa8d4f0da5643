package analyze

import "testing"

// A place in an object is cited by a JSON pointer built from its parts, escaped as
// RFC 6901 says. The rules build one for every container they look at, so the usual
// parts cost one allocation, the pointer itself.
func TestLocationAtBuildsItsPointerInOneAllocation(t *testing.T) {
	base := Location{Path: "cluster-resources/pods/shop.json", Pointer: "/items/12"}
	for _, c := range []struct {
		parts []any
		want  string
	}{
		{[]any{"status", "containerStatuses", 3, "lastState", "terminated"}, "/items/12/status/containerStatuses/3/lastState/terminated"},
		{[]any{"metadata", "annotations", "example.com/a~b"}, "/items/12/metadata/annotations/example.com~1a~0b"},
		{[]any{"spec", 123456789, int32(7)}, "/items/12/spec/123456789/7"},
		{nil, "/items/12"},
	} {
		if got := base.At(c.parts...).Pointer; got != c.want {
			t.Errorf("At(%v) = %q, want %q", c.parts, got, c.want)
		}
	}
	parts := []any{"status", "containerStatuses", 3, "lastState", "terminated"}
	if n := testing.AllocsPerRun(100, func() { base.At(parts...) }); n != 1 {
		t.Errorf("At allocates %v times for a status's place, want 1", n)
	}
}
