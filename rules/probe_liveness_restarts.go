package rules

import (
	"fmt"
	"regexp"
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

// The kubelet's kill message (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
// computePodActions): "Container %s failed liveness probe, will be restarted", also
// logged as "Message for Container of pod" containerMessage="…".
const (
	livenessKill = "failed liveness probe"
	startupKill  = "failed startup probe"
)

// probeKillRecord is the kubelet's record of killing a container for a failed probe.
type probeKillRecord struct {
	found bool
	event *analyze.Event
	line  *analyze.JournalEntry
	// kills counts the kills the records show.
	kills int32
}

// probeKill finds the kubelet's kills of a container for failing one of the probes
// (livenessKill, startupKill). With a termination, only a kill of that instance counts.
func probeKill(v *analyze.View, p *analyze.Pod, container string, t *corev1.ContainerStateTerminated, probes ...string) probeKillRecord {
	if len(probes) == 0 {
		probes = []string{livenessKill, startupKill}
	}
	says := func(msg string) bool {
		for _, s := range probes {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	var since time.Time
	var id string
	if t != nil {
		since, id = t.StartedAt.Add(-time.Second), analyze.ContainerID(t.ContainerID)
	}
	var r probeKillRecord
	events := v.EventsFor(p.Ref())
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Killing" && e.Container() == container && says(e.Message) && !e.LastTime.Before(since) {
			r.event, r.kills, r.found = e, e.Count, true
			break
		}
	}
	var lines int32
	for _, e := range v.JournalFor(p) {
		if e.Message != "Message for Container of pod" {
			continue
		}
		name, _ := e.Field("containerName")
		msg, _ := e.Field("containerMessage")
		if name != container || !says(msg) {
			continue
		}
		lines++
		status, _ := e.Field("containerStatusID")
		if t == nil || (id != "" && strings.Contains(status, id)) || (id == "" && !e.Time.Before(since)) {
			r.line, r.found = e, true
		}
	}
	if lines > r.kills {
		r.kills = lines
	}
	return r
}

// evidence cites the Killing event and the kubelet's journal line, when found, the
// line quoted with the kill message it carries.
func (r probeKillRecord) evidence() []analyze.Evidence {
	var out []analyze.Evidence
	if r.event != nil {
		out = append(out, r.event.Evidence())
	}
	if r.line != nil {
		ev := r.line.Evidence()
		msg, _ := r.line.Field("containerMessage")
		ev.Excerpt = analyze.Excerpt(r.line.Message + ": " + msg)
		out = append(out, ev)
	}
	return out
}

// probeKillEvidence finds the latest failure of a container's probe of type kind
// ("Liveness", "Startup") and cites it, the kill, and the probe as the spec's field
// ("livenessProbe", "startupProbe") sets it.
func probeKillEvidence(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, kill probeKillRecord, kind, field string, pr *corev1.Probe) (probeFailure, []analyze.Evidence) {
	fail := latestProbeFailure(v, p, c.Name, kind, time.Time{})
	evidence := fail.evidence()
	evidence = append(evidence, kill.evidence()...)
	evidence = append(evidence, c.SpecLoc.At(field).Evidence(field+": "+probeAction(c.Spec, pr)+"; "+probeTiming(pr), p.Obj.CreationTimestamp.Time))
	return fail, evidence
}

// Log lines that say an application finished starting.
var (
	reStartedLine = regexp.MustCompile(`(?i)\b(listening|serving|started|ready to|startup complete|up and running|accepting connections)\b`)
	reNegated     = regexp.MustCompile(`(?i)\b(not|failed|error|unable|cannot)\b`)
)

func probeLivenessRestarts(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, pc := range liveContainers(v) {
		p, c := pc.pod, pc.c
		st := c.Status
		if c.Spec.LivenessProbe == nil {
			continue
		}
		if settledRunning(v, st) {
			continue
		}
		kill := probeKill(v, p, c.Name, nil, livenessKill)
		if !kill.found {
			continue
		}
		out = append(out, livenessFinding(v, p, c, kill))
	}
	return out
}

func livenessFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, kill probeKillRecord) analyze.Finding {
	pod := p.Obj
	st := c.Status
	pr := c.Spec.LivenessProbe
	action := probeAction(c.Spec, pr)
	fail, evidence := probeKillEvidence(v, p, c, kill, "Liveness", "livenessProbe", pr)
	cause := fmt.Sprintf("container %s is killed and restarted by its liveness probe (%s)", c.Name, action)
	if fail.output != "" {
		cause += fmt.Sprintf(", which fails with %q", fail.output)
	}
	cause += fmt.Sprintf(": %d kill(s), %d restart(s)", kill.kills, st.RestartCount)
	t, loc, log := crashTermination(v, p, c)
	slowStart := false
	if t != nil {
		cause += fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, exitMeaning(t.ExitCode))
		evidence = append(evidence, terminationEvidence(t, loc))
		if log != nil {
			if tail, at := log.Tail(3); len(tail) > 0 {
				for i := range tail {
					tail[i] = stripLogTimestamp(tail[i])
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
		"the process is alive and answers within timeoutSeconds %d.", c.Name, action, orDefault(pr.TimeoutSeconds, 1))
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
func startupNote(pr *corev1.Probe, t *corev1.ContainerStateTerminated, log *analyze.ContainerLog, kill probeKillRecord) (string, []analyze.Evidence) {
	if log == nil || t.StartedAt.IsZero() {
		return "", nil
	}
	delay := time.Duration(pr.InitialDelaySeconds) * time.Second
	for _, l := range logLines(log) {
		text := stripLogTimestamp(l.text)
		if !reStartedLine.MatchString(text) || reNegated.MatchString(text) {
			continue
		}
		at, ok := logTimestamp(l.text)
		if !ok {
			return "", nil
		}
		took := at.Sub(t.StartedAt.Time)
		if took <= delay {
			return "", nil
		}
		return fmt.Sprintf("initialDelaySeconds %d is shorter than the %s the container took to start (log line %d: %q)",
				pr.InitialDelaySeconds, took.Round(time.Second), l.n, text),
			[]analyze.Evidence{lineEvidence(log, l, "", at)}
	}
	killedAt := t.FinishedAt.Time
	if kill.line != nil && kill.line.Time.After(t.StartedAt.Time) && kill.line.Time.Before(killedAt) {
		killedAt = kill.line.Time
	}
	period := time.Duration(orDefault(pr.PeriodSeconds, 10)) * time.Second
	window := delay + time.Duration(orDefault(pr.FailureThreshold, 3))*period
	lived := killedAt.Sub(t.StartedAt.Time)
	if killedAt.IsZero() || lived > window+period {
		return "", nil
	}
	return fmt.Sprintf("it was killed %s after it started, as soon as initialDelaySeconds %d + failureThreshold %d × periodSeconds %d allowed, "+
		"and its log shows no sign it had finished starting: initialDelaySeconds is likely shorter than its start time",
		lived.Round(time.Second), pr.InitialDelaySeconds, orDefault(pr.FailureThreshold, 3), orDefault(pr.PeriodSeconds, 10)), nil
}
