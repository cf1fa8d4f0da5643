package importer

import (
	"strings"
	"testing"
)

// A container's status cut from a pod's -o json reads as the YAML piece would: the
// members at their indentation, an object in an array a list item, the closing lines
// blank so every line keeps its number.
func TestJSONFragmentAsYAML(t *testing.T) {
	in := []string{
		`    "containerStatuses": [`,
		`      {`,
		`        "image": "registry.example.com/shop/api:2.3.1",`,
		`        "lastState": {},`,
		`        "name": "api",`,
		`        "state": {`,
		`          "waiting": {`,
		`            "message": "secret \"db\" not found",`,
		`            "reason": "CreateContainerConfigError"`,
		`          }`,
		`        }`,
		`      }`,
		`    ],`,
	}
	var lines []textLine
	for i, s := range in {
		lines = append(lines, textLine{s: s, n: i + 1})
	}
	out, ok := jsonFragmentAsYAML(lines)
	if !ok || len(out) != len(in) {
		t.Fatalf("not read: %v %d", ok, len(out))
	}
	var got []string
	for i, l := range out {
		if l.n != i+1 {
			t.Errorf("line %d numbered %d", i+1, l.n)
		}
		got = append(got, l.s)
	}
	want := strings.Join([]string{
		`    containerStatuses:`,
		``,
		`      - image: "registry.example.com/shop/api:2.3.1"`,
		`        lastState: {}`,
		`        name: "api"`,
		`        state:`,
		`          waiting:`,
		`            message: "secret \"db\" not found"`,
		`            reason: "CreateContainerConfigError"`,
		``, ``, ``, ``,
	}, "\n")
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("got\n%s\nwant\n%s", g, want)
	}
	if _, ok := jsonFragmentAsYAML([]textLine{{s: `    "name": "api",`, n: 1}, {s: `the pod never starts`, n: 2}}); ok {
		t.Error("a sentence read as a JSON member")
	}
}

// A piece holding only a pod status's own keys is that status; the same keys among an
// event's, or a reason alone, are not.
func TestStatusOwnKeys(t *testing.T) {
	st, ok := statusOwnKeys("  phase: Failed\n  reason: OutOfcpu\n  message: 'Node didn''t have enough resource: cpu'\n")
	if !ok || st.Reason != "OutOfcpu" || st.Message != "Node didn't have enough resource: cpu" || st.Phase != "Failed" {
		t.Fatalf("got %+v, %v", st, ok)
	}
	for _, text := range []string{
		"involvedObject:\n  kind: Pod\n  name: web-0\nreason: OutOfcpu\nmessage: 'Node didn''t have enough resource'\n",
		"reason: Unauthorized\n",
	} {
		if st, ok := statusOwnKeys(text); ok {
			t.Errorf("%q read as a pod status: %+v", text, st)
		}
	}
}
