package importer

import (
	"regexp"
	"strings"
)

// A pod's -o json is pasted in pieces as often as its -o yaml: a container's status cut
// from the middle of containerStatuses, without the braces that open it. Such a piece is
// the same fields as the YAML one, so it is read as that: each "key": value line becomes
// key: value at its indentation (a JSON string is a valid YAML scalar), each object or
// array a line opens becomes key: with its members below, an object inside an array a
// list item, and the lines that only close them blank lines, so every line keeps its
// number.

// reJSONFragStart opens such a piece: one of the keys a pod's status or a container's
// status starts with.
var reJSONFragStart = regexp.MustCompile(`^\s*"(?:status|containerStatuses|initContainerStatuses|state|lastState|containerID|image|imageID)":\s`)

// reJSONKeyLine is a member of an object on its own line: "key": value, or "key": { / [.
var reJSONKeyLine = regexp.MustCompile(`^(\s*)"([^"\\]+)":\s*(.*?)\s*$`)

// reJSONFragLine continues a piece: a member, or a line of braces and brackets.
var reJSONFragLine = regexp.MustCompile(`^\s*(?:"[^"\\]+":|[\]\[{}],?\s*$|[\]}]+,?\s*$|\{\s*$)`)

// segJSONFrag is a piece of a pod's -o json pasted alone, read as segYAMLFrag's.
const segJSONFrag = "kubectl get pod -o json fragment"

func isJSONFragStart(s string) bool { return reJSONFragStart.MatchString(s) }

// jsonFragmentAsYAML rewrites the lines of a JSON piece as the YAML the fragment reader
// takes; ok is false when a line is neither a member nor a brace.
func jsonFragmentAsYAML(lines []textLine) ([]textLine, bool) {
	out := make([]textLine, len(lines))
	// stack holds, per open container, whether it is an array.
	var stack []bool
	item := false // the next member opens a list item
	for i, l := range lines {
		out[i] = textLine{n: l.n}
		t := strings.TrimSpace(l.s)
		switch {
		case t == "":
			continue
		case t == "{" || t == "[{":
			if t == "[{" {
				stack = append(stack, true)
			}
			stack = append(stack, false)
			item = len(stack) >= 2 && stack[len(stack)-2]
			continue
		case strings.Trim(t, "}],") == "":
			for _, c := range t {
				if (c == '}' || c == ']') && len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
			continue
		}
		m := reJSONKeyLine.FindStringSubmatch(l.s)
		if m == nil {
			return nil, false
		}
		indent, key, val := m[1], m[2], strings.TrimSuffix(m[3], ",")
		prefix := indent
		if item {
			// The first member of an object in an array: the list item's dash.
			if len(prefix) >= 2 {
				prefix = prefix[:len(prefix)-2]
			}
			prefix += "- "
			item = false
		}
		switch val {
		case "{":
			out[i].s = prefix + key + ":"
			stack = append(stack, false)
		case "[":
			out[i].s = prefix + key + ":"
			stack = append(stack, true)
		case "[{":
			out[i].s = prefix + key + ":"
			stack = append(stack, true, false)
			item = true
		default:
			out[i].s = prefix + key + ": " + val
		}
	}
	return out, true
}
