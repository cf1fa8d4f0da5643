package logline

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is one message of a text and the lines it spans: a line, or a line and the
// lines that continue it.
type Message struct {
	// Text is the message with its continuation lines joined to it.
	Text string
	// First and Last are the 0-based indexes of its first and last line.
	First, Last int
}

// maxValueLines bounds a klog multi-line value: a value whose closing line a paste lost
// ends there, or at the next log entry, whichever comes first.
const maxValueLines = 200

// JoinMessages groups lines into the messages they print. A line continues the message
// before it when it is:
//
//   - a line of a klog multi-line value: structured klog prints a value that holds a
//     newline as `key=<`, the value's lines indented by a tab, and ` >` (klog's
//     text serializer); pastes often lose the indentation, so the value runs to its ` >`
//     or to the next log entry, with or without the journal prefix journald adds to
//     every line of the program's output;
//   - a line journald split from its entry: the same host, program and PID, and a body
//     that is indented (the rest of a multi-line message written to a stream);
//   - a line journalctl printed for a multi-line message: indented under its journal
//     entry;
//   - the rest of a systemctl status line the terminal wrapped: a line at the margin,
//     neither a status line nor a log entry, after a long status line;
//   - the rest of a log entry a terminal cut at its width: a line at the margin, no log
//     entry of its own, after an entry exactly as wide as the text's widest lines
//     (wrapWidth);
//   - the "(pod: …, container: …)" a kubelet error ends with, alone on the next line.
//
// Lines that continue nothing are messages of their own; blank lines end every
// continuation but a klog value's. The joined text reads as one line: a klog value's
// lines are joined with a space between `<` and `>`, a journal continuation with a
// space, a wrapped line with nothing.
func JoinMessages(lines []string) []Message { return join(lines, true) }

// Joined is JoinMessages' messages of more than one line only: what a reader that keeps
// the lines of a text needs to join, without a Message for every line.
func Joined(lines []string) []Message { return join(lines, false) }

func join(lines []string, all bool) []Message {
	var out []Message
	if all {
		out = make([]Message, 0, len(lines))
	}
	width := wrapWidth(lines)
	for i := 0; i < len(lines); {
		m := Message{Text: lines[i], First: i, Last: i}
		i++
		switch {
		case opensValue(bodyOf(lines[m.First])):
			i = m.joinValue(lines, i)
		case isEntry(lines[m.First]):
			i = m.joinEntry(lines, i, width)
		case isStatusKeyLine(lines[m.First]):
			i = m.joinWrapped(lines, i)
		}
		if i < len(lines) && strings.TrimSpace(lines[m.First]) != "" && rePodQuoteTail.MatchString(lines[i]) {
			m.Text = strings.TrimRight(m.Text, " \t\r") + " " + strings.TrimSpace(lines[i])
			m.Last = i
			i++
		}
		if all || m.Last > m.First {
			out = append(out, m)
		}
	}
	return out
}

// joinValue appends a klog multi-line value's lines from i; it returns the index of the
// first line after it.
func (m *Message) joinValue(lines []string, i int) int {
	var b strings.Builder
	b.WriteString(strings.TrimRight(lines[m.First], " \t\r"))
	prefix := journalPrefix(lines[m.First])
	for n := 0; i < len(lines) && n < maxValueLines; n++ {
		l := strings.TrimRight(lines[i], "\r")
		body := l
		if prefix != "" {
			p := journalPrefix(l)
			if p != "" && p != prefix {
				break
			}
			if p != "" {
				body = bodyOf(l)
			}
		}
		t := strings.TrimSpace(body)
		if t != "" && !startsIndented(body) && isEntryBody(t) {
			// The next entry: the paste lost the value's closing line.
			break
		}
		m.Last = i
		i++
		if t == ">" || strings.HasPrefix(t, "> ") {
			// klog closes the value with " >" and writes the entry's next keys after
			// it on the same line (` > pod="ns/name" podUID=…`).
			b.WriteString(t)
			m.Text = b.String()
			return i
		}
		if t != "" {
			if !strings.HasSuffix(b.String(), "<") {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
	m.Text = b.String()
	return i
}

// IsKlogHeader reports whether a line is a bare klog entry: "Lmmdd hh:mm:ss" at its
// start, no journal prefix before it.
func IsKlogHeader(line string) bool { return isKlogHeaderStart(line) }

// maxKlogRestLines bounds the lines of a klog message that holds newlines.
const maxKlogRestLines = 3

// KlogRest is how many lines from i continue the bare klog entry before them: klog
// writes a message that holds newlines as it is, its rest at the margin ("fit failure
// summary on nodes : Insufficient cpu (1); retrying" under the scheduler's "Error
// scheduling …"). They are its rest when the klog lines go on right after them: a line
// between two entries of one log is the first one's; at the text's end only one line
// that ends no sentence is.
func KlogRest(lines []string, i int) int {
	n := 0
	for ; n < maxKlogRestLines && i+n < len(lines); n++ {
		l := strings.TrimRight(lines[i+n], "\r")
		if t := strings.TrimSpace(l); t == "" || isKlogHeaderStart(t) || isEntry(l) {
			break
		}
	}
	if n == 0 {
		return 0
	}
	j := i + n
	if j < len(lines) && isKlogHeaderStart(strings.TrimSpace(lines[j])) {
		return n
	}
	// At the text's end (or a blank line), one line that does not end a sentence: a
	// reporter's words after a pasted entry end in a full stop, a colon or a question.
	last := strings.TrimSpace(lines[i])
	if n == 1 && (j == len(lines) || strings.TrimSpace(lines[j]) == "") && last != "" && !strings.ContainsRune(".:?!", rune(last[len(last)-1])) {
		return 1
	}
	return 0
}

// joinEntry appends the lines that continue a log entry from i: its journal
// continuations, the indented lines journalctl prints under it, and the rest of a bare
// klog message that holds newlines.
func (m *Message) joinEntry(lines []string, i int, width wrap) int {
	prefix := journalPrefix(lines[m.First])
	if first := lines[m.First]; prefix == "" && isKlogHeaderStart(first) && !width.cut(lines, i) {
		if n := KlogRest(lines, i); n > 0 {
			text := strings.TrimRight(first, " \t\r")
			for k := i; k < i+n; k++ {
				text += " " + strings.TrimSpace(lines[k])
			}
			m.Text, m.Last = text, i+n-1
			return i + n
		}
	}
	var b strings.Builder
	for ; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r")
		var t string
		switch {
		case width.cut(lines, i):
			// The terminal cut the line above inside its text: the rest goes on
			// where the cut fell, without a space.
			if b.Len() == 0 {
				b.WriteString(strings.TrimRight(lines[m.First], "\r"))
			}
			b.WriteString(strings.TrimRight(l, " \t"))
			m.Last = i
			m.Text = b.String()
			continue
		case prefix != "" && journalPrefix(l) == prefix && startsIndented(bodyOf(l)):
			t = strings.TrimSpace(bodyOf(l))
		case prefix != "" && startsIndented(l) && strings.TrimSpace(l) != "" && !isStatusKeyLine(l):
			t = strings.TrimSpace(l)
		default:
			return i
		}
		if b.Len() == 0 {
			b.WriteString(strings.TrimRight(lines[m.First], " \t\r"))
		}
		if t != "" {
			b.WriteByte(' ')
			b.WriteString(t)
		}
		m.Last = i
		m.Text = b.String()
	}
	return i
}

// wrap is the width a terminal cut a text's long lines at, and whether the text shows
// it on two lines or more (else it is a common terminal's width, seen once).
type wrap struct {
	width int
	seen  bool
}

// MinTerminalWidth is the narrowest terminal a wrap is assumed at.
const MinTerminalWidth = 80

// commonWidths are widths a terminal window is often set to: one line of such a width
// may be a line the terminal cut.
var commonWidths = map[int]bool{80: true, 100: true, 120: true, 128: true, 132: true, 140: true, 150: true, 160: true, 180: true, 200: true}

// CommonTerminalWidth reports whether a terminal window is often set to width columns:
// a single line that wide may be one the terminal cut.
func CommonTerminalWidth(width int) bool { return commonWidths[width] }

// wrapWidth is the width of the terminal that cut a text's lines: the width of its
// widest lines, when two or more are exactly that wide and end differently (a terminal
// cuts every long line at its width, wherever the cut falls; one message logged again
// ends as it did) or it is a common terminal's; else none.
func wrapWidth(lines []string) wrap {
	return TerminalWrapOf(len(lines), func(i int) string { return lines[i] }).w
}

// wrapEnd is how much of a line's end tells two cut lines apart.
const wrapEnd = 16

// reLineStart is the start of a line that begins something of its own after a log
// entry: a Go panic or its goroutines, a fatal error, a client's "error:", a
// stack trace.
var reLineStart = regexp.MustCompile(`(?i)^(?:panic|fatal error|goroutine \d|error|warning|caused by|traceback|exception)\b`)

// cut reports whether lines[i] is the rest of lines[i-1] that a terminal cut at its
// width: the line above is exactly that wide, and lines[i] is text at the margin that
// starts no log entry, fence, marker or trace, nor a sentence after a word the line
// above ended (a reporter's words after a log line). At a width seen once the cut must
// fall inside a lower-case word ("Running with sw" / "ap on is not supported"), or
// after a space.
func (w wrap) cut(lines []string, i int) bool {
	if w.width == 0 || i <= 0 || i >= len(lines) {
		return false
	}
	return w.cutPair(lines[i-1], lines[i])
}

// cutPair is cut of a line l and the line prev above it.
func (w wrap) cutPair(prev, l string) bool {
	if w.width == 0 {
		return false
	}
	prev = strings.TrimRight(prev, "\r")
	l = strings.TrimRight(l, "\r")
	if utf8.RuneCountInString(prev) != w.width || strings.TrimSpace(l) == "" || startsIndented(l) ||
		strings.HasPrefix(l, "```") || strings.HasPrefix(l, "-- ") || strings.HasPrefix(l, "...") ||
		reLineStart.MatchString(l) || isEntryBody(l) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(prev)
	first, _ := utf8.DecodeRuneInString(l)
	if w.seen {
		return last == ' ' || !(first >= 'A' && first <= 'Z')
	}
	return (last == ' ' || last >= 'a' && last <= 'z') && first >= 'a' && first <= 'z'
}

// minWrapWidth is the shortest line a terminal is taken to have wrapped: narrower
// terminals than 60 columns are rare, and a shorter status line ends where it ends.
const minWrapWidth = 60

// joinWrapped appends to a systemctl status line the rest the terminal wrapped onto the
// next lines.
func (m *Message) joinWrapped(lines []string, i int) int {
	for ; i < len(lines); i++ {
		prev := strings.TrimRight(lines[i-1], "\r")
		l := strings.TrimRight(lines[i], "\r")
		if len(prev) < minWrapWidth || l == "" || startsIndented(l) || isEntry(l) || isStatusHeader(l) {
			return i
		}
		m.Text = strings.TrimRight(m.Text, "\r") + l
		m.Last = i
	}
	return i
}

// rePodQuoteTail is the end of a kubelet error that quotes its pod and container
// (kuberuntime's "… cannot verify user is non-root (pod: %q, container: %s)", the pod
// as k8s.io/kubernetes pkg/kubelet/util/format Pod prints it, NAME_NAMESPACE(UID)) alone
// on a line: a paste broke the message before it.
var rePodQuoteTail = regexp.MustCompile(`^\s*\(pod: \\?"[a-z0-9][-a-z0-9.]*_[a-z0-9][-a-z0-9]*\([0-9a-f-]{36}\)\\?", container: [a-z0-9][-a-z0-9]*\)\s*$`)

func startsIndented(s string) bool { return s != "" && (s[0] == ' ' || s[0] == '\t') }

// opensValue reports whether a log line's body ends by opening a klog multi-line value
// (`key=<`).
func opensValue(body string) bool {
	t := strings.TrimRight(body, " \t\r")
	if !strings.HasSuffix(t, "=<") || len(t) < 3 {
		return false
	}
	k := t[:len(t)-2]
	j := len(k)
	for j > 0 && isKeyByte(k[j-1]) {
		j--
	}
	return j < len(k) && (j == 0 || k[j-1] == ' ' || k[j-1] == '\t' || k[j-1] == ']')
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || IsDigit(c) || c == '_' || c == '-' || c == '.' || c == '/'
}

// isEntry reports whether a line is a log entry (a journal line, a klog or logrus line,
// a kernel line).
func isEntry(line string) bool {
	if line == "" || startsIndented(line) {
		return false
	}
	e, kind, _ := Parse(line, time.Time{})
	return kind == KindEntry && e.Format != FormatStatus
}

// isEntryBody reports whether the body of a journal line, or a line without a journal
// prefix, starts a log entry of its own: a klog header, or a journal line.
func isEntryBody(t string) bool {
	if isKlogHeaderStart(t) {
		return true
	}
	return isEntry(t)
}

// isStatusKeyLine reports whether a line is a systemctl status key line ("  Active: …",
// "  Process: …").
func isStatusKeyLine(line string) bool {
	if !startsIndented(line) {
		return false
	}
	e, ok := parseStatusLine(strings.TrimRight(line, "\r"))
	return ok && e.Format == FormatStatus
}

// isStatusHeader reports whether a line is a systemctl status line of any kind.
func isStatusHeader(line string) bool {
	_, ok := parseStatusLine(line)
	return ok
}

// journalPrefix is a journal line's prefix without its time: "host program[pid]:", or
// "" when the line has no journal prefix.
func journalPrefix(line string) string {
	p, _ := splitJournal(line)
	return p
}

// bodyOf is a journal line's body after its prefix, unchanged (indentation kept); the
// line itself when it has no journal prefix.
func bodyOf(line string) string {
	p, body := splitJournal(line)
	if p == "" {
		return line
	}
	return body
}

// splitJournal splits a journal line into its prefix without the time and its body.
func splitJournal(line string) (prefix, body string) {
	// A copy may indent the first line of a journal it pastes.
	line = strings.TrimLeft(line, " \t")
	if len(line) < 16 || !(IsDigit(line[0]) || isMonth(line[:3])) {
		return "", ""
	}
	e, kind, _ := ParseJournal(line, time.Time{})
	if kind != KindEntry || e.Format != FormatJournal || e.Program == "" {
		return "", ""
	}
	tag := e.Program + ":"
	if e.PID != 0 {
		tag = e.Program + "[" + strconv.Itoa(int(e.PID)) + "]:"
	}
	i := strings.Index(line, " "+tag)
	if i < 0 {
		return "", ""
	}
	end := i + 1 + len(tag)
	return e.Host + " " + tag, strings.TrimPrefix(line[end:], " ")
}

// ValueEnd is the index of the first line after the message that starts at line i when
// that line opens a klog multi-line value (`key=<`), i+1 otherwise: the lines a reader
// must keep with line i whatever they look like.
func ValueEnd(lines []string, i int) int {
	if i >= len(lines) || !strings.Contains(lines[i], "=<") || !opensValue(bodyOf(lines[i])) {
		return i + 1
	}
	m := Message{Text: lines[i], First: i, Last: i}
	return m.joinValue(lines, i+1)
}

// Wrap is the width a terminal cut a text's lines at (TerminalWrapOf), for readers that
// keep the lines of a text apart but must not split an entry from the rest the cut left
// on the lines below it.
type Wrap struct{ w wrap }

// TerminalWrapOf is the width a terminal cut n lines at, when they show one; line(i) is
// the i-th line as its reader holds it, so no copy of them is made.
func TerminalWrapOf(n int, line func(int) string) Wrap {
	w, ends := 0, 0
	var end string
	for i := range n {
		l := strings.TrimSuffix(line(i), "\r")
		k := utf8.RuneCountInString(l)
		e := l[max(0, len(l)-wrapEnd):]
		switch {
		case k > w:
			w, ends, end = k, 1, e
		case k == w && e != end:
			ends++
		}
	}
	if w < MinTerminalWidth || ends < 2 && !commonWidths[w] {
		return Wrap{}
	}
	return Wrap{wrap{width: w, seen: ends >= 2}}
}

// Cuts reports whether the text shows a terminal's width at all.
func (w Wrap) Cuts() bool { return w.w.width > 0 }

// EntryEnd is the index after the lines that continue the log entry line(i) of n lines
// where a terminal cut it at its width ("error=clusterinform" / "ations.crd… not
// found"); i+1 when line(i) is no entry or nothing continues it.
func (w Wrap) EntryEnd(n int, line func(int) string, i int) int {
	j := i + 1
	first := line(i)
	if w.w.width == 0 || utf8.RuneCountInString(strings.TrimRight(first, "\r")) != w.w.width || !isEntry(first) {
		return j
	}
	for j < n && w.w.cutPair(line(j-1), line(j)) {
		j++
	}
	return j
}
