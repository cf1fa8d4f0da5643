package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// RuntimeCrashExit finds containers whose process starts and then exits with an error.
var RuntimeCrashExit = &analyze.Rule{
	ID:       "runtime-crash-exit",
	Stage:    analyze.StageRuntime,
	Title:    "container process exits with an error",
	Doc:      runtimeCrashExitDoc,
	Catchall: true,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.ContainerLogs, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: runtimeCrashExit,
}

const runtimeCrashExitDoc = `The container's process started and then exited with a non-zero code, and the kubelet
restarts it with a growing back-off (CrashLoopBackOff: 10s, 20s, … up to 5 minutes).
The exit code says how it ended: 1 and 2 are the application's own errors (2 is also
what a Go panic and a shell's usage error return), 128+N means it was killed by signal
N: 137 SIGKILL, 139 SIGSEGV (invalid memory access), 143 SIGTERM (asked to stop). The
last lines of the previous container's log usually say why.

Kills by the OOM killer (reason OOMKilled), by a failing liveness or startup probe,
processes that never started (StartError, exit 126 and 127) and failing init containers
are other rules' findings. 137 without OOMKilled is a SIGKILL from something else: the
runtime after a stop's grace period ran out, a kill -9 on the node, a supervisor.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl logs -n NAMESPACE POD -c CONTAINER --previous --tail=50

## Fix

Fix what the log reports: a missing or wrong setting, a dependency (database, service,
file) that is unreachable or absent, a bug. A process that must wait for a dependency
should retry rather than exit. For 137 without OOMKilled look for what sent SIGKILL; for
139, a native crash (check the binary's architecture and libraries).
`

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
	if l == nil {
		return false
	}
	text := strings.TrimSpace(l.Text())
	return text != "" && !strings.HasPrefix(text, "unable to retrieve container logs for ")
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
	loc := l.Loc
	loc.Line, loc.EndLine = line.n, 0
	return loc.Evidence(prefix+stripLogTimestamp(line.text), at)
}

// exitMeaning explains an exit code the way the process's end is usually read.
func exitMeaning(code int32) string {
	switch code {
	case 1:
		return "a generic application error"
	case 2:
		return "an application error (also what a Go panic and a shell usage error return)"
	case 126:
		return "the command exists but cannot be executed"
	case 134:
		return "SIGABRT: the process aborted itself"
	case 127:
		return "command not found"
	case 137:
		return "SIGKILL: killed from outside"
	case 139:
		return "SIGSEGV: the process crashed on an invalid memory access"
	case 143:
		return "SIGTERM: the process was asked to stop"
	}
	if code > 128 && code < 160 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	return "an error code of the application's own"
}

// crashExitMeaning explains an exit code the rule reports, where the rule's own
// exclusions narrow it: the OOM killer and the kubelet's probe kills are ruled out.
func crashExitMeaning(t *corev1.ContainerStateTerminated) string {
	switch t.ExitCode {
	case 137:
		return fmt.Sprintf("SIGKILL: killed from outside, and not by the OOM killer, since the reason is %s rather than OOMKilled", orText(t.Reason, "empty"))
	case 143:
		return "SIGTERM: the process was asked to stop, and no probe kill or deletion of the pod explains it"
	}
	return exitMeaning(t.ExitCode)
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// crashTermination picks the termination to explain: the current one when the
// container is down, else the last one; with the matching log instance.
func crashTermination(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (*corev1.ContainerStateTerminated, analyze.Location, *analyze.ContainerLog) {
	st := c.Status
	var logs []*analyze.ContainerLog
	t, loc := st.LastTerminationState.Terminated, c.StatusLoc.At("lastState", "terminated")
	switch {
	case st.State.Terminated != nil:
		t, loc = st.State.Terminated, c.StatusLoc.At("state", "terminated")
		logs = []*analyze.ContainerLog{v.Log(p, c.Name, false), v.Log(p, c.Name, true)}
	case st.State.Waiting != nil:
		// While waiting to restart, the "current" log is the crashed instance's too.
		logs = []*analyze.ContainerLog{v.Log(p, c.Name, true), v.Log(p, c.Name, false)}
	default:
		logs = []*analyze.ContainerLog{v.Log(p, c.Name, true)}
	}
	for _, l := range logs {
		if usableLog(l) {
			return t, loc, l
		}
	}
	return t, loc, nil
}

// terminationEvidence cites a container's termination record: reason, exit code and
// when the instance started and finished, dated at its finish.
func terminationEvidence(t *corev1.ContainerStateTerminated, loc analyze.Location) analyze.Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d, started %s, finished %s", t.Reason, t.ExitCode,
		t.StartedAt.UTC().Format(time.RFC3339), t.FinishedAt.UTC().Format(time.RFC3339)), t.FinishedAt.Time)
}

// exitEvidence cites the short form of a termination record: reason, exit code and
// when the instance finished, dated at its finish.
func exitEvidence(t *corev1.ContainerStateTerminated, loc analyze.Location) analyze.Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d, finished %s", t.Reason, t.ExitCode,
		t.FinishedAt.UTC().Format(time.RFC3339)), t.FinishedAt.Time)
}

// crashLoopWindow is how long after a restart a running container still counts as
// crash-looping: the kubelet's back-off tops out at five minutes.
const crashLoopWindow = 10 * time.Minute

// settledRunning reports whether a container has been running for longer than
// crashLoopWindow: whatever its restarts, it no longer crash-loops.
func settledRunning(v *analyze.View, st *corev1.ContainerStatus) bool {
	r := st.State.Running
	return r != nil && v.CollectedAt().Sub(r.StartedAt.Time) > crashLoopWindow
}

func runtimeCrashExit(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, pc := range liveContainers(v) {
		p, c := pc.pod, pc.c
		st := c.Status
		t, loc, log := crashTermination(v, p, c)
		// Processes that never started (StartError, a shell's 126 and 127) are the start
		// rules' findings, and an init container's failure is start-init-container-failed's.
		if t == nil || t.ExitCode == 0 || t.Reason == oomReason || startFailureReasons[t.Reason] ||
			t.ExitCode == exitCommandNotFound || t.ExitCode == exitCannotExecute || blocksStart(c) {
			continue
		}
		if settledRunning(v, st) {
			continue
		}
		if k := probeKill(v, p, c.Name, t); k.found {
			continue
		}
		out = append(out, crashFinding(v, p, c, t, loc, log))
	}
	return out
}

// podWorkloadAndNode lists the pod, its workload and, once scheduled, its node as a
// finding's subjects, and gives the group key of v.PodAndWorkload.
func podWorkloadAndNode(v *analyze.View, p *analyze.Pod) ([]analyze.ObjectRef, string) {
	subjects, group := v.PodAndWorkload(p)
	if node := p.Obj.Spec.NodeName; node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
	}
	return subjects, group
}

func crashFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, t *corev1.ContainerStateTerminated, loc analyze.Location, log *analyze.ContainerLog) analyze.Finding {
	pod := p.Obj
	st := c.Status
	meaning := crashExitMeaning(t)
	evidence := []analyze.Evidence{terminationEvidence(t, loc)}
	state := "has stopped"
	switch {
	case st.State.Waiting != nil:
		w := st.State.Waiting
		state = "waits in " + w.Reason
		evidence = append(evidence, c.StatusLoc.At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{}))
	case st.State.Running != nil:
		state = "runs again for now"
	}
	if e := analyze.LatestEvent(v.EventsFor(p.Ref()), c.Name, "BackOff"); e != nil {
		evidence = append(evidence, e.Evidence())
	}
	cause := fmt.Sprintf("container %s exits with code %d (%s) after %d restart(s) and %s", c.Name, t.ExitCode, meaning, st.RestartCount, state)
	note, cl := exitNotes(v, t, log, "the crashed instance")
	cause += note
	logText := cl.text
	evidence = append(evidence, cl.evidence...)
	subjects, group := podWorkloadAndNode(v, p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: crashFix(c.Name, t.ExitCode, logText),
		Confirm: []string{
			analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=50", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: fmt.Sprintf("%s\x00%s\x00%d", group, c.Name, t.ExitCode),
	}
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

// exitNotes reads what a terminated instance left behind, as clauses to add to a cause:
// its termination message and its log's telling lines, or, when the bundle collected
// logs but not this one, that instance's (e.g. "the crashed instance") log is missing.
// It returns the log it read too.
func exitNotes(v *analyze.View, t *corev1.ContainerStateTerminated, log *analyze.ContainerLog, instance string) (string, crashLog) {
	var note string
	if t.Message != "" {
		note += fmt.Sprintf("; termination message: %q", firstLine(t.Message))
	}
	cl := readCrashLog(log, t.FinishedAt.Time)
	switch {
	case cl.phrase() != "":
		note += "; " + cl.phrase()
	case log == nil && v.Has(analyze.ContainerLogs):
		note += "; " + instance + "'s log is not in the bundle"
	}
	return note, cl
}

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
		return "its last error lines are " + quoteJoin(cl.quote)
	case cl.errors:
		return "its last error line is " + quoteJoin(cl.quote)
	}
	return "its log ends with " + quoteJoin(cl.quote)
}

// quoteJoin quotes lines and joins them: "a" and "b".
func quoteJoin(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, " and ")
}

// lastTwo is the end of a list, at most two items.
func lastTwo(s []string) []string { return s[max(0, len(s)-2):] }

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
		return crashLog{text: tellingLine(tail), quote: lastTwo(tail),
			evidence: []analyze.Evidence{loc.Evidence("log ends: "+strings.Join(tail, " | "), at)}}
	}
	cl := crashLog{errors: true, evidence: make([]analyze.Evidence, len(errs))}
	texts := make([]string, len(errs))
	for i, l := range errs {
		cl.evidence[i] = lineEvidence(log, l, "", at)
		texts[i] = strings.TrimSpace(stripLogTimestamp(l.text))
	}
	cl.text, cl.quote = tellingLine(texts), lastTwo(texts)
	return cl
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

func crashFix(container string, code int32, logText string) string {
	quote := ""
	if logText != "" {
		quote = fmt.Sprintf(" (its log: %q)", logText)
	}
	switch code {
	case 137:
		return fmt.Sprintf("Find what sent SIGKILL to container %s%s: not the OOM killer of its own limit; check the node's kernel log, "+
			"evictions, and anything that runs kill -9 (a watchdog inside the image, an agent on the node).", container, quote)
	case 134, 139:
		return fmt.Sprintf("Container %s crashed in native code%s: check the binary against the image's architecture and libraries, "+
			"and debug the crash.", container, quote)
	case 143:
		return fmt.Sprintf("Find what asked container %s to stop%s (a deletion, a preStop hook, a supervisor inside the image) "+
			"and keep the process running.", container, quote)
	}
	return fmt.Sprintf("Fix the error container %s reports before it exits%s; a process that depends on another service should "+
		"retry rather than exit. The kubelet restarts it on its own.", container, quote)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
