package importer

import (
	"strings"
	"testing"
)

// An object's YAML quoted among a ticket's sentences, without a fence around it, is
// read as the object: at the margin or indented as a Markdown code block, two objects
// with or without "---" between them, and a sentence right after the last line.
func TestObjectYAMLAmongProse(t *testing.T) {
	service := `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web-frontend
  ports:
  - port: 80
    targetPort: 8080
`
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels:
    app: web
spec:
  containers:
  - name: web
    image: nginx
`
	indent := func(s string) string {
		return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
	}
	hpa := `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
`
	cases := []struct{ name, text string }{
		{"after an object that names another one inside it", "Endpoints stay empty. The HPA:\n" + hpa + "My service:\n" + service + "and the pod:\n" + pod},
		{"at the margin, a blank line around", "The pod runs but curl to the service hangs.\n\nMy service:\n\n" + service + "\nand the pod:\n\n" + pod},
		{"at the margin, no blank line", "The pod runs but curl to the service hangs. My service:\n" + service + "and the pod:\n" + pod + "Any idea?\n"},
		{"one after the other, no separator", "Endpoints stay empty. Here is what I applied:\n" + service + pod + "Thanks\n"},
		{"a Markdown code block", "Endpoints stay empty. Here is what I applied:\n\n" + indent(service) + "    ---\n" + indent(pod) + "\nAny idea why?\n"},
	}
	// An apiVersion and kind inside the document (the scale target's) do not open another.
	var objects int
	for _, b := range segment(fileLines([]byte("The HPA:\n" + hpa))) {
		if b.kind == segObjects {
			objects++
			if len(b.lines) != strings.Count(hpa, "\n") {
				t.Errorf("the HPA's block holds %d lines, want %d", len(b.lines), strings.Count(hpa, "\n"))
			}
		}
	}
	if objects != 1 {
		t.Errorf("%d object blocks in the HPA, want 1", objects)
	}
	for _, c := range cases {
		rep := analyzePaste(t, map[string][]byte{"message.txt": []byte(c.text)})
		root := firstRoot(rep)
		if root == nil || root.Rule != "service-selector-matches-nothing" {
			t.Errorf("%s: root = %s, want service-selector-matches-nothing\n%s", c.name, diagnosis(rep), c.text)
			continue
		}
		for _, want := range []string{"app=web-frontend", "web-1", "app=web"} {
			if !strings.Contains(root.Cause, want) {
				t.Errorf("%s: cause %q does not name %s", c.name, root.Cause, want)
			}
		}
		if strings.Contains(root.Cause, "namespace  ") || strings.Contains(root.Cause, "in namespace has") {
			t.Errorf("%s: cause %q names an empty namespace", c.name, root.Cause)
		}
	}
}

// Sentences that only mention a kind or an apiVersion stay text: a line "kind: X" needs
// another key of the object's document under it.
func TestObjectYAMLStartNeedsADocument(t *testing.T) {
	text := "We upgraded today.\nkind: of weird, the pods restart\napiVersion: v1 is what we use\nnothing else changed\n"
	lines := fileLines([]byte(text))
	for i := range lines {
		if objectStartsAt(lines, i, -1, nil) {
			t.Errorf("line %d %q read as an object's start", lines[i].n, lines[i].s)
		}
	}
	for _, b := range segment(lines) {
		if b.kind == segObjects {
			t.Errorf("lines %d-%d read as objects", b.lines[0].n, b.lines[len(b.lines)-1].n)
		}
	}
}
