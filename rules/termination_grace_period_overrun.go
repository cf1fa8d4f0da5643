package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// TerminationGracePeriodOverrun finds containers of deleted pods that did not stop on
// SIGTERM and were killed when the grace period ran out.
var TerminationGracePeriodOverrun = &analyze.Rule{
	ID:       "termination-grace-period-overrun",
	Stage:    analyze.StageTermination,
	Title:    "container ignored SIGTERM and was killed after the grace period",
	Doc:      terminationGracePeriodOverrunDoc,
	Severity: analyze.SeverityWarning,
	Needs: analyze.Needs{
		AnyOf:    []analyze.Kind{analyze.Pods, analyze.Fragments},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.RuntimeJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: terminationGracePeriodOverrun,
}

const terminationGracePeriodOverrunDoc = `When a pod is deleted the kubelet stops each container: the runtime sends SIGTERM
(or the image's STOPSIGNAL), waits up to the pod's terminationGracePeriodSeconds, then
sends SIGKILL. This container was still running when the grace period ran out, so it
was killed: its last state is terminated with exit code 137 (128 + SIGKILL), the
kubelet logged "Killing container with a grace period" with gracePeriod=N, and
containerd "Stop container … with signal terminated" followed, N seconds later, by
"Kill container". Every deletion of such a pod (a rollout, a drain, a scale-down) takes
the whole grace period, and the process never gets to shut down cleanly: in-flight
requests fail, files and transactions are left half-written.

The usual causes: the process ignores or never receives SIGTERM (a shell script as
PID 1 that does not exec the application or trap the signal, a PID 1 without a handler,
which the kernel never delivers default-action signals to), or its shutdown takes
longer than the grace period.

A pasted, timed deletion shows the same from the client's side: kubectl delete waits
until the pod is gone, so "pod "NAME" deleted" followed by the shell's "real 0m41s"
means the deletion took the grace period (30 seconds unless the pod sets another) and
a little more. podflow reports it when the time falls in that window and the evidence
holds the container's command, whose PID 1 has no SIGTERM handler (a shell run with -c
that neither traps TERM nor execs a program that handles it, or sleep).

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.terminationGracePeriodSeconds}'
    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=Killing
    kubectl debug node/NODE -it --image=busybox -- chroot /host journalctl -u containerd | grep 'Kill container'

## Fix

Make the application shut down on SIGTERM: run it as PID 1 (exec form in the
Dockerfile, exec in wrapper scripts) or through an init such as tini, and handle the
signal. If it needs longer to drain, add a preStop hook and raise
terminationGracePeriodSeconds to what shutdown really takes.
`

// The kubelet's line when it stops a container (pkg/kubelet/kuberuntime/
// kuberuntime_container.go killContainer): "Killing container with a grace period" …
// containerName="x" containerID="containerd://…" gracePeriod=2.
const killingLine = "Killing container with a grace period"

// containerd's StopContainer (internal/cri/server/container_stop.go) logs "Stop container
// "ID" with signal terminated", then after the timeout "Kill container "ID""; its time=
// field is finer than the journal's.
var reLogfmtTime = regexp.MustCompile(`time="([^"]+)"`)

func terminationGracePeriodOverrun(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for run := range v.ContainerRuns() {
		p, c := run.Subject.Pod, run.Container
		if c.Init || c.Status == nil {
			continue
		}
		t := c.Status.State.Terminated
		if t == nil || t.ExitCode != 137 || t.Reason == "OOMKilled" {
			continue
		}
		if p.Obj.DeletionTimestamp == nil && !pastedStop(run) {
			continue
		}
		if f, ok := overrunFinding(v, run, t); ok {
			out = append(out, f)
		}
	}
	return append(out, timedDeletionFindings(v)...)
}

// deletionSlack is how much longer than the grace period a deletion may take and still
// be read as one that waited it out: the API round trips and the kubelet's sync.
const deletionSlack = 20 * time.Second

// timedDeletionFindings reads a pasted `time kubectl delete pod` whose elapsed time is
// the grace period and a little more, together with the pasted command of the pod's
// container whose PID 1 has no SIGTERM handler: the deletion is one side, the command
// the other.
func timedDeletionFindings(v *analyze.View) []analyze.Finding {
	cmds := v.PastedCommands()
	var out []analyze.Finding
	for _, d := range v.TimedDeletions() {
		grace, graceSaid := int64(30), "the default grace period of 30s"
		pod := d.Object
		var argv []string
		var cmdEv *analyze.Evidence
		if pod != nil {
			if g := pod.Obj.Spec.TerminationGracePeriodSeconds; g != nil {
				grace, graceSaid = *g, fmt.Sprintf("its grace period of %ds", *g)
			}
			for i, c := range pod.Obj.Spec.Containers {
				if _, ok := analyze.PID1IgnoresSIGTERM(c.Command); ok {
					argv = c.Command
					e := pod.Loc.At("spec", "containers", i, "command").Evidence(strings.Join(c.Command, " "), pod.Obj.CreationTimestamp.Time)
					cmdEv = &e
					break
				}
			}
		}
		if argv == nil && len(cmds) == 1 && (pod == nil || len(pod.Obj.Spec.Containers) == 0) {
			// A command pasted alone belongs to the deleted pod only when it is the
			// one command in the evidence.
			if _, ok := analyze.PID1IgnoresSIGTERM(cmds[0].Argv); ok {
				argv, cmdEv = cmds[0].Argv, &cmds[0].Evidence
			}
		}
		limit := time.Duration(grace) * time.Second
		if argv == nil || d.Took < limit || d.Took > limit+deletionSlack {
			continue
		}
		who, _ := analyze.PID1IgnoresSIGTERM(argv)
		ref := analyze.ObjectRef{Kind: "Pod", Name: d.Pod}
		if pod != nil {
			ref = pod.Ref()
		}
		cmd := strconv.Quote(strings.Join(argv, " "))
		cause := fmt.Sprintf("deleting pod %s took %s, %s and a little more: its container runs %s, so PID 1 is %s, which has no SIGTERM handler, "+
			"and the kernel does not deliver a signal PID 1 does not handle; the kubelet's SIGTERM is ignored and the container is killed only when the grace period runs out "+
			"(the deletion time and the command are in the evidence; the kill is inferred from them)",
			d.Pod, d.Took.Round(100*time.Millisecond), graceSaid, cmd, who)
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{ref},
			Cause:    cause,
			Evidence: append(d.Evidence, *cmdEv),
			Remediation: fmt.Sprintf("Make PID 1 of pod %s stop on SIGTERM: trap it in the script (trap 'exit 0' TERM; sleep N & wait), exec a program that handles it, "+
				"or run the command under an init such as tini (or shareProcessNamespace, which makes the pause container PID 1).", d.Pod),
			Confirm: []string{
				analyze.Command("kubectl get pod %s -o jsonpath='{.spec.terminationGracePeriodSeconds} {.spec.containers[*].command}'", d.Pod),
				analyze.Command("kubectl exec %s -- cat /proc/1/status", d.Pod),
			},
		})
	}
	return out
}

// stopRecord is what the bundle says about one container's stop.
type stopRecord struct {
	grace   int64
	asked   time.Time // when the kubelet asked the runtime to stop it
	killed  time.Time // when the runtime sent SIGKILL, or the container finished
	event   *analyze.Event
	kubelet *analyze.JournalEntry
	runtime *analyze.JournalEntry // "Kill container"
	sigterm *analyze.JournalEntry // "Stop container … with signal"
}

func overrunFinding(v *analyze.View, run analyze.ContainerRun, t *corev1.ContainerStateTerminated) (analyze.Finding, bool) {
	p, c := run.Subject.Pod, run.Container
	pod := p.Obj
	r := stopRecord{grace: 30, killed: t.FinishedAt.Time}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		r.grace = *g
	}
	id := analyze.ContainerID(c.Status.ContainerID)
	if e := analyze.LatestEvent(run.Events(), c.Name, "Killing"); e != nil {
		r.event, r.asked = e, e.FirstTime
	}
	for _, e := range run.Journal {
		name, _ := e.Field("containerName")
		cid, _ := e.Field("containerID")
		if e.Message == killingLine && name == c.Name && (id == "" || analyze.ContainerID(cid) == id) {
			r.kubelet, r.asked = e, e.Time
			if g, ok := e.Field("gracePeriod"); ok {
				if n, err := strconv.ParseInt(g, 10, 64); err == nil {
					r.grace = n // the grace period used, which a deletion may have shortened
				}
			}
		}
	}
	if id != "" {
		for _, e := range run.RuntimeLines {
			switch {
			case strings.Contains(e.Message, "Stop container ") && strings.Contains(e.Message, "with signal"):
				r.sigterm = e
			case strings.Contains(e.Message, "Kill container "):
				r.runtime, r.killed = e, logfmtTime(e)
			}
		}
	}
	if r.asked.IsZero() && r.runtime == nil && (r.event == nil || !r.event.LastTime.IsZero()) {
		return analyze.Finding{}, false // nothing says the kubelet stopped it: killed some other way
	}
	if r.asked.IsZero() && r.runtime == nil {
		// A pasted Killing event, without a time: the kubelet stopped the container and
		// it ended on SIGKILL, but how long it ran on is not in the evidence.
		return graceFinding(v, p, c, t, r, 0), true
	}
	took := r.killed.Sub(r.asked)
	// A SIGKILL the runtime logged after its SIGTERM is proof enough; otherwise the
	// container must have run out the grace period (timestamps are whole seconds).
	if r.runtime == nil && (r.asked.IsZero() || took < time.Duration(r.grace)*time.Second-time.Second) {
		return analyze.Finding{}, false
	}
	return graceFinding(v, p, c, t, r, took), true
}

func graceFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, t *corev1.ContainerStateTerminated, r stopRecord, took time.Duration) analyze.Finding {
	pod := p.Obj
	var evidence []analyze.Evidence
	if r.kubelet != nil {
		evidence = append(evidence, r.kubelet.Evidence())
	}
	if r.event != nil {
		evidence = append(evidence, r.event.Evidence())
	}
	if r.sigterm != nil {
		evidence = append(evidence, r.sigterm.EvidenceAround("Stop container"))
	}
	if r.runtime != nil {
		evidence = append(evidence, r.runtime.EvidenceAround("Kill container"))
	}
	evidence = append(evidence, c.StatusLoc().At("state", "terminated").Evidence(
		fmt.Sprintf("container %s terminated: exit code %d (%s), finished %s", c.Name, t.ExitCode, t.Reason, phrase.Stamp(t.FinishedAt.Time)), t.FinishedAt.Time))
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		evidence = append(evidence, p.Loc.At("spec", "terminationGracePeriodSeconds").Evidence(
			fmt.Sprintf("terminationGracePeriodSeconds %d", *g), pod.CreationTimestamp.Time))
	}
	cause := fmt.Sprintf("container %s of deleted pod %s did not stop on SIGTERM", c.Name, p.Ref().NamespacedName())
	if pod.DeletionTimestamp == nil {
		cause = fmt.Sprintf("container %s of pod %s did not stop on SIGTERM when the kubelet stopped it (%s: %s)",
			c.Name, p.Ref().NamespacedName(), r.event.Reason, r.event.Message)
	}
	if !r.asked.IsZero() {
		cause += fmt.Sprintf(": the kubelet asked it to stop at %s with a %ds grace period", phrase.Stamp(r.asked), r.grace)
		if took > 0 && (r.runtime == nil || r.sigterm == nil) {
			cause += fmt.Sprintf(" and it was still running %s later", took.Round(100*time.Millisecond))
		}
	}
	if r.runtime != nil && r.sigterm != nil {
		cause += fmt.Sprintf(" and the runtime, having sent SIGTERM, logged Kill container %s later", logfmtTime(r.runtime).Sub(logfmtTime(r.sigterm)).Round(100*time.Millisecond))
	}
	cause += fmt.Sprintf(", so it was killed with SIGKILL (exit code %d)", t.ExitCode)
	subjects, group := v.PodWorkloadAndNode(p)
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Make container %s shut down on SIGTERM: run the application as PID 1 (exec form, exec in wrapper scripts, "+
			"or an init such as tini) and handle the signal. If shutdown really needs more than %ds, add a preStop hook and raise "+
			"terminationGracePeriodSeconds.", c.Name, r.grace),
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=Killing", pod.Namespace, pod.Name),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.terminationGracePeriodSeconds}'", pod.Namespace, pod.Name),
		},
		GroupKey: group + "\x00" + c.Name,
	}
}

// pastedStop reports whether a pod without a deletionTimestamp in the evidence shows
// the kubelet stopping the container for another reason than a probe: a pasted
// describe or get events (they print a deleted pod's terminal phase, not Terminating)
// with a Killing "Stopping container" event that has no time.
func pastedStop(run analyze.ContainerRun) bool {
	e := analyze.LatestEvent(run.Events(), run.Container.Name, "Killing")
	return e != nil && e.LastTime.IsZero() && strings.HasPrefix(e.Message, "Stopping container") &&
		!strings.Contains(e.Message, analyze.LivenessKill) && !strings.Contains(e.Message, analyze.StartupKill)
}

// logfmtTime is a runtime journal entry's own time= field, finer than the journal's
// whole seconds; the journal's time when it has none.
func logfmtTime(e *analyze.JournalEntry) time.Time {
	if m := reLogfmtTime.FindStringSubmatch(e.Message); m != nil {
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			return t
		}
	}
	return e.Time
}
