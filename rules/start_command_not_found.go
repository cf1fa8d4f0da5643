package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// StartCommandNotFound finds containers whose command does not exist in the image.
var StartCommandNotFound = &analyze.Rule{
	ID:       "start-command-not-found",
	Stage:    analyze.StageStart,
	Title:    "container command not found in the image",
	Doc:      startCommandNotFoundDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.CRI, analyze.ContainerLogs,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: startCommandNotFound,
}

const startCommandNotFoundDoc = `The runtime created the container but could not start its process, because the
executable named by the container's command (or the image's entrypoint) does not exist:
runc reports "exec: "/app/server": stat /app/server: no such file or directory" or
"exec: "server": executable file not found in $PATH". The container status says
RunContainerError, the last termination StartError with exit code 128, and the kubelet
restarts it with back-off (CrashLoopBackOff). A shell started as the command exits 127
instead when the command it runs is missing ("sh: server: not found").

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].command}'
    kubectl debug -n NAMESPACE POD -it --copy-to=POD-debug --container=CONTAINER -- sh

## Fix

Correct the command (or args) to a path that exists in the image, or build the image so
it contains the executable. A bare name is looked up in the image's PATH; a script
also needs the interpreter its #! line names, and a dynamically linked binary its
loader (a binary built against glibc does not run on an Alpine image).
`

var (
	// runc (libcontainer, standard_init_linux.go) and Go's exec.LookPath:
	// `exec: "/app/server": stat /app/server: no such file or directory`,
	// `exec: "server": executable file not found in $PATH`.
	reExecMissing = regexp.MustCompile(`exec: "([^"]+)": (stat [^:]+: no such file or directory|executable file not found in \$PATH)`)
	// execve itself failing with ENOENT when the file exists but its #! interpreter or
	// dynamic loader does not: `exec /app/run.sh: no such file or directory`.
	reExecENOENT = regexp.MustCompile(`exec:? "?([^":\s]+)"?: no such file or directory`)
	// crun: "executable file `server` not found in $PATH".
	reCrunMissing = regexp.MustCompile("executable file `([^`]+)` not found in \\$PATH")
	// A shell's "command not found", the reason for exit code 127: "sh: server: not found",
	// "/bin/sh: 1: server: not found", "bash: server: command not found".
	reShellNotFound = regexp.MustCompile(`([^\s:]+): (?:command )?not found\s*$`)
)

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

func startCommandNotFound(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, pc := range liveContainers(v) {
		p, c := pc.pod, pc.c
		sf, ok := commandFailure(v, p, c)
		if ok {
			out = append(out, commandFinding(v, p, c, sf))
		}
	}
	return out
}

// matchExecMissing finds the executable the runtime could not find in a message.
func matchExecMissing(msg string) (command, kind, said string, ok bool) {
	if m := reExecMissing.FindStringSubmatch(msg); m != nil {
		kind = "missing"
		if strings.HasPrefix(m[2], "executable file not found") {
			kind = "path"
		}
		return m[1], kind, m[0], true
	}
	if m := reCrunMissing.FindStringSubmatch(msg); m != nil {
		return m[1], "path", m[0], true
	}
	if m := reExecENOENT.FindStringSubmatch(msg); m != nil {
		return m[1], "enoent", m[0], true
	}
	return "", "", "", false
}

// execMatcher finds, in a runtime's message, the executable it could not run: its
// path, a kind for the cause, and the words that say so.
type execMatcher func(msg string) (command, kind, said string, ok bool)

// commandFailure looks for the runtime's "not found" in the container's status, its
// events, the kubelet journal and crictl inspect, and for a shell's exit code 127.
func commandFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (startFailure, bool) {
	journalSays := func(err string) bool {
		return strings.Contains(err, "no such file or directory") || strings.Contains(err, "not found in $PATH")
	}
	if sf, ok := runtimeStartFailure(v, p, c, matchExecMissing, journalSays); ok {
		return sf, true
	}
	return shellNotFound(v, p, c)
}

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
	if e := latestContainerError(v.EventsFor(p.Ref()), c.Name); e != nil {
		sources = append(sources, startSource{e.Message, e.EvidenceAround(around), 0})
	}
	return sources
}

// startNodeEvidence cites the kubelet's journal line and crictl's record of the failed
// start, when the bundle has them.
func startNodeEvidence(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, command string, journalSays func(string) bool) []analyze.Evidence {
	var out []analyze.Evidence
	if e := latestJournalError(v, p, func(err string) bool { return strings.Contains(err, command) && journalSays(err) }); e != nil {
		out = append(out, e.EvidenceAround(command))
	}
	latest := latestAttempt(v, p, c.Name, func(cc *analyze.CRIContainer) bool { return cc.Reason != "" })
	if latest != nil && latest.InspectLoc != nil {
		out = append(out, latest.InspectLoc.EvidenceAround(fmt.Sprintf("crictl inspect %s: %s, exit code %d, attempt %d: %s",
			shortID(latest.ID), latest.Reason, latest.ExitCode, latest.Attempt, latest.Message), "exec", latest.FinishedAt))
	}
	return out
}

// latestJournalError is the newest error-level kubelet journal line about the pod whose
// err field match accepts, or nil.
func latestJournalError(v *analyze.View, p *analyze.Pod, match func(err string) bool) *analyze.JournalEntry {
	entries := v.JournalFor(p)
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
func latestAttempt(v *analyze.View, p *analyze.Pod, container string, keep func(*analyze.CRIContainer) bool) *analyze.CRIContainer {
	var latest *analyze.CRIContainer
	for _, cc := range v.ContainersFor(p) {
		if cc.Name == container && keep(cc) && (latest == nil || cc.Attempt > latest.Attempt) {
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

// shellNotFound recognizes a shell that could not find the command it was told to run:
// the container ran and exited 127, and its log says "not found".
func shellNotFound(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (startFailure, bool) {
	return shellFailure(v, p, c, exitCommandNotFound, reShellNotFound)
}

// shellFailure recognizes a shell that exited with its own status exit for a command it
// could not run, naming the command from the last log line re matches (re's first group).
func shellFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, exit int32, re *regexp.Regexp) (startFailure, bool) {
	t, loc, log := crashTermination(v, p, c)
	if t == nil || t.ExitCode != exit {
		return startFailure{}, false
	}
	sf := startFailure{kind: "shell", exitCode: t.ExitCode, said: fmt.Sprintf("exit code %d", exit)}
	sf.evidence = append(sf.evidence, exitEvidence(t, loc))
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

func commandFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, sf startFailure) analyze.Finding {
	pod := p.Obj
	image := c.Spec.Image
	configured := strings.Join(append(append([]string{}, c.Spec.Command...), c.Spec.Args...), " ")
	if sf.command == "" && len(c.Spec.Command) > 0 {
		sf.command = c.Spec.Command[0]
	}
	var what string
	switch sf.kind {
	case "path":
		what = fmt.Sprintf("executable %q is not in the $PATH of image %s", sf.command, image)
	case "enoent":
		what = fmt.Sprintf("%q or the interpreter or loader it needs does not exist in image %s", sf.command, image)
	case "shell":
		what = fmt.Sprintf("its shell exits with code 127 (command not found): %q is not found in image %s", sf.command, image)
		if sf.command == "" {
			what = fmt.Sprintf("its shell exits with code 127 (command not found) in image %s", image)
		}
	default:
		what = fmt.Sprintf("its command %q does not exist in image %s", sf.command, image)
	}
	cause := fmt.Sprintf("%s cannot start its process: %s (%s", containerWord(c), what, sf.said)
	if sf.exitCode != 0 && sf.kind != "shell" {
		cause += fmt.Sprintf("; exit code %d", sf.exitCode)
	}
	cause += fmt.Sprintf("; %d restart(s))", c.Status.RestartCount)
	if configured != "" {
		sf.evidence = append(sf.evidence, c.SpecLoc.At(specCommandField(c.Spec)).Evidence("command: "+configured, pod.CreationTimestamp.Time))
	}
	subjects, group := v.PodAndWorkload(p)
	fix := fmt.Sprintf("Point the command of container %s at an executable that exists in image %s, or add %q to the image", c.Name, image, sf.command)
	if sf.kind == "enoent" {
		fix += " (a script also needs the interpreter on its #! line, a dynamic binary its loader)"
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    sf.evidence,
		Remediation: fix + ".",
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.%s[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, analyze.Literal(statusField(c)), c.Name),
			analyze.Command("kubectl debug -n %s %s -it --copy-to=%s-debug --container=%s -- sh", pod.Namespace, pod.Name, pod.Name, c.Name),
		},
		GroupKey: group + "\x00" + c.Name + "\x00" + sf.command,
	}
}

// specCommandField is the spec field that names the process: command, else args.
func specCommandField(c *corev1.Container) string {
	if len(c.Command) > 0 {
		return "command"
	}
	return "args"
}
