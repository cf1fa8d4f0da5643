package analyze

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// JournalEntry is one line of a kubelet or container runtime journal: the klog header
// (severity, time, thread, file:line), the message and the structured key="value" pairs,
// which are parsed only when asked for.
type JournalEntry struct {
	// Time is the journal's timestamp, refined to microseconds from the klog header.
	Time time.Time
	// Severity is the klog level letter: 'I', 'W', 'E' or 'F'; 0 for lines without a klog
	// header (systemd messages, plain text).
	Severity byte
	// PID is the journal's process ID, or the klog thread ID for bare klog lines.
	PID int32
	// Program is the journal identifier, e.g. "kubelet"; empty for bare klog lines.
	Program string
	// Source is the klog file:line, e.g. "pod_workers.go:1338".
	Source  string
	Message string
	fields  string
	file    *sourceFile
	line    int32
	endLine int32
}

// sourceFile is a node file entries were read from; entries share it to stay small.
type sourceFile struct {
	bundle string
	path   string
	node   string
}

// Node is the node whose journal holds the entry.
func (e *JournalEntry) Node() string {
	if e.file == nil {
		return ""
	}
	return e.file.node
}

// Loc is where the entry is: journal path and line (range, for multi-line entries).
func (e *JournalEntry) Loc() Location {
	l := Location{Line: int(e.line)}
	if e.endLine > e.line {
		l.EndLine = int(e.endLine)
	}
	if e.file != nil {
		l.Bundle, l.Path = e.file.bundle, e.file.path
	}
	return l
}

// Evidence cites the entry with its message and error.
func (e *JournalEntry) Evidence() Evidence {
	text := e.Message
	if err, ok := e.Field("err"); ok {
		text += ": " + err
	}
	return e.Loc().Evidence(text, e.Time)
}

// EvidenceAround cites the entry with an excerpt centred on needle.
func (e *JournalEntry) EvidenceAround(needle string) Evidence {
	ev := e.Evidence()
	text := e.Message
	if err, ok := e.Field("err"); ok {
		text += ": " + err
	}
	ev.Excerpt = ExcerptAround(text, needle)
	return ev
}

// Field is one key/value pair of a structured log line.
type Field struct {
	Key   string
	Value string
}

// Field returns the value of key, unquoted, and whether the line has it.
func (e *JournalEntry) Field(key string) (string, bool) {
	var v string
	found := false
	scanFields(e.fields, func(k, raw string) bool {
		if k == key {
			v, found = fieldValue(raw), true
			return false
		}
		return true
	})
	return v, found
}

// Fields returns every key/value pair, values unquoted, in line order.
func (e *JournalEntry) Fields() []Field {
	var out []Field
	scanFields(e.fields, func(k, raw string) bool {
		out = append(out, Field{Key: k, Value: fieldValue(raw)})
		return true
	})
	return out
}

// LineKind says what ParseJournalLine found on a line.
type LineKind int

// Kinds of journal lines.
const (
	// LineEntry is a log entry (possibly with a problem, e.g. a truncated message).
	LineEntry LineKind = iota
	// LineContinuation continues the previous entry's multi-line value.
	LineContinuation
	// LineMarker is a journalctl marker such as "-- Boot 3f2a… --" or "-- No entries --".
	LineMarker
	// LineGarbage is a line podflow cannot read.
	LineGarbage
)

// ParseJournalLine parses one line in any of the three formats podflow reads:
// journalctl short-iso ("2026-11-29T19:00:01+0000 host kubelet[123]: I1129 …"),
// journalctl short ("Nov 29 19:00:01 host kubelet[123]: …") and bare klog
// ("I1129 19:00:01.123456    123 file.go:42] …"). ref supplies the year and zone for
// formats that lack them: a time that would fall more than a day after ref is taken to be
// in the previous year. problem is set for garbage lines and for entries that are readable
// but damaged (a truncated message).
func ParseJournalLine(line string, ref time.Time) (e JournalEntry, kind LineKind, problem error) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return e, LineMarker, nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		return e, LineContinuation, nil
	}
	if strings.HasPrefix(line, "-- ") {
		return e, LineMarker, nil
	}
	var body string
	switch {
	case isDigit(line[0]):
		t, rest, ok := parseISOPrefix(line)
		if !ok {
			return e, LineGarbage, errors.New("unreadable timestamp")
		}
		e.Time = t
		body, ok = e.parseSyslogIdent(rest)
		if !ok {
			return e, LineGarbage, errors.New("no program[pid]: after the timestamp")
		}
	case isKlogHeaderStart(line):
		if problem = e.parseKlog(line, ref, true); problem != nil {
			return e, LineGarbage, problem
		}
		return e, LineEntry, nil
	case len(line) > 3 && isMonth(line[:3]):
		t, rest, ok := parseShortPrefix(line, ref)
		if !ok {
			return e, LineGarbage, errors.New("unreadable timestamp")
		}
		e.Time = t
		body, ok = e.parseSyslogIdent(rest)
		if !ok {
			return e, LineGarbage, errors.New("no program[pid]: after the timestamp")
		}
	default:
		return e, LineGarbage, errors.New("not a journal or klog line")
	}
	if isKlogHeaderStart(body) {
		if problem = e.parseKlog(body, e.Time, false); problem != nil {
			// A header that starts like klog but breaks off is a truncated line.
			return e, LineGarbage, problem
		}
		return e, LineEntry, nil
	}
	e.Message = body
	return e, LineEntry, nil
}

// parseISOPrefix reads "2026-11-29T19:00:01[.123456]+0000 " and returns the rest.
func parseISOPrefix(line string) (time.Time, string, bool) {
	sp := strings.IndexByte(line, ' ')
	if sp < 0 {
		return time.Time{}, "", false
	}
	ts := line[:sp]
	for _, layout := range []string{"2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00"} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t, line[sp+1:], true
		}
	}
	return time.Time{}, "", false
}

var months = map[string]time.Month{
	"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
}

func isMonth(s string) bool { _, ok := months[s]; return ok }

// parseShortPrefix reads "Nov 29 19:00:01 " (day may be space-padded).
func parseShortPrefix(line string, ref time.Time) (time.Time, string, bool) {
	mon := months[line[:3]]
	rest := strings.TrimLeft(line[3:], " ")
	sp := strings.IndexByte(rest, ' ')
	if sp < 1 || sp > 2 {
		return time.Time{}, "", false
	}
	day, ok := atoi(rest[:sp])
	if !ok {
		return time.Time{}, "", false
	}
	rest = rest[sp+1:]
	if len(rest) < 9 || rest[8] != ' ' {
		return time.Time{}, "", false
	}
	h, m, s, ok := parseClock(rest[:8])
	if !ok {
		return time.Time{}, "", false
	}
	return withYear(ref, mon, day, h, m, s, 0), rest[9:], true
}

// parseSyslogIdent reads "host program[pid]: " and returns the body after it.
func (e *JournalEntry) parseSyslogIdent(rest string) (string, bool) {
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return "", false
	}
	rest = rest[sp+1:]
	colon := strings.Index(rest, ": ")
	ident := rest
	body := ""
	if colon >= 0 {
		ident, body = rest[:colon], rest[colon+2:]
	} else if strings.HasSuffix(rest, ":") {
		ident = rest[:len(rest)-1]
	} else {
		return "", false
	}
	if strings.ContainsAny(ident, " ") {
		return "", false
	}
	if i := strings.IndexByte(ident, '['); i >= 0 && strings.HasSuffix(ident, "]") {
		pid, ok := atoi(ident[i+1 : len(ident)-1])
		if !ok {
			return "", false
		}
		e.PID = int32(pid)
		ident = ident[:i]
	}
	e.Program = ident
	return body, true
}

func isKlogHeaderStart(s string) bool {
	if len(s) < 6 {
		return false
	}
	switch s[0] {
	case 'I', 'W', 'E', 'F':
	default:
		return false
	}
	return isDigit(s[1]) && isDigit(s[2]) && isDigit(s[3]) && isDigit(s[4]) && s[5] == ' '
}

// parseKlog reads "Lmmdd hh:mm:ss.uuuuuu threadid file:line] message". When bare is
// false, the journal already gave e.Time and the klog time only refines it.
func (e *JournalEntry) parseKlog(s string, ref time.Time, bare bool) error {
	if len(s) < 21 {
		return errors.New("truncated klog header")
	}
	mon, ok1 := atoi(s[1:3])
	day, ok2 := atoi(s[3:5])
	h, m, sec, ok3 := parseClock(s[6:14])
	if !ok1 || !ok2 || !ok3 || mon < 1 || mon > 12 || s[14] != '.' {
		return errors.New("unreadable klog timestamp")
	}
	j := 15
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	micros, _ := atoi(s[15:j])
	for k := j - 15; k < 6; k++ {
		micros *= 10
	}
	rest := strings.TrimLeft(s[j:], " ")
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return errors.New("truncated klog header")
	}
	tid, ok := atoi(rest[:sp])
	if !ok {
		return errors.New("unreadable klog thread id")
	}
	rest = rest[sp+1:]
	end := strings.Index(rest, "] ")
	if end < 0 {
		if !strings.HasSuffix(rest, "]") {
			return errors.New("truncated klog header")
		}
		end = len(rest) - 1
	}
	e.Severity = s[0]
	e.Source = rest[:end]
	if bare {
		e.PID = int32(tid)
		e.Time = withYear(ref, time.Month(mon), day, h, m, sec, micros*1000)
	} else if e.Time.Hour() == h && e.Time.Minute() == m && e.Time.Second() == sec && e.Time.Nanosecond() == 0 {
		e.Time = e.Time.Add(time.Duration(micros) * time.Microsecond)
	}
	if end+2 <= len(rest) {
		rest = rest[end+2:]
	} else {
		rest = ""
	}
	e.Message, e.fields = splitMessage(rest)
	return nil
}

// splitMessage separates a structured message ("msg" k="v" …) from its fields; an
// unstructured line is all message. A quoted message cut short keeps its text.
func splitMessage(rest string) (msg, fields string) {
	if !strings.HasPrefix(rest, `"`) {
		return rest, ""
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return strings.TrimPrefix(rest, `"`), ""
	}
	return unquote(q), strings.TrimLeft(rest[len(q):], " ")
}

// scanFields walks key=value pairs; value is raw (still quoted). It stops at anything
// it cannot read, so a damaged tail costs only the fields after the damage.
func scanFields(s string, fn func(key, raw string) bool) {
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.IndexByte(s[:eq], ' ') >= 0 {
			return
		}
		key := s[:eq]
		s = s[eq+1:]
		n := valueLen(s)
		if n < 0 {
			return
		}
		if !fn(key, s[:n]) {
			return
		}
		s = s[n:]
	}
}

// valueLen is the length of the raw value at the start of s, or -1 when it is broken.
func valueLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '"':
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return -1
		}
		return len(q)
	case '[', '{':
		return bracketLen(s)
	case '<':
		// klog's multi-line value marker: the value continues on the next lines.
		return len(s)
	}
	if sp := strings.IndexByte(s, ' '); sp >= 0 {
		return sp
	}
	return len(s)
}

// bracketLen finds the end of a [...] or {...} value, skipping quoted strings inside.
func bracketLen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return -1
			}
			i += len(q) - 1
		}
	}
	return -1
}

func fieldValue(raw string) string {
	if strings.HasPrefix(raw, `"`) {
		return unquote(raw)
	}
	return raw
}

// unquote removes Go quoting; it avoids a copy when there is nothing to unescape.
func unquote(q string) string {
	if len(q) >= 2 && strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	if u, err := strconv.Unquote(q); err == nil {
		return u
	}
	return strings.Trim(q, `"`)
}

// ListValue splits a list value such as ["ns/a" "ns/b"] or [ns/a ns/b] into its items.
func ListValue(v string) []string {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	v = v[1 : len(v)-1]
	var out []string
	for v = strings.TrimLeft(v, " ,"); v != ""; v = strings.TrimLeft(v, " ,") {
		if v[0] == '"' {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return out
			}
			out = append(out, unquote(q))
			v = v[len(q):]
			continue
		}
		end := strings.IndexAny(v, " ,")
		if end < 0 {
			end = len(v)
		}
		out = append(out, v[:end])
		v = v[end:]
	}
	return out
}

func parseClock(s string) (h, m, sec int, ok bool) {
	if len(s) != 8 || s[2] != ':' || s[5] != ':' {
		return 0, 0, 0, false
	}
	h, ok1 := atoi(s[0:2])
	m, ok2 := atoi(s[3:5])
	sec, ok3 := atoi(s[6:8])
	return h, m, sec, ok1 && ok2 && ok3 && h < 24 && m < 60 && sec < 61
}

// withYear places a month/day/time without a year in the year of ref, or the year
// before when that would put it more than a day after ref (a December line read in January).
func withYear(ref time.Time, mon time.Month, day, h, m, s, ns int) time.Time {
	loc := ref.Location()
	if ref.IsZero() {
		loc = time.UTC
	}
	t := time.Date(ref.Year(), mon, day, h, m, s, ns, loc)
	if !ref.IsZero() && t.After(ref.Add(24*time.Hour)) {
		t = time.Date(ref.Year()-1, mon, day, h, m, s, ns, loc)
	}
	return t
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// atoi parses a short run of decimal digits without allocating.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
