package analyze

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Processes that could not start: the reasons the kubelet and runtime give, the failure
// read from status, events and journal, and what the start rules cite about it.

// Reasons the kubelet and the runtime give when a container's process could not start
// (pkg/kubelet/container/sync_result.go ErrRunContainer; containerd's CRI "StartError").
var startFailureReasons = map[string]bool{
	"RunContainerError": true, "CreateContainerError": true, "StartError": true, "ContainerCannotRun": true,
}

// IsStartFailureReason reports whether a waiting or terminated reason says the
// container's process could not start.
func IsStartFailureReason(reason string) bool { return startFailureReasons[reason] }

// ExitCommandNotFound is the POSIX shell's exit status for a command it cannot find.
const ExitCommandNotFound = 127

// StartFailure is a container's failure to start, from wherever the bundle says it.
type StartFailure struct {
	Command  string
	Kind     string // "missing", "path", "enoent" or "shell"
	Said     string
	ExitCode int32
	Evidence []Evidence
}

// ExecMatcher finds, in a runtime's message, the executable it could not run: its
// path, a kind for the cause, and the words that say so.
type ExecMatcher func(msg string) (command, kind, said string, ok bool)

// RuntimeStartFailure finds a start failure match recognizes in the container's waiting
// state, its start-failure terminations, its latest "Error: " event, and cites the
// kubelet's journal line (an error line journalSays is about it) and crictl's record.
func (v *View) RuntimeStartFailure(p *Pod, c ContainerInfo, match ExecMatcher, journalSays func(string) bool) (StartFailure, bool) {
	var sf StartFailure
	for _, s := range v.StartFailureSources(p, c, "exec") {
		cmd, kind, said, ok := match(s.Message)
		if !ok {
			continue
		}
		if sf.Kind == "" {
			sf.Command, sf.Kind, sf.Said = cmd, kind, said
		}
		if s.Exit != 0 {
			sf.ExitCode = s.Exit
		}
		sf.Evidence = append(sf.Evidence, s.Evidence)
	}
	if sf.Kind == "" {
		return sf, false
	}
	sf.Evidence = append(sf.Evidence, startNodeEvidence(v, p, c, sf.Command, journalSays)...)
	return sf, true
}

// StartSource is one place the bundle reports a container's failure to start: the
// message, its evidence, and the exit code when it is a termination.
type StartSource struct {
	Message  string
	Evidence Evidence
	Exit     int32
}

// StartFailureSources lists, in order, the container's waiting state and terminations
// whose reason is a start failure and its latest "Error: " event, each excerpt centred
// on around.
func (v *View) StartFailureSources(p *Pod, c ContainerInfo, around string) []StartSource {
	st := c.Status
	var sources []StartSource
	if w := st.State.Waiting; w != nil && IsStartFailureReason(w.Reason) {
		sources = append(sources, StartSource{w.Message, c.StatusLoc().At("state", "waiting").EvidenceAround(w.Reason+": "+w.Message, around, time.Time{}), 0})
	}
	for _, t := range []struct {
		t   *corev1.ContainerStateTerminated
		loc Location
	}{{st.State.Terminated, c.StatusLoc().At("state", "terminated")}, {st.LastTerminationState.Terminated, c.StatusLoc().At("lastState", "terminated")}} {
		if t.t != nil && IsStartFailureReason(t.t.Reason) {
			text := fmt.Sprintf("%s, exit code %d: %s", t.t.Reason, t.t.ExitCode, t.t.Message)
			sources = append(sources, StartSource{t.t.Message, t.loc.EvidenceAround(text, around, t.t.FinishedAt.Time), t.t.ExitCode})
		}
	}
	if e := LatestContainerError(runOf(v, p, c.Name).eventsIf(isFailedEvent), c.Name); e != nil {
		sources = append(sources, StartSource{e.Message, e.EvidenceAround(around), 0})
	}
	return sources
}

// startNodeEvidence cites the kubelet's journal line and crictl's record of the failed
// start, when the bundle has them.
func startNodeEvidence(v *View, p *Pod, c ContainerInfo, command string, journalSays func(string) bool) []Evidence {
	var out []Evidence
	if e := v.LatestJournalError(p, c, func(err string) bool { return strings.Contains(err, command) && journalSays(err) }); e != nil {
		out = append(out, e.EvidenceAround(command))
	}
	latest := v.LatestAttempt(p, c, func(cc *CRIContainer) bool { return cc.Reason != "" })
	if latest != nil && latest.InspectLoc != nil {
		out = append(out, latest.InspectLoc.EvidenceAround(fmt.Sprintf("crictl inspect %s: %s, exit code %d, attempt %d: %s",
			ShortID(latest.ID), latest.Reason, latest.ExitCode, latest.Attempt, latest.Message), "exec", latest.FinishedAt))
	}
	return out
}

// LatestJournalError is the newest error-level kubelet journal line about the pod whose
// err field match accepts, or nil.
func (v *View) LatestJournalError(p *Pod, c ContainerInfo, match func(err string) bool) *JournalEntry {
	entries := runOf(v, p, c.Name).Journal
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if err, _ := e.Field("err"); e.Severity == 'E' && match(err) {
			return e
		}
	}
	return nil
}

// LatestAttempt is crictl's record of the highest attempt of a pod's container that
// keep accepts, or nil.
func (v *View) LatestAttempt(p *Pod, c ContainerInfo, keep func(*CRIContainer) bool) *CRIContainer {
	var latest *CRIContainer
	for _, cc := range runOf(v, p, c.Name).Attempts {
		if keep(cc) && (latest == nil || cc.Attempt > latest.Attempt) {
			latest = cc
		}
	}
	return latest
}

// ShortID is the 13-character prefix crictl prints for a container ID.
func ShortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// ShellFailure recognizes a shell that exited with its own status exit for a command it
// could not run, naming the command from the last log line re matches (re's first group).
func (v *View) ShellFailure(p *Pod, c ContainerInfo, exit int32, re *regexp.Regexp) (StartFailure, bool) {
	t, loc, log := v.CrashTermination(p, c)
	if t == nil || t.ExitCode != exit {
		return StartFailure{}, false
	}
	sf := StartFailure{Kind: "shell", ExitCode: t.ExitCode, Said: fmt.Sprintf("exit code %d", exit)}
	sf.Evidence = append(sf.Evidence, ExitEvidence(t, loc))
	if log == nil {
		return sf, true
	}
	if text, n, ok := LastLineMatching(log, re); ok {
		sf.Said = StripLogTimestamp(text)
		sf.Command = re.FindStringSubmatch(sf.Said)[1]
		sf.Evidence = append(sf.Evidence, LineEvidence(log, LogLine{Text: text, N: n}, "", t.FinishedAt.Time))
	}
	return sf, true
}

// SpecCommandField is the spec field that names the process: command, else args.
func SpecCommandField(c *corev1.Container) string {
	if len(c.Command) > 0 {
		return "command"
	}
	return "args"
}

// BlocksStart reports whether a container is an init container the pod's containers wait
// for: every init container except a sidecar (restartPolicy Always), which keeps running
// beside them.
func (c ContainerInfo) BlocksStart() bool {
	return c.Init && (c.Spec.RestartPolicy == nil || *c.Spec.RestartPolicy != corev1.ContainerRestartPolicyAlways)
}

// ExitCannotExecute is the POSIX shell's exit status for a command it found but cannot
// execute.
const ExitCannotExecute = 126

// Noun names a container for a cause: "container app", "init container migrate".
func (c ContainerInfo) Noun() string {
	if c.Init {
		return "init container " + c.Name
	}
	return "container " + c.Name
}

// StatusField is the pod status list that holds the container's status.
func (c ContainerInfo) StatusField() string {
	if c.Init {
		return "initContainerStatuses"
	}
	return "containerStatuses"
}
