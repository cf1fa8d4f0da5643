package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"podflow.dev/podflow/analyze"
)

// Processes that could not start: the reasons the kubelet and runtime give, the failure
// read from status, events and journal, and what the start rules cite about it.

// Reasons the kubelet and the runtime give when a container's process could not start
// (pkg/kubelet/container/sync_result.go ErrRunContainer; containerd's CRI "StartError").
var startFailureReasons = map[string]bool{
	"RunContainerError": true, "CreateContainerError": true, "StartError": true, "ContainerCannotRun": true,
}

// exitCommandNotFound is the POSIX shell's exit status for a command it cannot find.
const exitCommandNotFound = 127

// startFailure is a container's failure to start, from wherever the bundle says it.
type startFailure struct {
	command  string
	kind     string // "missing", "path", "enoent" or "shell"
	said     string
	exitCode int32
	evidence []analyze.Evidence
}

// execMatcher finds, in a runtime's message, the executable it could not run: its
// path, a kind for the cause, and the words that say so.
type execMatcher func(msg string) (command, kind, said string, ok bool)

// runtimeStartFailure finds a start failure match recognizes in the container's waiting
// state, its start-failure terminations, its latest "Error: " event, and cites the
// kubelet's journal line (an error line journalSays is about it) and crictl's record.
func runtimeStartFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, match execMatcher, journalSays func(string) bool) (startFailure, bool) {
	var sf startFailure
	for _, s := range startFailureSources(v, p, c, "exec") {
		cmd, kind, said, ok := match(s.msg)
		if !ok {
			continue
		}
		if sf.kind == "" {
			sf.command, sf.kind, sf.said = cmd, kind, said
		}
		if s.exit != 0 {
			sf.exitCode = s.exit
		}
		sf.evidence = append(sf.evidence, s.ev)
	}
	if sf.kind == "" {
		return sf, false
	}
	sf.evidence = append(sf.evidence, startNodeEvidence(v, p, c, sf.command, journalSays)...)
	return sf, true
}

// startSource is one place the bundle reports a container's failure to start: the
// message, its evidence, and the exit code when it is a termination.
type startSource struct {
	msg  string
	ev   analyze.Evidence
	exit int32
}

// startFailureSources lists, in order, the container's waiting state and terminations
// whose reason is a start failure and its latest "Error: " event, each excerpt centred
// on around.
func startFailureSources(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, around string) []startSource {
	st := c.Status
	var sources []startSource
	if w := st.State.Waiting; w != nil && startFailureReasons[w.Reason] {
		sources = append(sources, startSource{w.Message, c.StatusLoc.At("state", "waiting").EvidenceAround(w.Reason+": "+w.Message, around, time.Time{}), 0})
	}
	for _, t := range []struct {
		t   *corev1.ContainerStateTerminated
		loc analyze.Location
	}{{st.State.Terminated, c.StatusLoc.At("state", "terminated")}, {st.LastTerminationState.Terminated, c.StatusLoc.At("lastState", "terminated")}} {
		if t.t != nil && startFailureReasons[t.t.Reason] {
			text := fmt.Sprintf("%s, exit code %d: %s", t.t.Reason, t.t.ExitCode, t.t.Message)
			sources = append(sources, startSource{t.t.Message, t.loc.EvidenceAround(text, around, t.t.FinishedAt.Time), t.t.ExitCode})
		}
	}
	if e := analyze.LatestContainerError(runOf(v, p, c.Name).Events, c.Name); e != nil {
		sources = append(sources, startSource{e.Message, e.EvidenceAround(around), 0})
	}
	return sources
}

// startNodeEvidence cites the kubelet's journal line and crictl's record of the failed
// start, when the bundle has them.
func startNodeEvidence(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, command string, journalSays func(string) bool) []analyze.Evidence {
	var out []analyze.Evidence
	if e := latestJournalError(v, p, c, func(err string) bool { return strings.Contains(err, command) && journalSays(err) }); e != nil {
		out = append(out, e.EvidenceAround(command))
	}
	latest := latestAttempt(v, p, c, func(cc *analyze.CRIContainer) bool { return cc.Reason != "" })
	if latest != nil && latest.InspectLoc != nil {
		out = append(out, latest.InspectLoc.EvidenceAround(fmt.Sprintf("crictl inspect %s: %s, exit code %d, attempt %d: %s",
			shortID(latest.ID), latest.Reason, latest.ExitCode, latest.Attempt, latest.Message), "exec", latest.FinishedAt))
	}
	return out
}

// latestJournalError is the newest error-level kubelet journal line about the pod whose
// err field match accepts, or nil.
func latestJournalError(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, match func(err string) bool) *analyze.JournalEntry {
	entries := runOf(v, p, c.Name).Journal
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if err, _ := e.Field("err"); e.Severity == 'E' && match(err) {
			return e
		}
	}
	return nil
}

// latestAttempt is crictl's record of the highest attempt of a pod's container that
// keep accepts, or nil.
func latestAttempt(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, keep func(*analyze.CRIContainer) bool) *analyze.CRIContainer {
	var latest *analyze.CRIContainer
	for _, cc := range runOf(v, p, c.Name).Attempts {
		if keep(cc) && (latest == nil || cc.Attempt > latest.Attempt) {
			latest = cc
		}
	}
	return latest
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// shellFailure recognizes a shell that exited with its own status exit for a command it
// could not run, naming the command from the last log line re matches (re's first group).
func shellFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, exit int32, re *regexp.Regexp) (startFailure, bool) {
	t, loc, log := crashTermination(v, p, c)
	if t == nil || t.ExitCode != exit {
		return startFailure{}, false
	}
	sf := startFailure{kind: "shell", exitCode: t.ExitCode, said: fmt.Sprintf("exit code %d", exit)}
	sf.evidence = append(sf.evidence, analyze.ExitEvidence(t, loc))
	if log == nil {
		return sf, true
	}
	if text, n, ok := lastLineMatching(log, re); ok {
		sf.said = stripLogTimestamp(text)
		sf.command = re.FindStringSubmatch(sf.said)[1]
		sf.evidence = append(sf.evidence, lineEvidence(log, logLine{text: text, n: n}, "", t.FinishedAt.Time))
	}
	return sf, true
}

// specCommandField is the spec field that names the process: command, else args.
func specCommandField(c *corev1.Container) string {
	if len(c.Command) > 0 {
		return "command"
	}
	return "args"
}

// blocksStart reports whether a container is an init container the pod's containers wait
// for: every init container except a sidecar (restartPolicy Always), which keeps running
// beside them.
func blocksStart(c analyze.ContainerInfo) bool {
	return c.Init && (c.Spec.RestartPolicy == nil || *c.Spec.RestartPolicy != corev1.ContainerRestartPolicyAlways)
}

// exitCannotExecute is the POSIX shell's exit status for a command it found but cannot
// execute.
const exitCannotExecute = 126

// containerWord names a container for a cause: "container app", "init container migrate".
func containerWord(c analyze.ContainerInfo) string {
	if c.Init {
		return "init container " + c.Name
	}
	return "container " + c.Name
}

// statusField is the pod status list that holds the container's status.
func statusField(c analyze.ContainerInfo) string {
	if c.Init {
		return "initContainerStatuses"
	}
	return "containerStatuses"
}
