package importer

import (
	"strings"
	"unicode/utf8"

	"podflow.dev/podflow/logline"
)

// A terminal wraps a line longer than its width at exactly that column, inside a word
// or a path if one runs across it, and a copy of the screen turns the wrap into a line
// break: "failed to setup network for s" / "andbox". kubectl prints an event's message
// on its row, so a line that continues a row's message came from such a wrap when the
// line before it is exactly as wide as the widest of the output (every wrapped line is
// the terminal's width; a line that ends earlier ended there). The continuation is
// joined as the terminal cut it, a space at its start kept; any other keeps the line
// break the output shows. A line indented by two or more is a column, not a wrap.

// minTerminalWidth is the narrowest terminal a wrap is assumed at.
const minTerminalWidth = logline.MinTerminalWidth

// joinContinuation appends a line that continues a message: prev is the physical line
// before it, as given, and width the widest line of the output.
func joinContinuation(msg, prev, line string, width int) string {
	if strings.HasSuffix(prev, " ") && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
		// A line that wrapped at a space (a terminal UI's box pads it, and unbox
		// keeps one): its rest goes on after a space.
		return strings.TrimRight(msg, " ") + " " + strings.TrimSpace(line)
	}
	if terminalWrap(prev, line, width) {
		return msg + strings.TrimRight(line, " \t\r")
	}
	return msg + "\n" + strings.TrimSpace(line)
}

// terminalWrap tells whether line is the rest of prev, cut by a terminal. A line that
// ends in ":", "," or ";" before one at the margin was broken where a space stood (an
// error chain's ": " never loses its space to a terminal's cut): a wrap by words, whose
// widest line is a long word, not a terminal's width.
func terminalWrap(prev, line string, width int) bool {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t") {
		return false
	}
	if width < minTerminalWidth || utf8.RuneCountInString(prev) != width {
		// One long row the terminal cut, at a width no other line shows: the cut
		// is inside a lower-case word ("starting containe" / "r process caused"); a
		// line that starts with a capital or a symbol starts lines of its own.
		return utf8.RuneCountInString(prev) >= minTerminalWidth && lowerChar(lastRune(prev)) && lowerChar(firstRune(line))
	}
	return !strings.ContainsRune(":,;", lastRune(prev)) || strings.HasPrefix(line, " ")
}

func lastRune(s string) rune  { r, _ := utf8.DecodeLastRuneInString(s); return r }
func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }

// lowerChar tells a lower-case ASCII letter: what a cut inside a word leaves on both
// sides.
func lowerChar(r rune) bool { return r >= 'a' && r <= 'z' }

// widestLine is the width of the terminal that wrapped an output, when its lines show
// one: the width of its widest line, when two lines or more are exactly that wide (a
// terminal cuts every long line at its width) or the width is a common terminal's;
// else 0. A single long line of any other width (an event row 243 characters long) is a
// line the terminal did not cut, and the line after it is not its rest.
func widestLine(lines []textLine) int {
	w, n := 0, 0
	for _, l := range lines {
		switch c := utf8.RuneCountInString(l.s); {
		case c > w:
			w, n = c, 1
		case c == w:
			n++
		}
	}
	if n < 2 && !logline.CommonTerminalWidth(w) {
		return 0
	}
	return w
}
