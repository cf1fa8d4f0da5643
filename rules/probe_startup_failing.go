package rules

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ProbeStartupFailing finds containers the kubelet keeps killing because their startup
// probe never succeeds.
var ProbeStartupFailing = &analyze.Rule{
	ID:       "probe-startup-failing",
	Stage:    analyze.StageProbe,
	Title:    "startup probe never succeeds: kubelet kills and restarts the container",
	Doc:      probeStartupFailingDoc,
	Severity: analyze.SeverityError,
	// It says the probe fails and quotes why; a signature that knows the reason (a
	// port name no port has, TLS on a plain-HTTP probe) wins over it.
	Catchall: true,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ContainerLogs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: probeStartupFailing,
}

const probeStartupFailingDoc = `A startup probe holds the liveness and readiness probes back until it succeeds once.
When it fails failureThreshold times in a row, the kubelet kills the container
("Container app failed startup probe, will be restarted", event reason Killing) and
starts it again; the events before it say "Startup probe failed: …". The container gets
at most initialDelaySeconds + failureThreshold × periodSeconds to start, and repeated
kills end in CrashLoopBackOff.

Either the application needs longer than that budget to start (its log shows it still
starting when it is killed), or the probe asks the wrong thing (wrong path, port or
file) and would never succeed even once the application is up (its log says it started).

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=Unhealthy
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].startupProbe}'
    kubectl logs -n NAMESPACE POD -c CONTAINER --previous --tail=50

## Fix

Give the startup probe a budget above the application's real start time: raise
failureThreshold (periodSeconds × failureThreshold is the budget; a startup probe may
allow minutes without slowing the detection of a hang later). If the application has
started and the probe still fails, correct what the probe checks.
`

func probeStartupFailing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		st := c.Status
		if c.Spec.StartupProbe == nil {
			continue
		}
		if v.SettledRunning(st) {
			continue
		}
		if st.Started != nil && *st.Started && st.State.Running != nil {
			continue
		}
		kill := v.ProbeKill(p, c.Name, nil, analyze.StartupKill)
		if !kill.Found {
			continue
		}
		out = append(out, startupFinding(v, p, c, kill))
	}
	return out
}

// startupBudget is the longest a startup probe lets a container take to start.
func startupBudget(pr *corev1.Probe) time.Duration {
	return time.Duration(pr.InitialDelaySeconds)*time.Second +
		time.Duration(cmp.Or(pr.FailureThreshold, 3))*time.Duration(cmp.Or(pr.PeriodSeconds, 10))*time.Second
}

func startupFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, kill analyze.ProbeKillRecord) analyze.Finding {
	pod := p.Obj
	st := c.Status
	pr := c.Spec.StartupProbe
	action := analyze.ProbeAction(c.Spec, pr)
	fail, evidence := v.ProbeKillEvidence(p, c, kill, "Startup", "startupProbe", pr)
	budget := startupBudget(pr)
	cause := fmt.Sprintf("%s is %s because its startup probe (%s) never succeeds", c.Noun(), analyze.KilledVerb(pod.Spec.RestartPolicy), action)
	if fail.Output != "" {
		cause += fmt.Sprintf(", failing with %q", fail.Output) + analyze.ProbeStatusMeaning(fail.Output)
	}
	cause += fmt.Sprintf(": %d kill(s), %d restart(s); the probe allows it %s to start (initialDelaySeconds %d + failureThreshold %d × periodSeconds %d)",
		kill.Kills, st.RestartCount, budget, pr.InitialDelaySeconds, cmp.Or(pr.FailureThreshold, 3), cmp.Or(pr.PeriodSeconds, 10))
	fix := fmt.Sprintf("Raise the startup probe's failureThreshold so failureThreshold × periodSeconds exceeds the real start time of %s, "+
		"or make it start faster; if it is up and the probe (%s) still fails, correct what the probe checks.", c.Noun(), action)
	t, loc, log := v.CrashTermination(p, c)
	if t != nil {
		evidence = append(evidence, analyze.TerminationEvidence(t, loc))
		note, ev, started := startupLog(log, t)
		evidence = append(evidence, ev...)
		if note != "" {
			cause += "; " + note
		}
		if started {
			fix = fmt.Sprintf("%s starts, yet the startup probe (%s) keeps failing: correct what the probe checks (path, port, file, "+
				"command) so it succeeds once the application is up.", strings.ToUpper(c.Noun()[:1])+c.Noun()[1:], action)
		}
	}
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=Unhealthy", pod.Namespace, pod.Name),
			analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=50", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: group + "\x00" + c.Name,
	}
}

// startupLog reads the killed instance's log: a line saying the application started
// means the probe itself is wrong; otherwise the log shows how far the start got.
func startupLog(log *analyze.ContainerLog, t *corev1.ContainerStateTerminated) (note string, evidence []analyze.Evidence, started bool) {
	if log == nil {
		return "", nil, false
	}
	for _, l := range analyze.LogLines(log) {
		text := analyze.StripLogTimestamp(l.Text)
		if analyze.SaysStarted(text) {
			at, _ := analyze.LogTimestamp(l.Text)
			return fmt.Sprintf("yet its log says it started (line %d: %q), so the probe checks the wrong thing", l.N, strings.TrimSpace(text)),
				[]analyze.Evidence{analyze.LineEvidence(log, l, "", at)}, true
		}
	}
	tail, loc := log.Tail(3)
	if len(tail) == 0 {
		return "", nil, false
	}
	for i := range tail {
		tail[i] = analyze.StripLogTimestamp(tail[i])
	}
	lived := ""
	if !t.StartedAt.IsZero() && t.FinishedAt.After(t.StartedAt.Time) {
		lived = fmt.Sprintf(" %s after it started", t.FinishedAt.Sub(t.StartedAt.Time).Round(time.Second))
	}
	return fmt.Sprintf("it was still starting when it was killed%s: its log shows no sign it finished (%s)", lived, phrase.QuoteJoin(tail)),
		[]analyze.Evidence{loc.Evidence("log before the kill: "+strings.Join(tail, " | "), t.FinishedAt.Time)}, false
}
