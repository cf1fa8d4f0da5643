package analyze

import (
	"regexp"
	"strings"
	"time"

	"podflow.dev/podflow/internal/phrase"
)

// Reading a container's log: its lines with their collection timestamps, the lines that
// report an error, and what the crashed instance's log says about its end.

var (
	// A line of a log that reports an error, in the words programs commonly use.
	reLogError = regexp.MustCompile(`(?i)\b(error|errors|fatal|panic|exception|traceback|failed|failure|refused|denied|cannot|can't|unable|invalid|no such|not found|timed out|timeout|segmentation|sigsegv|sigabrt|core dumped|corrupt|corrupted|(?:prerequisites|requirements|dependencies) not met)\b|[a-z](?:Exception|Error)\b`)
	// A stack frame rather than a message: indented, "at …", "file.go:12", "goroutine 1",
	// "pkg.fn(args)". Frames name "panic" and "error" without saying what went wrong.
	reStackFrame = regexp.MustCompile(`^(\s|at\s)|\.(go|py|java|js|ts|rb|rs|c|cc|cpp|kt|scala|cs):\d+|^goroutine \d+|^[\w.*/()\[\]]+\(.*\)\s*$`)
)

// rfc3339Prefix matches the timestamp `kubectl logs --timestamps` puts on each line.
var rfc3339Prefix = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) `)

// StripLogTimestamp removes the collection timestamp from a log line.
func StripLogTimestamp(line string) string { return rfc3339Prefix.ReplaceAllString(line, "") }

// LogTimestamp reads the collection timestamp of a log line.
func LogTimestamp(line string) (time.Time, bool) {
	m := rfc3339Prefix.FindString(line)
	if m == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(m))
	return t, err == nil
}

// UsableLog reports whether a log holds output: the kubelet answers "unable to retrieve
// container logs for …" when the instance's log is gone (pkg/kubelet/kuberuntime,
// kuberuntime_container.go), and collection writes that answer as the log.
func UsableLog(l *ContainerLog) bool {
	return l != nil && usableLogText(l.Text())
}

// kubeletLogAnswers are what the kubelet or the API server answer in place of a
// container's log, which a collector or a paste keeps as the log: never the app's
// last line.
var kubeletLogAnswers = regexp.MustCompile(`^(unable to retrieve container logs for |Error from server|failed to try resolving symlinks in path |failed to get parse function: |previous terminated container "[^"]*" in pod "[^"]*" not found|container "[^"]*" in pod "[^"]*" is (waiting to start|terminated)|Internal error occurred: )`)

func usableLogText(text string) bool {
	text = strings.TrimSpace(StripLogTimestamp(strings.TrimSpace(text)))
	return text != "" && !kubeletLogAnswers.MatchString(text)
}

// LogLine is one line of a container log with its 1-based line number.
type LogLine struct {
	Text string
	N    int
}

// LogLines splits a log into its lines, numbered from 1, carriage returns removed.
func LogLines(l *ContainerLog) []LogLine {
	text := strings.TrimRight(l.Text(), "\n")
	if text == "" {
		return nil
	}
	parts := strings.Split(text, "\n")
	out := make([]LogLine, len(parts))
	for i, s := range parts {
		out[i] = LogLine{Text: strings.TrimRight(s, "\r"), N: i + 1}
	}
	return out
}

// LastLineMatching returns the last line whose text, timestamp removed, matches re.
func LastLineMatching(l *ContainerLog, re *regexp.Regexp) (string, int, bool) {
	lines := LogLines(l)
	for i := len(lines) - 1; i >= 0; i-- {
		if re.MatchString(StripLogTimestamp(lines[i].Text)) {
			return lines[i].Text, lines[i].N, true
		}
	}
	return "", 0, false
}

// LineEvidence cites one line of a log by its number.
func LineEvidence(l *ContainerLog, line LogLine, prefix string, at time.Time) Evidence {
	return l.Loc.Lines(line.N, 0).Evidence(prefix+StripLogTimestamp(line.Text), at)
}

// CrashLogEvidence cites the last error lines of the crashed instance's log (up to
// three, each by its line number), or its last lines when none reads as an error, and
// returns the line to quote.
func CrashLogEvidence(log *ContainerLog, at time.Time) (string, []Evidence) {
	cl := ReadCrashLog(log, at)
	return cl.Text, cl.Evidence
}

// reShellSignalReport is what a shell prints when a child dies of a signal ("Killed",
// "Terminated", "Segmentation fault (core dumped)"): it confirms the signal but does
// not say why, so the line before it is the one to quote.
var reShellSignalReport = regexp.MustCompile(`(?i)^(killed|terminated|hangup|quit|aborted|bus error|segmentation fault)( \(core dumped\))?$`)

// CrashLog is what the crashed instance's log says about its end.
type CrashLog struct {
	// Text is the most telling line: the last error line, else the last line that is
	// not a shell's signal report.
	Text string
	// Quote is the last two error lines, or the last two lines when none reads as an
	// error; Errors tells which.
	Quote    []string
	Errors   bool
	Evidence []Evidence
}

// Phrase renders the log's end for a cause: `its last error lines are "a" and "b"`.
func (cl CrashLog) Phrase() string {
	switch {
	case len(cl.Quote) == 0:
		return ""
	case cl.Errors && len(cl.Quote) > 1:
		return "its last error lines are " + phrase.QuoteJoin(cl.Quote)
	case cl.Errors:
		return "its last error line is " + phrase.QuoteJoin(cl.Quote)
	}
	return "its log ends with " + phrase.QuoteJoin(cl.Quote)
}

// tellingLine is the last line that is not a shell's signal report, else the last line.
func tellingLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if !reShellSignalReport.MatchString(lines[i]) {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

// ReadCrashLog cites the last error lines of the crashed instance's log (up to three,
// each by its line number), or its last lines when none reads as an error.
func ReadCrashLog(log *ContainerLog, at time.Time) CrashLog {
	if log == nil {
		return CrashLog{}
	}
	lines := LogLines(log)
	var errs []LogLine
	for i := len(lines) - 1; i >= 0 && len(errs) < 3; i-- {
		text := StripLogTimestamp(lines[i].Text)
		if reLogError.MatchString(text) && !reStackFrame.MatchString(text) {
			errs = append([]LogLine{lines[i]}, errs...)
		}
	}
	if len(errs) == 0 {
		tail, loc := log.Tail(3)
		if len(tail) == 0 {
			return CrashLog{}
		}
		for i := range tail {
			tail[i] = strings.TrimSpace(StripLogTimestamp(tail[i]))
		}
		return CrashLog{Text: tellingLine(tail), Quote: phrase.LastTwo(tail),
			Evidence: []Evidence{loc.Evidence("log ends: "+strings.Join(tail, " | "), at)}}
	}
	cl := CrashLog{Errors: true, Evidence: make([]Evidence, len(errs))}
	texts := make([]string, len(errs))
	for i, l := range errs {
		cl.Evidence[i] = LineEvidence(log, l, "", at)
		texts[i] = strings.TrimSpace(StripLogTimestamp(l.Text))
	}
	if last := len(texts) - 1; strings.HasSuffix(texts[last], ":") && errs[last].N < len(lines) {
		// An error that ends in a colon says what on the next line (a Java exception's
		// "Multiple plugin prerequisites not met:" and the first of them).
		if next := strings.TrimSpace(StripLogTimestamp(lines[errs[last].N].Text)); next != "" && !reStackFrame.MatchString(next) {
			texts[last] += " " + next
		}
	}
	cl.Text, cl.Quote = tellingLine(texts), phrase.LastTwo(texts)
	return cl
}
