package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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
N: 137 SIGKILL, 139 SIGSEGV (invalid memory access), 143 SIGTERM (asked to stop), 159
SIGSYS (the kernel killed it for a system call its seccomp profile forbids; the finding
names the profile from the pod spec). The last lines of the previous container's log
usually say why.

Kills by the OOM killer (reason OOMKilled), by a failing liveness or startup probe,
processes that never started (StartError, exit 126 and 127) and failing init containers
are other rules' findings. A container whose command ends by itself (exit code 0,
Completed: a sleep with a duration, an echo, a base image such as ubuntu or busybox run
without a command, whose shell exits at once without a terminal) is restarted all the
same under restartPolicy Always and shows CrashLoopBackOff too; the finding names the
command. 137 without OOMKilled is a SIGKILL from something else: the
runtime after a stop's grace period ran out, a kill -9 on the node, a supervisor.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl logs -n NAMESPACE POD -c CONTAINER --previous --tail=50

## Fix

Fix what the log reports: a missing or wrong setting, a dependency (database, service,
file) that is unreachable or absent, a bug. A process that must wait for a dependency
should retry rather than exit. For 137 without OOMKilled look for what sent SIGKILL; for
139, a native crash (check the binary's architecture and libraries). For 159, allow the
system call in the seccomp profile: the kernel's audit record on the node (dmesg or
journalctl -k, type=1326, sig=31) names its number; running the pod once with
seccompProfile Unconfined confirms the profile is the cause.
`

// crashExitMeaning explains an exit code the rule reports, where the rule's own
// exclusions narrow it: the OOM killer and the kubelet's probe kills are ruled out.
func crashExitMeaning(t *corev1.ContainerStateTerminated) string {
	switch t.ExitCode {
	case 137:
		return fmt.Sprintf("SIGKILL: killed from outside, and not by the OOM killer, since the reason is %s rather than OOMKilled", cmp.Or(t.Reason, "empty"))
	case 143:
		return "SIGTERM: the process was asked to stop, and no probe kill or deletion of the pod explains it"
	}
	return analyze.ExitMeaning(t.ExitCode)
}

func runtimeCrashExit(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		st := c.Status
		t, loc, log := v.CrashTermination(p, c)
		if f, ok := completedAndRestarted(v, p, c, t, loc); ok {
			out = append(out, f)
			continue
		}
		// Processes that never started (StartError, a shell's 126 and 127) are the start
		// rules' findings, and an init container's failure is start-init-container-failed's.
		if t == nil || t.ExitCode == 0 || t.Reason == analyze.OOMReason || analyze.IsStartFailureReason(t.Reason) ||
			t.ExitCode == analyze.ExitCommandNotFound || t.ExitCode == analyze.ExitCannotExecute || c.BlocksStart() {
			continue
		}
		if v.SettledRunning(st) {
			continue
		}
		if k := v.ProbeKill(p, c.Name, t); k.Found {
			continue
		}
		out = append(out, crashFinding(v, p, c, t, loc, log))
	}
	return out
}

func crashFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, t *corev1.ContainerStateTerminated, loc analyze.Location, log *analyze.ContainerLog) analyze.Finding {
	pod := p.Obj
	st := c.Status
	meaning := crashExitMeaning(t)
	evidence := []analyze.Evidence{analyze.TerminationEvidence(t, loc)}
	state := "has stopped"
	switch {
	case st.State.Waiting != nil:
		w := st.State.Waiting
		state = "waits in " + w.Reason
		evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{}))
	case st.State.Running != nil:
		state = "runs again for now"
	}
	run, _ := v.ContainerRun(p, c.Name)
	if e := analyze.LatestEvent(run.Events(), c.Name, "BackOff"); e != nil {
		evidence = append(evidence, e.Evidence())
	}
	cause := fmt.Sprintf("container %s exits with code %d (%s) after %d restart(s) and %s", c.Name, t.ExitCode, meaning, st.RestartCount, state)
	profile := ""
	if t.ExitCode == analyze.ExitSIGSYS {
		var at analyze.Location
		if profile, at = analyze.SeccompProfile(p, c); profile != "" {
			cause += "; it runs under seccomp profile " + profile
			evidence = append(evidence, at.Evidence("seccompProfile "+profile, time.Time{}))
		}
	}
	note, cl := v.ExitNotes(t, log, "the crashed instance")
	if cl.Phrase() == "" && t.Message == "" {
		// Nothing says why it exits: what it was told to run is the first suspect
		// (an address without its port, a flag of another release).
		if run := containerCommand(pod, c.Name); run != "" {
			cause += "; it runs " + run
		}
	}
	cause += note
	logText := cl.Text
	evidence = append(evidence, cl.Evidence...)
	subjects, group := v.PodWorkloadAndNode(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: crashFix(c.Name, t.ExitCode, logText, profile, pod.Spec.RestartPolicy),
		Confirm: []string{
			analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=50", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: fmt.Sprintf("%s\x00%s\x00%d", group, c.Name, t.ExitCode),
	}
}

// containerCommand is a container's command and arguments as its spec gives them,
// quoted for a cause, or "" when the spec gives neither.
func containerCommand(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != name || len(c.Command)+len(c.Args) == 0 {
			continue
		}
		words := append(append([]string{}, c.Command...), c.Args...)
		what := "with command"
		if len(c.Command) == 0 {
			what = "with args"
		}
		run := strings.Join(words, " ")
		if len(run) > 200 {
			n := 200
			for n > 0 && !utf8.RuneStart(run[n]) {
				n--
			}
			run = run[:n] + "…"
		}
		return fmt.Sprintf("%s %q", what, run)
	}
	return ""
}

func crashFix(container string, code int32, logText, profile string, policy corev1.RestartPolicy) string {
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
	case analyze.ExitSIGSYS:
		in := "its seccomp profile"
		if profile != "" {
			in = "its seccomp profile (" + profile + ")"
		}
		return fmt.Sprintf("Allow the system call container %s needs in %s%s: the kernel's audit record on the node "+
			"(dmesg or journalctl -k, type=1326 with sig=31) names the syscall number; running the pod once with "+
			"seccompProfile Unconfined confirms the profile is the cause.", container, in, quote)
	}
	return fmt.Sprintf("Fix the error container %s reports before it exits%s; a process that depends on another service should "+
		"retry rather than exit. %s", container, quote, analyze.RestartsOnItsOwn(policy))
}

// reFiniteCommand is a container command that ends by itself: a sleep for a while, an
// echo, a true, a date.
var reFiniteCommand = regexp.MustCompile(`^(?:(?:/usr)?/bin/)?(?:sleep\s+\d+(?:\.\d+)?[smhd]?|echo(?:\s.*)?|true|date|printenv|env|hostname|exit\s+0)$`)

// shellImages are base images whose default command is a shell: without a terminal it
// reads no input and exits at once.
var shellImages = []string{"ubuntu", "debian", "alpine", "busybox", "centos", "fedora", "amazonlinux", "rockylinux", "almalinux", "archlinux", "opensuse/leap"}

// finiteCommand is the container's command line when it ends by itself, "" otherwise;
// "(none: IMAGE runs its shell)" for a base image run without a command.
func finiteCommand(c *corev1.Container) string {
	if c == nil {
		return ""
	}
	line := strings.TrimSpace(analyze.CommandLine(c))
	if inner, ok := strings.CutPrefix(line, "sh -c "); ok {
		line = strings.Trim(inner, `"' `)
	} else if inner, ok := strings.CutPrefix(line, "/bin/sh -c "); ok {
		line = strings.Trim(inner, `"' `)
	}
	if line != "" {
		if reFiniteCommand.MatchString(line) {
			return line
		}
		return ""
	}
	if c.Stdin || c.TTY || c.Image == "" {
		return ""
	}
	repo := c.Image
	if i := strings.IndexAny(repo, ":@"); i >= 0 {
		repo = repo[:i]
	}
	repo = strings.TrimPrefix(strings.TrimPrefix(repo, "docker.io/"), "library/")
	for _, img := range shellImages {
		if repo == img {
			return "(none: " + c.Image + " runs its shell)"
		}
	}
	return ""
}

// completedAndRestarted is the finding about a container that ends by itself under
// restartPolicy Always and is restarted into CrashLoopBackOff: its exit code is 0, or
// unknown and its command one that ends.
func completedAndRestarted(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, t *corev1.ContainerStateTerminated, loc analyze.Location) (analyze.Finding, bool) {
	pod := p.Obj
	st := c.Status
	if c.Init || pod.Spec.RestartPolicy != "" && pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || !analyze.SpecKnown(p) {
		return analyze.Finding{}, false
	}
	w := st.State.Waiting
	if w == nil || w.Reason != "CrashLoopBackOff" {
		return analyze.Finding{}, false
	}
	cmd := finiteCommand(c.Spec)
	var ended string
	var evidence []analyze.Evidence
	switch {
	case t != nil && t.ExitCode == 0:
		ended = fmt.Sprintf("exits with code 0 (%s)", cmp.Or(t.Reason, "Completed"))
		evidence = append(evidence, analyze.TerminationEvidence(t, loc))
	case t == nil && cmd != "":
		ended = "ends by itself"
	default:
		return analyze.Finding{}, false
	}
	evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{}))
	cause := fmt.Sprintf("container %s %s", c.Name, ended)
	if cmd != "" {
		cause = fmt.Sprintf("container %s's command %s ends by itself", c.Name, cmd)
		if t != nil {
			cause = fmt.Sprintf("container %s %s: its command %s ends by itself", c.Name, ended, cmd)
		}
		evidence = append(evidence, c.SpecLoc().Evidence("command "+cmd, pod.CreationTimestamp.Time))
	}
	cause += fmt.Sprintf(", and under restartPolicy Always the kubelet restarts a container whose process ends, even successfully (%d restart(s), now in CrashLoopBackOff)", st.RestartCount)
	subjects, group := v.PodWorkloadAndNode(p)
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Give container %s a process that keeps running (the service itself, or sleep infinity for a toolbox pod), "+
			"or run a task that is meant to end as a Job (or with restartPolicy OnFailure or Never).", c.Name),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.containers[?(@.name==\"%s\")].command}'", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: fmt.Sprintf("%s\x00%s\x00completed", group, c.Name),
	}, true
}
