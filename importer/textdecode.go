package importer

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText turns pasted text into UTF-8 as podflow reads it: UTF-16 (what
// PowerShell 5.1's > writes, with a byte order mark, and what some editors save
// without one) is decoded, a UTF-8 byte order mark is dropped, and stray NUL bytes
// (a terminal's padding, a truncated write) are taken out so that one of them does
// not make a paste "binary". Data with many NULs that is not UTF-16 is left as it
// is: it is binary. Line breaks stay where they were, so line numbers hold.
func decodeText(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return fromUTF16(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return fromUTF16(data[2:], true)
	default:
		if bigEndian, ok := looksUTF16(data); ok {
			return fromUTF16(data, bigEndian)
		}
	}
	if n := bytes.Count(data, []byte{0}); n > 0 && n*10 < len(data) {
		data = bytes.ReplaceAll(data, []byte{0}, nil)
	}
	return unquote(data)
}

// nbsp is U+00A0 in UTF-8: what a web page or a mail client puts in place of the
// spaces that indent kubectl's output.
var nbsp = []byte{0xC2, 0xA0}

// unquote undoes what a mail or chat client does to a paste: no-break spaces instead
// of spaces, and every line quoted with "> " (once or more, "> > "). Only a quote
// that every non-blank line carries is taken off, so a log line that starts with '>'
// stays as it is.
func unquote(data []byte) []byte {
	if bytes.Contains(data, nbsp) {
		data = bytes.ReplaceAll(data, nbsp, []byte{' '})
	}
	if bytes.Contains(data, bold) {
		data = unbold(data)
	}
	if bytes.ContainsAny(data, frameRunes) {
		data = unframe(data)
	}
	if first := bytes.TrimLeft(data, " \t\r\n"); len(first) == 0 || first[0] != '>' {
		return dedentCode(data)
	}
	depth := -1
	for line := range bytes.Lines(data) {
		if len(bytes.Trim(line, "> \t\r\n")) == 0 {
			continue // blank, or only quote marks
		}
		d := quoteDepth(line)
		if depth < 0 || d < depth {
			depth = d
		}
		if depth == 0 {
			return data
		}
	}
	if depth <= 0 {
		return data
	}
	out := make([]byte, 0, len(data))
	for line := range bytes.Lines(data) {
		for range depth {
			line = bytes.TrimPrefix(line, []byte{'>'})
			line = bytes.TrimPrefix(line, []byte{' '})
		}
		out = append(out, line...)
	}
	return dedentCode(out)
}

// minCodeIndent is the indent Markdown makes a code block of.
const minCodeIndent = 4

// reTopLevelStart is how a paste's first line starts when it is a whole output at its
// first column: a shell prompt or a command, a table's header, a describe's or a
// manifest's first key, JSON, a log line's time or level.
var reTopLevelStart = regexp.MustCompile(`^(?:[$#] |\[[^\]\n]*\][#$] |[\w.@-]+[:~][^\n]{0,60}[#$] |(?:kubectl|helm|oc|k|crictl|docker|journalctl|systemctl|microk8s|k3s)\s|NAME\s|NAMESPACE\s|LAST SEEN\s|Name:\s|apiVersion:|kind:|Events:|Type\s+Reason\s|\{|\[|[A-Z][a-z]{2} {1,2}\d|\d{4}-\d\d-\d\d|[IWEF]\d{4} |time=|level=|Error|error|Warning|E\d{4})`)

// dedentCode takes off the indent every non-blank line of a paste shares, when it is a
// Markdown code block's (four spaces or more: a whole paste from a forum or a mail
// indented as code), so that output keeps the columns its component printed it at.
// What a line is indented by beyond that stays.
func dedentCode(data []byte) []byte {
	common := -1
	for line := range bytes.Lines(data) {
		body := bytes.TrimRight(line, " \t\r\n")
		if len(body) == 0 {
			continue
		}
		n := len(body) - len(bytes.TrimLeft(body, " "))
		if common < 0 || n < common {
			common = n
		}
		if common < minCodeIndent {
			return data
		}
	}
	if common < minCodeIndent {
		return data
	}
	first := bytes.TrimLeft(data, " \t\r\n")
	if !reTopLevelStart.Match(first[:min(len(first), 200)]) {
		// A describe's container section (State:, Limits:) or a manifest's nested keys
		// pasted alone are indented as their output was: the readers know them so.
		return data
	}
	out := make([]byte, 0, len(data))
	for line := range bytes.Lines(data) {
		if len(bytes.TrimRight(line, " \t\r\n")) == 0 {
			out = append(out, bytes.TrimLeft(line, " \t")...)
			continue
		}
		out = append(out, line[common:]...)
	}
	return out
}

// bold is markdown's strong emphasis mark.
var bold = []byte("**")

// unbold takes off the strong emphasis a reporter puts around a whole pasted line
// ("**Warning  FailedCreatePodSandBox  88s  kubelet  Failed create pod sandbox: …**"),
// which hides the event's columns from every reader. A line with emphasis inside it
// keeps it: only a line that is emphasised from end to end was the component's.
func unbold(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for line := range bytes.Lines(data) {
		body := bytes.TrimRight(line, " \t\r\n")
		indent := len(body) - len(bytes.TrimLeft(body, " \t"))
		inner := body[indent:]
		if len(inner) > 4 && bytes.HasPrefix(inner, bold) && bytes.HasSuffix(inner, bold) &&
			!bytes.Contains(inner[2:len(inner)-2], bold) && len(bytes.TrimSpace(inner[2:len(inner)-2])) > 0 {
			out = append(out, body[:indent]...)
			out = append(out, bytes.TrimSpace(inner[2:len(inner)-2])...)
			out = append(out, line[len(body):]...)
			continue
		}
		out = append(out, line...)
	}
	return out
}

// frameRunes are the vertical lines a terminal UI (k9s, a tmux or screen pane, a
// dashboard's log view) draws at a pane's edges.
const frameRunes = "│┃║"

// unframe mends a message a terminal UI's pane wrapped when the copy began inside the
// pane, right of its left edge: the first line ends at the pane's right edge
// ("… command error: EOF, │") and the rest starts at its left edge on the next line
// ("│  stdout: conmon: option parsing failed: …"). The edges are taken off, the first
// line keeps the one space it wrapped at and the rest starts at the margin, which is how
// every reader of a wrapped message knows it goes on. Lines framed on both sides or on
// the left only are the line reader's (unbox); a bar inside a line stays.
func unframe(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte{'\n'})
	for i := 0; i+1 < len(lines); i++ {
		body := bytes.TrimRight(lines[i], " \t\r\n")
		if frameRuneAt(body, false) || !frameEdgeAtEnd(body) {
			continue
		}
		next := bytes.TrimLeft(lines[i+1], " \t")
		if !frameRuneAt(next, true) || frameEdgeAtEnd(bytes.TrimRight(next, " \t\r\n")) {
			continue
		}
		_, size := utf8.DecodeLastRune(body)
		kept := append(bytes.TrimRight(body[:len(body)-size], " \t"), ' ')
		lines[i] = append(kept, lines[i][len(bytes.TrimRight(lines[i], "\r\n")):]...)
		_, size = utf8.DecodeRune(next)
		lines[i+1] = bytes.TrimLeft(next[size:], " \t")
		i++
	}
	return bytes.Join(lines, nil)
}

// frameRuneAt reports whether line starts with a pane's edge (after its indent), or,
// with start false, whether it starts with one at all.
func frameRuneAt(line []byte, start bool) bool {
	if !start {
		line = bytes.TrimLeft(line, " \t")
	}
	r, size := utf8.DecodeRune(line)
	return size > 1 && strings.ContainsRune(frameRunes, r)
}

// frameEdgeAtEnd reports whether a line (its end trimmed) ends with a pane's edge set
// apart by a space.
func frameEdgeAtEnd(body []byte) bool {
	r, size := utf8.DecodeLastRune(body)
	return size > 1 && strings.ContainsRune(frameRunes, r) && len(body) > size &&
		(body[len(body)-size-1] == ' ' || body[len(body)-size-1] == '\t')
}

// quoteDepth counts the "> " quote marks a line starts with.
func quoteDepth(line []byte) int {
	d := 0
	for len(line) > 0 && line[0] == '>' {
		d++
		line = bytes.TrimPrefix(line[1:], []byte{' '})
	}
	return d
}

// looksUTF16 tells UTF-16 without a byte order mark from its first 8 KiB: text in
// it is mostly ASCII, so one byte of nearly every pair is NUL, always the same one.
func looksUTF16(data []byte) (bigEndian, ok bool) {
	head := data[:min(len(data), 8192)&^1]
	if len(head) < 4 {
		return false, false
	}
	var even, odd int
	for i := 0; i < len(head); i += 2 {
		if head[i] == 0 {
			even++
		}
		if head[i+1] == 0 {
			odd++
		}
	}
	pairs := len(head) / 2
	switch {
	case odd*10 >= pairs*7 && even*20 < pairs:
		return false, true
	case even*10 >= pairs*7 && odd*20 < pairs:
		return true, true
	}
	return false, false
}

func fromUTF16(data []byte, bigEndian bool) []byte {
	units := make([]uint16, len(data)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		} else {
			units[i] = uint16(data[2*i+1])<<8 | uint16(data[2*i])
		}
	}
	out := make([]byte, 0, len(units)+len(units)/8)
	for _, r := range utf16.Decode(units) {
		if r == 0 {
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}
