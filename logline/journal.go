package logline

import (
	"errors"
	"strings"
	"time"
)

// The errors ParseJournal and the klog header parser return: one value each, since
// they are returned for most lines of text that is not a journal.
var (
	errTimestamp     = errors.New("unreadable timestamp")
	errNoProgram     = errors.New("no program[pid]: after the timestamp")
	errNotJournal    = errors.New("not a journal or klog line")
	errKlogTruncated = errors.New("truncated klog header")
	errKlogTimestamp = errors.New("unreadable klog timestamp")
	errKlogThread    = errors.New("unreadable klog thread id")
)

// ParseJournal parses one line in the three formats a podflow bundle's journals hold:
// journalctl short-iso ("2026-11-29T19:00:01+0000 host kubelet[123]: I1129 …"),
// journalctl short ("Nov 29 19:00:01 host kubelet[123]: …") and bare klog
// ("I1129 19:00:01.123456    123 file.go:42] …"). ref supplies the year and zone for
// formats that lack them: a time that would fall more than a day after ref is taken to be
// in the previous year. problem is set for garbage lines and for entries that are readable
// but damaged (a truncated message). Parse reads every other form too.
func ParseJournal(line string, ref time.Time) (e Entry, kind Kind, problem error) {
	e, kind, problem = ParseJournalQuoted(line, ref)
	e.UnquoteMessage()
	return e, kind, problem
}

// ParseJournalQuoted is ParseJournal that leaves a klog message written in quotes
// ("Pod update broadcasted" pod="ns/name") as it was written, quotes and escapes included,
// until UnquoteMessage: a reader that may leave the entry out from its other fields
// (severity, program, the fields after the message) does not pay for unescaping the
// messages it leaves out. Until then Message is the quoted text.
func ParseJournalQuoted(line string, ref time.Time) (e Entry, kind Kind, problem error) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return e, KindMarker, nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		// A journal line a copy indented (" Feb 12 18:28:24 host kubelet[1234]: …", the
		// first line of a paste) is an entry of its own, not the one above's
		// continuation: no continuation starts with a time and a program.
		t := strings.TrimLeft(line, " \t")
		if len(t) < 16 || !(IsDigit(t[0]) || isMonth(t[:3])) {
			return e, KindContinuation, nil
		}
		if e, kind, problem = ParseJournalQuoted(t, ref); kind != KindEntry || e.Format != FormatJournal || e.Program == "" {
			return Entry{}, KindContinuation, nil
		}
		return e, kind, problem
	}
	if strings.HasPrefix(line, "-- ") {
		return e, KindMarker, nil
	}
	var body string
	switch {
	case IsDigit(line[0]):
		t, rest, ok := parseISOPrefix(line)
		if !ok {
			return e, KindGarbage, errTimestamp
		}
		e.Time = t
		body, ok = e.parseSyslogIdent(rest, true)
		if !ok {
			return e, KindGarbage, errNoProgram
		}
	case isKlogHeaderStart(line):
		if problem = e.parseKlog(line, ref, true); problem != nil {
			return e, KindGarbage, problem
		}
		e.Format = FormatKlog
		return e, KindEntry, nil
	case len(line) > 3 && isMonth(line[:3]):
		t, rest, ok := parseShortPrefix(line, ref, false)
		if !ok {
			return e, KindGarbage, errTimestamp
		}
		e.Time = t
		body, ok = e.parseSyslogIdent(rest, true)
		if !ok {
			return e, KindGarbage, errNoProgram
		}
	default:
		return e, KindGarbage, errNotJournal
	}
	e.Format = FormatJournal
	if isKlogHeaderStart(body) {
		if problem = e.parseKlog(body, e.Time, false); problem != nil {
			// A header that starts like klog but breaks off is a truncated line.
			return e, KindGarbage, problem
		}
		return e, KindEntry, nil
	}
	e.Message = body
	return e, KindEntry, nil
}

// parseISOPrefix reads "2026-11-29T19:00:01[.123456]+0000 " and returns the rest.
func parseISOPrefix(line string) (time.Time, string, bool) {
	sp := strings.IndexByte(line, ' ')
	if sp < 0 {
		return time.Time{}, "", false
	}
	ts := line[:sp]
	if len(ts) < 20 || ts[4] != '-' || ts[10] != 'T' {
		return time.Time{}, "", false // not the shape of either layout: spare time.Parse's error
	}
	if t, ok := parseISOTime(ts); ok {
		return t, line[sp+1:], true
	}
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, ts); err == nil {
			return t, line[sp+1:], true
		}
	}
	return time.Time{}, "", false
}

// isoLayouts are the layouts of journalctl's short-iso and short-iso-precise times.
var isoLayouts = [...]string{"2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00"}

// parseISOTime reads the shape every journal's short-iso time has,
// "2026-11-29T19:00:01[.123456](Z|+0000|+00:00)", to the same time.Time as time.Parse
// with isoLayouts gives, location included; ok is false for anything else (a one-digit
// hour, more than nine digits of fraction, a value out of range), which time.Parse is
// left to read or refuse. time.Parse was a third of the cost of reading a journal line.
func parseISOTime(ts string) (time.Time, bool) {
	if len(ts) < 20 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := atoi(ts[0:4])
	month, ok2 := atoi(ts[5:7])
	day, ok3 := atoi(ts[8:10])
	hour, ok4 := atoi(ts[11:13])
	minute, ok5 := atoi(ts[14:16])
	sec, ok6 := atoi(ts[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := ts[19:]
	nsec := 0
	if len(rest) >= 2 && rest[0] == '.' && IsDigit(rest[1]) {
		j := 1
		for j < len(rest) && IsDigit(rest[j]) {
			j++
		}
		if j > 10 {
			return time.Time{}, false
		}
		nsec = fraction(rest[1:j])
		rest = rest[j:]
	}
	if rest == "Z" {
		return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
	}
	var zh, zm string
	switch {
	case len(rest) == 5:
		zh, zm = rest[1:3], rest[3:5]
	case len(rest) == 6 && rest[3] == ':':
		zh, zm = rest[1:3], rest[4:6]
	default:
		return time.Time{}, false
	}
	h, okh := atoi(zh)
	m, okm := atoi(zm)
	if !okh || !okm || h > 23 || m > 59 || len(zh) != 2 || len(zm) != 2 {
		return time.Time{}, false
	}
	offset := (h*60 + m) * 60
	switch rest[0] {
	case '+':
	case '-':
		offset = -offset
	default:
		return time.Time{}, false
	}
	// As time.Parse: the local zone when it has this offset at that instant, else an
	// unnamed fixed zone.
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(offset) * time.Second)
	if local := t.In(time.Local); localOffset(local) == offset {
		return local, true
	}
	return t.In(time.FixedZone("", offset)), true
}

func localOffset(t time.Time) int {
	_, off := t.Zone()
	return off
}

// daysIn is the number of days of month m of year.
func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int((m-1)%7%2)
}

var months = map[string]time.Month{
	"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
}

func isMonth(s string) bool { _, ok := months[s]; return ok }

// parseShortPrefix reads "Nov 29 19:00:01 " (day may be space-padded); precise also
// accepts short-precise's "Nov 29 19:00:01.123456 ".
func parseShortPrefix(line string, ref time.Time, precise bool) (time.Time, string, bool) {
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
	if len(rest) < 9 {
		return time.Time{}, "", false
	}
	h, m, s, ok := parseClock(rest[:8])
	if !ok {
		return time.Time{}, "", false
	}
	ns := 0
	end := 8
	if precise && rest[8] == '.' {
		j := 9
		for j < len(rest) && IsDigit(rest[j]) {
			j++
		}
		ns = fraction(rest[9:j])
		end = j
	}
	if end >= len(rest) || rest[end] != ' ' {
		return time.Time{}, "", false
	}
	return withYear(ref, mon, day, h, m, s, ns), rest[end+1:], true
}

// fraction turns the digits after a decimal point into nanoseconds.
func fraction(digits string) int {
	if len(digits) > 9 {
		digits = digits[:9]
	}
	n, _ := atoi(digits)
	for k := len(digits); k < 9; k++ {
		n *= 10
	}
	return n
}

// parseSyslogIdent reads "host program[pid]: " and returns the body after it. With
// host false, or when the first word already is "program[pid]:", there is no host.
func (e *Entry) parseSyslogIdent(rest string, host bool) (string, bool) {
	if host {
		sp := strings.IndexByte(rest, ' ')
		if sp < 0 {
			return "", false
		}
		// A host name has no brackets: "2019-04-25T23:30:57Z [FATAL] plugin/loop: ..."
		// is an application's log line (CoreDNS's) with a level, not syslog's.
		if strings.ContainsAny(rest[:sp], "[]") {
			return "", false
		}
		// Nor is a level in capitals: "2023-11-09T11:42:47.586Z ERROR target: …" is a
		// program's log line (Rust's tracing, Go's zap), and no node is named ERROR.
		if sp == 0 || levelWords[rest[:sp]] {
			return "", false
		}
		e.Host = rest[:sp]
		rest = rest[sp+1:]
	}
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

// levelWords are the levels programs print in capitals where syslog has a host name.
var levelWords = map[string]bool{"TRACE": true, "DEBUG": true, "INFO": true, "WARN": true, "WARNING": true,
	"ERROR": true, "FATAL": true, "PANIC": true, "CRITICAL": true}

func isKlogHeaderStart(s string) bool {
	if len(s) < 6 {
		return false
	}
	switch s[0] {
	case 'I', 'W', 'E', 'F':
	default:
		return false
	}
	return IsDigit(s[1]) && IsDigit(s[2]) && IsDigit(s[3]) && IsDigit(s[4]) && s[5] == ' '
}

// parseKlog reads "Lmmdd hh:mm:ss.uuuuuu threadid file:line] message". When bare is
// false, the journal already gave e.Time and the klog time only refines it.
func (e *Entry) parseKlog(s string, ref time.Time, bare bool) error {
	if len(s) < 21 {
		return errKlogTruncated
	}
	mon, ok1 := atoi(s[1:3])
	day, ok2 := atoi(s[3:5])
	h, m, sec, ok3 := parseClock(s[6:14])
	if !ok1 || !ok2 || !ok3 || mon < 1 || mon > 12 || s[14] != '.' {
		return errKlogTimestamp
	}
	j := 15
	for j < len(s) && IsDigit(s[j]) {
		j++
	}
	micros, _ := atoi(s[15:j])
	for k := j - 15; k < 6; k++ {
		micros *= 10
	}
	rest := strings.TrimLeft(s[j:], " ")
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return errKlogTruncated
	}
	tid, ok := atoi(rest[:sp])
	if !ok {
		return errKlogThread
	}
	rest = rest[sp+1:]
	end := strings.Index(rest, "] ")
	if end < 0 {
		if !strings.HasSuffix(rest, "]") {
			return errKlogTruncated
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
	e.Message, e.FieldText, e.quoted = splitMessage(rest)
	return nil
}

// UnquoteMessage turns a message ParseJournalQuoted left quoted into its text; it does
// nothing to any other entry.
func (e *Entry) UnquoteMessage() {
	if e.quoted {
		e.Message, e.quoted = unquote(e.Message), false
	}
}

// splitMessage separates a structured message ("msg" k="v" …) from its fields; an
// unstructured line is all message. A quoted message cut short keeps its text. The
// message of a structured line is returned quoted (quoted is set): UnquoteMessage
// unquotes it.
func splitMessage(rest string) (msg, fields string, quoted bool) {
	if !strings.HasPrefix(rest, `"`) {
		return rest, "", false
	}
	q, err := quotedPrefix(rest)
	if err != nil {
		return strings.TrimPrefix(rest, `"`), "", false
	}
	return q, strings.TrimLeft(rest[len(q):], " "), true
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
