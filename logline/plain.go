package logline

import (
	"strings"
	"unicode/utf8"
)

// Plain undoes what the way from a component to a ticket does to a message's
// characters, so that it reads as the component printed it:
//
//   - typographic quotes an editor, a chat client or a web page put in place of the
//     component's ASCII quotes (“ ” „ « » become ", ‘ ’ ‚ become '), also when
//     they arrive JSON-escaped (\u201c);
//   - no-break spaces (U+00A0, U+202F, and \u00a0) instead of spaces;
//   - the box-drawing characters of a terminal UI's table (k9s, Lens, a TUI's panes)
//     copied with the text: a border (│, ─, ┃, …) stands between two cells and becomes
//     a space, and a doubled vertical border with only spaces round it (" ││ ", a
//     row's right border then its continuation's left border) is where the UI wrapped
//     a value that was one run of text, so the two parts join again.
//
// Text that holds none of these is returned as it is, without a copy.
func Plain(s string) string {
	if !needsPlain(s) {
		return s
	}
	if strings.Contains(s, `\u`) {
		s = escapedReplacer.Replace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isVerticalBorder(r):
			if j, ok := wrappedBorder(s, i); ok {
				// " ││ ": a value wrapped at the UI's border; the spaces before it are
				// the row's padding.
				trimmed := strings.TrimRight(b.String(), " ")
				b.Reset()
				b.WriteString(trimmed)
				i = j
				continue
			}
			b.WriteByte(' ')
		case isBoxDrawing(r):
			b.WriteByte(' ')
		case r == '\u00a0' || r == '\u202f' || r == '\u2007':
			b.WriteByte(' ')
		default:
			if q, ok := plainQuote(r); ok {
				b.WriteByte(q)
			} else {
				b.WriteString(s[i : i+size])
			}
		}
		i += size
	}
	return b.String()
}

// needsPlain reports whether s holds anything Plain changes: every character it
// rewrites is outside ASCII, or an escaped one (\u).
func needsPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\\' && i+1 < len(s) && s[i+1] == 'u' {
			return true
		}
	}
	return false
}

// escapedReplacer turns the JSON escapes of typographic quotes and no-break spaces
// into what they stand for in ASCII.
var escapedReplacer = strings.NewReplacer(
	`\u201c`, `"`, `\u201d`, `"`, `\u201e`, `"`, `\u201C`, `"`, `\u201D`, `"`, `\u201E`, `"`,
	`\u00ab`, `"`, `\u00bb`, `"`, `\u00AB`, `"`, `\u00BB`, `"`,
	`\u2018`, `'`, `\u2019`, `'`, `\u201a`, `'`, `\u201A`, `'`,
	`\u00a0`, ` `, `\u00A0`, ` `,
)

// plainQuote is the ASCII quote a typographic quote stands for.
func plainQuote(r rune) (byte, bool) {
	switch r {
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u00ab', '\u00bb', '\u2033', '\uff02':
		return '"', true
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '\uff07':
		return '\'', true
	}
	return 0, false
}

// isBoxDrawing reports whether r is one of the Unicode box-drawing characters
// (U+2500–U+257F) terminal UIs draw tables and panes with.
func isBoxDrawing(r rune) bool { return r >= '\u2500' && r <= '\u257f' }

// isVerticalBorder reports whether r is a box-drawing vertical line: a table's column
// or pane border.
func isVerticalBorder(r rune) bool {
	switch r {
	case '│', '┃', '║', '╎', '╏', '┆', '┇', '┊', '┋':
		return true
	}
	return false
}

// wrappedBorder reports whether two vertical borders start at s[i] with only spaces
// round them and text on both sides (" ││ "), and where the text after them starts.
func wrappedBorder(s string, i int) (int, bool) {
	if i == 0 || s[i-1] != ' ' || strings.TrimSpace(s[:i]) == "" {
		return 0, false
	}
	j := i
	n := 0
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !isVerticalBorder(r) {
			break
		}
		n++
		j += size
	}
	if n != 2 || j >= len(s) || s[j] != ' ' {
		return 0, false
	}
	k := j
	for k < len(s) && s[k] == ' ' {
		k++
	}
	if k == len(s) {
		return 0, false
	}
	return k, true
}
