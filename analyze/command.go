package analyze

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/untrusted"
)

// Confirm commands are printed for users to copy into a shell, and nearly every
// argument in them comes from evidence: a pod, namespace or node name, a selector, an
// image. Command builds them so that no evidence can run as shell code.

// Value is an evidence-derived argument that is not an object name (a label selector,
// an image reference, a path, an event reason): Command quotes it for a POSIX shell.
type Value string

// Literal is text podflow itself chose (a field path, a flag): Command inserts it as is.
type Literal string

// Names are several object names, one argument each.
type Names []string

// Placeholder stands in a command for a name that is not a valid Kubernetes name.
const Placeholder = "NAME"

// invalidNameNote ends a command in which a name was replaced by Placeholder. It is a
// shell comment, so the copied line stays inert, and it does not repeat the name: the
// finding shows it, escaped.
const invalidNameNote = "  # " + Placeholder + " stands for a name in the evidence that is not a valid Kubernetes name, so it is not put in a command"

// unknownNameNote ends a command in which Placeholder stands for a name the evidence
// does not show (a pasted eviction row names no node).
const unknownNameNote = "  # " + Placeholder + ": the evidence does not show this name"

// Command formats a confirm command like fmt.Sprintf. A string argument is an object
// name: a valid Kubernetes name (which holds no character a shell treats specially) is
// inserted as is, anything else (an empty one too) is replaced by Placeholder and the
// command ends with a note saying so. Value arguments are shell-quoted, Literal ones inserted as they are,
// and other arguments (numbers) formatted as usual.
func Command(format string, args ...any) string {
	invalid, unknown := false, false
	name := func(s string) string {
		switch {
		case untrusted.IsName(s):
			return s
		case s == "":
			unknown = true
		default:
			invalid = true
		}
		return Placeholder
	}
	out := make([]any, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			out[i] = name(a)
		case Names:
			parts := make([]string, len(a))
			for j, n := range a {
				parts[j] = name(n)
			}
			out[i] = strings.Join(parts, " ")
		case Value:
			out[i] = untrusted.ShellArg(string(a))
		case Literal:
			out[i] = string(a)
		default:
			out[i] = a
		}
	}
	cmd := fmt.Sprintf(format, out...)
	switch {
	case invalid:
		cmd += invalidNameNote
	case unknown:
		cmd += unknownNameNote
	}
	return cmd
}
