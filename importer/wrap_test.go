package importer

import (
	"strings"
	"testing"
)

// A line a terminal cut at its width is joined as it was cut; a line that ended before
// the width, or a continuation indented as a column, keeps its line break.
func TestJoinContinuation(t *testing.T) {
	full := strings.Repeat("x", 60) + " failed to setup network for sandbox"
	width := len(full)
	cases := []struct {
		name, msg, prev, line string
		width                 int
		want                  string
	}{
		{"word cut by the terminal", "failed to setup network for s", full, `andbox "ab12": cni config uninitialized`, width,
			`failed to setup network for sandbox "ab12": cni config uninitialized`},
		{"cut before a space, the space at the next line's start", "plugin type=\"bridge\" failed", full, ` (add): no IP`, width,
			`plugin type="bridge" failed (add): no IP`},
		{"path cut by the terminal", "in path [/opt/cni", full, `/bin]`, width, "in path [/opt/cni/bin]"},
		{"a line shorter than the output's width ended there", "first line", "short", "second line", width, "first line\nsecond line"},
		{"an indented continuation is a column", "first line", full, "    second line", width, "first line\nsecond line"},
		{"a wrap by words after an error chain's colon", "manifests/sha256:50aa:", full[:width-1] + ":", "429 Too Many Requests", width,
			"manifests/sha256:50aa:\n429 Too Many Requests"},
		{"a narrow output is not a terminal's wrap", "first", "abc", "second", 3, "first\nsecond"},
	}
	for _, c := range cases {
		if got := joinContinuation(c.msg, c.prev, c.line, c.width); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// A terminal's width shows in an output as lines cut at one column: two lines or more of
// the widest width, or one of a width windows are commonly set to. One long line of any
// other width ended there, and the line after it is not its rest.
func TestWidestLineIsATerminalsWidth(t *testing.T) {
	line := func(n int) textLine { return textLine{s: strings.Repeat("x", n)} }
	for _, c := range []struct {
		name  string
		lines []textLine
		want  int
	}{
		{"two lines cut at one column", []textLine{line(97), line(97), line(40)}, 97},
		{"one line of a common width", []textLine{line(120), line(40)}, 120},
		{"one long line of another width", []textLine{line(243), line(170)}, 0},
	} {
		if got := widestLine(c.lines); got != c.want {
			t.Errorf("%s: widestLine = %d, want %d", c.name, got, c.want)
		}
	}
}
