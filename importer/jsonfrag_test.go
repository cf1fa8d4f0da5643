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
