package rules

import (
	"regexp"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// Reading a container's log: its lines with their collection timestamps, the lines that
// report an error, and what the crashed instance's log says about its end.

var (
	// A line of a log that reports an error, in the words programs commonly use.
	reLogError = regexp.MustCompile(`(?i)\b(error|errors|fatal|panic|exception|traceback|failed|failure|refused|denied|cannot|can't|unable|invalid|no such|not found|timed out|timeout|segmentation|sigsegv|sigabrt|core dumped|corrupt|corrupted)\b`)
	// A stack frame rather than a message: indented, "at …", "file.go:12", "goroutine 1",
	// "pkg.fn(args)". Frames name "panic" and "error" without saying what went wrong.
	reStackFrame = regexp.MustCompile(`^(\s|at\s)|\.(go|py|java|js|ts|rb|rs|c|cc|cpp|kt|scala|cs):\d+|^goroutine \d+|^[\w.*/()\[\]]+\(.*\)\s*$`)
)

// rfc3339Prefix matches the timestamp `kubectl logs --timestamps` puts on each line.
var rfc3339Prefix = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) `)

// stripLogTimestamp removes the collection timestamp from a log line.
func stripLogTimestamp(line string) string { return rfc3339Prefix.ReplaceAllString(line, "") }

// logTimestamp reads the collection timestamp of a log line.
func logTimestamp(line string) (time.Time, bool) {
	m := rfc3339Prefix.FindString(line)
	if m == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(m))
	return t, err == nil
}

// usableLog reports whether a log holds output: the kubelet answers "unable to retrieve
// container logs for …" when the instance's log is gone (pkg/kubelet/kuberuntime,
// kuberuntime_container.go), and collection writes that answer as the log.
func usableLog(l *analyze.ContainerLog) bool {
	return l != nil && usableLogText(l.Text())
}

// kubeletLogAnswers are what the kubelet or the API server answer in place of a
// container's log, which a collector or a paste keeps as the log: never the app's
// last line.
var kubeletLogAnswers = regexp.MustCompile(`^(unable to retrieve container logs for |Error from server|failed to try resolving symlinks in path |failed to get parse function: |previous terminated container "[^"]*" in pod "[^"]*" not found|container "[^"]*" in pod "[^"]*" is (waiting to start|terminated)|Internal error occurred: )`)

func usableLogText(text string) bool {
	text = strings.TrimSpace(stripLogTimestamp(strings.TrimSpace(text)))
	return text != "" && !kubeletLogAnswers.MatchString(text)
}

// logLine is one line of a container log with its 1-based line number.
type logLine struct {
	text string
	n    int
}

func logLines(l *analyze.ContainerLog) []logLine {
	text := strings.TrimRight(l.Text(), "\n")
	if text == "" {
		return nil
	}
	parts := strings.Split(text, "\n")
	out := make([]logLine, len(parts))
	for i, s := range parts {
		out[i] = logLine{text: strings.TrimRight(s, "\r"), n: i + 1}
	}
	return out
}

// lastLineMatching returns the last line whose text, timestamp removed, matches re.
func lastLineMatching(l *analyze.ContainerLog, re *regexp.Regexp) (string, int, bool) {
	lines := logLines(l)
	for i := len(lines) - 1; i >= 0; i-- {
		if re.MatchString(stripLogTimestamp(lines[i].text)) {
			return lines[i].text, lines[i].n, true
		}
	}
	return "", 0, false
}

// lineEvidence cites one line of a log by its number.
func lineEvidence(l *analyze.ContainerLog, line logLine, prefix string, at time.Time) analyze.Evidence {
	return l.Loc.Lines(line.n, 0).Evidence(prefix+stripLogTimestamp(line.text), at)
}

// crashLogEvidence cites the last error lines of the crashed instance's log (up to
// three, each by its line number), or its last lines when none reads as an error, and
// returns the line to quote.
func crashLogEvidence(log *analyze.ContainerLog, at time.Time) (string, []analyze.Evidence) {
	cl := readCrashLog(log, at)
	return cl.text, cl.evidence
}

// reShellSignalReport is what a shell prints when a child dies of a signal ("Killed",
// "Terminated", "Segmentation fault (core dumped)"): it confirms the signal but does
// not say why, so the line before it is the one to quote.
var reShellSignalReport = regexp.MustCompile(`(?i)^(killed|terminated|hangup|quit|aborted|bus error|segmentation fault)( \(core dumped\))?$`)

// crashLog is what the crashed instance's log says about its end.
type crashLog struct {
	// text is the most telling line: the last error line, else the last line that is
	// not a shell's signal report.
	text string
	// quote is the last two error lines, or the last two lines when none reads as an
	// error; errors tells which.
	quote    []string
	errors   bool
	evidence []analyze.Evidence
}

// phrase renders the log's end for a cause: `its last error lines are "a" and "b"`.
func (cl crashLog) phrase() string {
	switch {
	case len(cl.quote) == 0:
		return ""
	case cl.errors && len(cl.quote) > 1:
		return "its last error lines are " + phrase.QuoteJoin(cl.quote)
	case cl.errors:
		return "its last error line is " + phrase.QuoteJoin(cl.quote)
	}
	return "its log ends with " + phrase.QuoteJoin(cl.quote)
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

// readCrashLog cites the last error lines of the crashed instance's log (up to three,
// each by its line number), or its last lines when none reads as an error.
func readCrashLog(log *analyze.ContainerLog, at time.Time) crashLog {
	if log == nil {
		return crashLog{}
	}
	lines := logLines(log)
	var errs []logLine
	for i := len(lines) - 1; i >= 0 && len(errs) < 3; i-- {
		text := stripLogTimestamp(lines[i].text)
		if reLogError.MatchString(text) && !reStackFrame.MatchString(text) {
			errs = append([]logLine{lines[i]}, errs...)
		}
	}
	if len(errs) == 0 {
		tail, loc := log.Tail(3)
		if len(tail) == 0 {
			return crashLog{}
		}
		for i := range tail {
			tail[i] = strings.TrimSpace(stripLogTimestamp(tail[i]))
		}
		return crashLog{text: tellingLine(tail), quote: phrase.LastTwo(tail),
			evidence: []analyze.Evidence{loc.Evidence("log ends: "+strings.Join(tail, " | "), at)}}
	}
	cl := crashLog{errors: true, evidence: make([]analyze.Evidence, len(errs))}
	texts := make([]string, len(errs))
	for i, l := range errs {
		cl.evidence[i] = lineEvidence(log, l, "", at)
		texts[i] = strings.TrimSpace(stripLogTimestamp(l.text))
	}
	cl.text, cl.quote = tellingLine(texts), phrase.LastTwo(texts)
	return cl
}
