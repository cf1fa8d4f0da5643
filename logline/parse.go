package logline

import (
	"strconv"
	"strings"
	"time"
)

// Parse reads one line in any form logline knows: what ParseJournal reads, journalctl's
// short-precise and short-full forms and any short form without the host name, logrus
// text (time="…" level=error msg="…", WARN[…] msg), logfmt lines with a level= key,
// systemctl status header lines and kernel lines (dmesg's [seconds] or [date] prefix,
// journalctl -k's "kernel:" program). ref supplies the year and zone where the line lacks
// them. A journal line whose body is logrus or logfmt text takes its severity, message and
// fields from the body; kernel OOM lines are errors.
func Parse(line string, ref time.Time) (e Entry, kind Kind, problem error) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return e, KindMarker, nil
	}
	if st, ok := parseStatusLine(line); ok {
		return st, KindEntry, nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		// A journal line a copy indented (ParseJournal's, or a short form it does not
		// read) is an entry of its own, not the one above's continuation.
		if e, kind, problem := ParseJournal(line, ref); kind == KindEntry {
			return e, kind, problem
		}
		if t := strings.TrimLeft(line, " \t"); len(t) > 3 && isMonth(t[:3]) {
			if e, kind, problem := Parse(t, ref); kind == KindEntry && e.Format == FormatJournal {
				return e, kind, problem
			}
		}
		return e, KindContinuation, nil
	}
	if strings.HasPrefix(line, "-- ") {
		return e, KindMarker, nil
	}
	e, kind, problem = ParseJournal(line, ref)
	if kind == KindGarbage {
		if alt, ok := parseOther(line, ref); ok {
			return alt, KindEntry, nil
		}
		return e, kind, problem
	}
	if kind == KindEntry && e.Format == FormatJournal && e.Severity == 0 {
		e.refineBody()
	}
	return e, kind, problem
}

// parseOther reads the forms ParseJournal does not.
func parseOther(line string, ref time.Time) (Entry, bool) {
	var e Entry
	switch {
	case len(line) > 3 && isMonth(line[:3]):
		t, rest, ok := parseShortPrefix(line, ref, true)
		if !ok {
			return e, false
		}
		return e.journalBody(t, rest)
	case len(line) > 4 && isWeekday(line[:4]):
		// short-full: "Sun 2026-11-29 19:00:01 UTC host prog[pid]: …"
		f := strings.SplitN(line, " ", 5)
		if len(f) < 5 {
			return e, false
		}
		t, err := time.Parse("2006-01-02 15:04:05 MST", f[1]+" "+f[2]+" "+f[3])
		if err != nil {
			return e, false
		}
		return e.journalBody(t, f[4])
	case IsDigit(line[0]):
		if t, rest, ok := parseISOPrefix(line); ok {
			return e.journalBody(t, rest)
		}
		if t, rest, ok := parseSpacedISO(line); ok {
			if b, ok := parseBracketLevel(rest); ok {
				b.Time = t
				return b, true
			}
			return e.journalBody(t, rest)
		}
	case line[0] == '[':
		return parseKernel(line)
	}
	if e, ok := parseLogrusTTY(line); ok {
		return e, true
	}
	return parseLogfmt(line)
}

// parseBracketLevel reads what calico, felix and other CNI plugins print after the time:
// "[ERROR][4035329] plugin.go 121: message" (the pid and the source are optional).
func parseBracketLevel(rest string) (Entry, bool) {
	var e Entry
	if !strings.HasPrefix(rest, "[") {
		return e, false
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return e, false
	}
	sev, ok := levels[strings.ToLower(rest[1:end])]
	if !ok {
		return e, false
	}
	rest = rest[end+1:]
	if strings.HasPrefix(rest, "[") {
		if end := strings.IndexByte(rest, ']'); end > 0 {
			if pid, ok := atoi(rest[1:end]); ok {
				e.PID = int32(pid)
				rest = rest[end+1:]
			}
		}
	}
	rest = strings.TrimLeft(rest, " ")
	if src, msg, ok := strings.Cut(rest, ": "); ok && strings.Contains(src, ".go") && !strings.Contains(msg, "\x00") {
		e.Source, rest = src, msg
	}
	e.Severity, e.Message, e.Format = sev, rest, FormatBracket
	return e, true
}

// parseSpacedISO reads "2026-11-29 19:00:01[.123] " (and a zone word if present).
func parseSpacedISO(line string) (time.Time, string, bool) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 {
		return time.Time{}, "", false
	}
	t, err := time.Parse("2006-01-02 15:04:05", f[0]+" "+f[1])
	if err != nil {
		return time.Time{}, "", false
	}
	rest := f[2]
	if zone, after, ok := strings.Cut(rest, " "); ok && zone != "" && (zone == "UTC" || zone == "GMT" || zone[0] == '+' || zone[0] == '-') {
		rest = after
	}
	return t, rest, true
}

var weekdays = map[string]bool{"Mon ": true, "Tue ": true, "Wed ": true, "Thu ": true, "Fri ": true, "Sat ": true, "Sun ": true}

func isWeekday(s string) bool { return weekdays[s] }

// journalBody reads "host prog[pid]: body" or "prog[pid]: body" after a journal time.
func (e Entry) journalBody(t time.Time, rest string) (Entry, bool) {
	e.Time = t
	first, _, _ := strings.Cut(rest, " ")
	host := !(strings.HasSuffix(first, ":") && (strings.HasSuffix(first, "]:") || isProgram(first[:len(first)-1])))
	body, ok := e.parseSyslogIdent(rest, host)
	if !ok {
		// A host name and a body without program: rare, but it is not a journal line.
		return e, false
	}
	e.Format = FormatJournal
	if isKlogHeaderStart(body) {
		if e.parseKlog(body, e.Time, false) == nil {
			e.UnquoteMessage()
			return e, true
		}
	}
	e.Message = body
	e.refineBody()
	return e, true
}

// isProgram tells a bare program name ("kernel", "containerd").
func isProgram(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || IsDigit(c) || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// refineBody takes the severity, message and fields from a journal body that is logrus
// or logfmt text, and marks kernel OOM lines.
func (e *Entry) refineBody() {
	body := e.Message
	if b, ok := parseLogfmt(body); ok {
		e.Severity, e.Message, e.FieldText = b.Severity, b.Message, b.FieldText
		if !b.Time.IsZero() && e.Time.IsZero() {
			e.Time = b.Time
		}
		return
	}
	if b, ok := parseLogrusTTY(body); ok {
		e.Severity, e.Message, e.FieldText = b.Severity, b.Message, b.FieldText
		return
	}
	if e.Program == "kernel" {
		e.Severity, e.FieldText = kernelSeverity(body)
	}
}

// levels maps logrus and logfmt level words to klog severities.
var levels = map[string]byte{
	"panic": 'F', "fatal": 'F', "error": 'E', "err": 'E', "warning": 'W', "warn": 'W',
	"info": 'I', "debug": 'D', "trace": 'D',
	"PANI": 'F', "FATA": 'F', "ERRO": 'E', "WARN": 'W', "INFO": 'I', "DEBU": 'D', "TRAC": 'D',
}

// parseLogfmt reads key=value text that holds a level= key: logrus' text formatter
// (containerd, CRI-O, dockerd), with or without time=.
func parseLogfmt(line string) (Entry, bool) {
	var e Entry
	if !strings.Contains(line, "level=") {
		return e, false
	}
	var msgSet bool
	n := 0
	ScanFields(line, func(k, raw string) bool {
		n++
		v := FieldValue(raw)
		switch k {
		case "level":
			sev, ok := levels[strings.ToLower(v)]
			if ok {
				e.Severity = sev
			}
		case "time", "ts":
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05"} {
				if t, err := time.Parse(layout, v); err == nil {
					e.Time = t
					break
				}
			}
		case "msg":
			e.Message, msgSet = v, true
		}
		return true
	})
	if e.Severity == 0 || n < 2 {
		return Entry{}, false
	}
	if !msgSet {
		e.Message = line
	}
	e.FieldText = line
	e.Format = FormatLogfmt
	if !e.Time.IsZero() {
		e.Format = FormatLogrus
	}
	return e, true
}

// parseLogrusTTY reads logrus' terminal form: "ERRO[0001] message   key=value" or
// "WARN[2025-01-02T03:04:05Z] message".
func parseLogrusTTY(line string) (Entry, bool) {
	var e Entry
	if len(line) < 7 || line[4] != '[' {
		return e, false
	}
	sev, ok := levels[line[:4]]
	if !ok {
		return e, false
	}
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return e, false
	}
	stamp := line[5:end]
	if t, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
		e.Time = t
	} else if t, err := time.Parse("2006-01-02T15:04:05Z0700", stamp); err == nil {
		e.Time = t
	} else if _, err := strconv.Atoi(stamp); err != nil {
		return e, false
	}
	rest := strings.TrimLeft(line[end+1:], " ")
	e.Severity, e.Format = sev, FormatLogrus
	// The message is padded; fields follow after a gap of two or more spaces.
	if i := strings.Index(rest, "  "); i >= 0 {
		tail := strings.TrimLeft(rest[i:], " ")
		if k, _, ok := strings.Cut(tail, "="); ok && !strings.ContainsAny(k, " \"") {
			e.Message, e.FieldText = rest[:i], tail
			return e, true
		}
	}
	e.Message = strings.TrimRight(rest, " ")
	return e, true
}

// parseKernel reads a dmesg line: "[12345.678901] msg" or "[Sun Nov 29 19:00:01 2026] msg".
func parseKernel(line string) (Entry, bool) {
	var e Entry
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return e, false
	}
	inner := strings.TrimSpace(line[1:end])
	// dmesg prints its uptime with microseconds ("%5lu.%06lu"): a bracketed whole
	// number is an item of a list ("[1]: max virtual memory areas … is too low").
	if f, err := strconv.ParseFloat(inner, 64); err == nil && f >= 0 && strings.Contains(inner, ".") {
		e.Uptime = f
	} else if t, err := time.Parse("Mon Jan _2 15:04:05 2006", inner); err == nil {
		e.Time = t
	} else {
		return e, false
	}
	e.Program, e.Format = "kernel", FormatKernel
	e.Message = strings.TrimSpace(line[end+1:])
	e.Severity, e.FieldText = kernelSeverity(e.Message)
	return e, true
}

// kernelSeverity marks the kernel's OOM lines as errors and turns the oom-kill summary
// ("oom-kill:constraint=…,task=java,pid=123,uid=0") into key=value fields.
func kernelSeverity(msg string) (byte, string) {
	if rest, ok := strings.CutPrefix(msg, "oom-kill:"); ok {
		return 'E', strings.ReplaceAll(rest, ",", " ")
	}
	for _, s := range []string{"Out of memory", "out of memory", "Killed process", "oom_reaper", "invoked oom-killer", "Memory cgroup stats"} {
		if strings.Contains(msg, s) {
			return 'E', ""
		}
	}
	return 0, ""
}

// statusKeys are the keys systemctl status prints under the unit's header line.
var statusKeys = []string{"Loaded:", "Active:", "Main PID:", "Process:", "Docs:", "Drop-In:", "CGroup:",
	"Tasks:", "Memory:", "CPU:", "Status:", "TriggeredBy:", "IO:", "IP:", "Invocation:", "Mem peak:"}

// parseStatusLine reads a systemctl status header line: "● kubelet.service - The
// Kubernetes Node Agent" (Program kubelet) or an indented "Active: failed (Result:
// exit-code) since …" (an error when the unit failed or restarts, or a process exited
// with a status other than 0).
func parseStatusLine(line string) (Entry, bool) {
	var e Entry
	t := strings.TrimSpace(line)
	for _, dot := range []string{"● ", "○ ", "× ", "* "} {
		rest, ok := strings.CutPrefix(t, dot)
		if !ok {
			continue
		}
		unit, desc, _ := strings.Cut(rest, " - ")
		name, isUnit := unitName(unit)
		if !isUnit {
			return e, false
		}
		e.Program, e.Message, e.Format = name, strings.TrimSpace(desc), FormatStatus
		e.FieldText = "unit=" + strconv.Quote(unit)
		if dot == "× " {
			e.Severity = 'E'
		}
		return e, true
	}
	if !strings.HasPrefix(line, " ") {
		return e, false
	}
	for _, k := range statusKeys {
		v, ok := strings.CutPrefix(t, k)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		e.Format, e.Message = FormatStatus, t
		e.FieldText = strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(k, ":"), " ", "")) + "=" + strconv.Quote(v)
		switch {
		case k == "Active:" && (strings.HasPrefix(v, "failed") || strings.Contains(v, "auto-restart") || strings.Contains(v, "Result: ")):
			e.Severity = 'E'
		case (k == "Process:" || k == "Main PID:") && strings.Contains(v, "status=") && !strings.Contains(v, "status=0/SUCCESS") && !strings.Contains(v, "status=0)"):
			e.Severity = 'E'
		}
		return e, true
	}
	return e, false
}

// unitName is the program a systemd unit runs: "kubelet.service" → "kubelet".
func unitName(unit string) (string, bool) {
	for _, suf := range []string{".service", ".socket", ".scope", ".mount", ".timer"} {
		if name, ok := strings.CutSuffix(unit, suf); ok && isProgram(name) {
			return name, true
		}
	}
	return "", false
}
