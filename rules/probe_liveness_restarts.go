package rules

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ProbeLivenessRestarts finds containers the kubelet keeps killing because their
// liveness probe fails.
var ProbeLivenessRestarts = &analyze.Rule{
	ID:       "probe-liveness-restarts",
	Stage:    analyze.StageProbe,
	Title:    "liveness probe failing: kubelet kills and restarts the container",
	Doc:      probeLivenessRestartsDoc,
	Severity: analyze.SeverityError,
	// It says the probe fails and quotes why; a signature that knows the reason (a
	// port name no port has, TLS on a plain-HTTP probe) wins over it.
	Catchall: true,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ContainerLogs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: probeLivenessRestarts,
}

const probeLivenessRestartsDoc = `The container's liveness probe failed failureThreshold times in a row, so the kubelet
killed the container ("Container app failed liveness probe, will be restarted", event
reason Killing) and started it again; repeated kills end in CrashLoopBackOff. The
process did not crash on its own: it was stopped with SIGTERM (exit code 143 when it
exits on it, 137 when the grace period runs out).

A probe that starts before the application is up kills it during every start: the
first kill can come after initialDelaySeconds + failureThreshold × periodSeconds. When
the application takes longer than that to start, raise initialDelaySeconds or, better,
add a startupProbe, which holds the liveness probe back until it succeeds.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=Killing
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].livenessProbe}'
    kubectl logs -n NAMESPACE POD -c CONTAINER --previous --tail=50

## Fix

If the application really hangs, the previous log shows where; fix that (the probe is
doing its job). Otherwise make the probe check only that the process is alive (not its
dependencies), give it a realistic timeoutSeconds, and cover slow starts with a
startupProbe or a longer initialDelaySeconds.
`

func probeLivenessRestarts(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		st := c.Status
		if c.Spec.LivenessProbe == nil {
			continue
		}
		if v.SettledRunning(st) {
			continue
		}
		kill := v.ProbeKill(p, c.Name, nil, analyze.LivenessKill)
		if !kill.Found {
			continue
		}
		out = append(out, livenessFinding(v, p, c, kill))
	}
	return out
}

func livenessFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, kill analyze.ProbeKillRecord) analyze.Finding {
	pod := p.Obj
	st := c.Status
	pr := c.Spec.LivenessProbe
	action := analyze.ProbeAction(c.Spec, pr)
	fail, evidence := v.ProbeKillEvidence(p, c, kill, "Liveness", "livenessProbe", pr)
	cause := fmt.Sprintf("container %s is %s by its liveness probe (%s)", c.Name, analyze.KilledVerb(pod.Spec.RestartPolicy), action)
	if fail.Output != "" {
		cause += fmt.Sprintf(", which fails with %q", fail.Output) + analyze.ProbeStatusMeaning(fail.Output)
	}
	cause += fmt.Sprintf(": %d kill(s), %d restart(s)", kill.Kills, st.RestartCount)
	t, loc, log := v.CrashTermination(p, c)
	slowStart := false
	if t != nil {
		cause += fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, analyze.ExitMeaning(t.ExitCode))
		evidence = append(evidence, analyze.TerminationEvidence(t, loc))
		if log != nil {
			if tail, at := log.Tail(3); len(tail) > 0 {
				for i := range tail {
					tail[i] = analyze.StripLogTimestamp(tail[i])
				}
				evidence = append(evidence, at.Evidence("log before the kill: "+strings.Join(tail, " | "), t.FinishedAt.Time))
			}
		}
		if note, ev := startupNote(pr, t, log, kill); note != "" {
			cause += "; " + note
			evidence = append(evidence, ev...)
			slowStart = true
		}
	}
	subjects, group := v.PodAndWorkload(p)
	fix := fmt.Sprintf("If container %s really hangs, fix what its previous log shows; otherwise make the probe (%s) check only that "+
		"the process is alive and answers within timeoutSeconds %d.", c.Name, action, cmp.Or(pr.TimeoutSeconds, 1))
	if slowStart {
		fix = fmt.Sprintf("Add a startupProbe to container %s (or raise the liveness probe's initialDelaySeconds above its start time) "+
			"so the liveness probe waits until the application is up.", c.Name)
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=Killing", pod.Namespace, pod.Name),
			analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=50", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: group + "\x00" + c.Name,
	}
}

// startupNote compares the probe's initialDelaySeconds with the container's time to
// start: the first log line that says it started (timestamped at collection), or, when
// the log shows none, a kill at the first moment the probe could kill it.
func startupNote(pr *corev1.Probe, t *corev1.ContainerStateTerminated, log *analyze.ContainerLog, kill analyze.ProbeKillRecord) (string, []analyze.Evidence) {
	if log == nil || t.StartedAt.IsZero() {
		return "", nil
	}
	delay := time.Duration(pr.InitialDelaySeconds) * time.Second
	for _, l := range analyze.LogLines(log) {
		text := analyze.StripLogTimestamp(l.Text)
		if !analyze.SaysStarted(text) {
			continue
		}
		at, ok := analyze.LogTimestamp(l.Text)
		if !ok {
			return "", nil
		}
		took := at.Sub(t.StartedAt.Time)
		if took <= delay {
			return "", nil
		}
		return fmt.Sprintf("initialDelaySeconds %d is shorter than the %s the container took to start (log line %d: %q)",
				pr.InitialDelaySeconds, took.Round(time.Second), l.N, text),
			[]analyze.Evidence{analyze.LineEvidence(log, l, "", at)}
	}
	killedAt := t.FinishedAt.Time
	if kill.Line != nil && kill.Line.Time.After(t.StartedAt.Time) && kill.Line.Time.Before(killedAt) {
		killedAt = kill.Line.Time
	}
	period := time.Duration(cmp.Or(pr.PeriodSeconds, 10)) * time.Second
	window := delay + time.Duration(cmp.Or(pr.FailureThreshold, 3))*period
	lived := killedAt.Sub(t.StartedAt.Time)
	if killedAt.IsZero() || lived > window+period {
		return "", nil
	}
	return fmt.Sprintf("it was killed %s after it started, as soon as initialDelaySeconds %d + failureThreshold %d × periodSeconds %d allowed, "+
		"and its log shows no sign it had finished starting: initialDelaySeconds is likely shorter than its start time",
		lived.Round(time.Second), pr.InitialDelaySeconds, cmp.Or(pr.FailureThreshold, 3), cmp.Or(pr.PeriodSeconds, 10)), nil
}
