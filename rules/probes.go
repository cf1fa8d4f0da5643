package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"podflow.dev/podflow/analyze"
)

// Probe failures: the kubelet's Unhealthy events and journal lines, the restarts a failing
// liveness or startup probe caused, and how a probe's action and timing read.

// probeKillRecord is the kubelet's record of killing a container for a failed probe.
type probeKillRecord struct {
	found bool
	event *analyze.Event
	line  *analyze.JournalEntry
	// kills counts the kills the records show.
	kills int32
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

// notBefore reports whether an event was last seen at or after t. A pasted event has
// no time (kubectl printed an age), so it cannot be dated out: it counts.
func notBefore(e *analyze.Event, t time.Time) bool {
	return e.LastTime.IsZero() || !e.LastTime.Before(t)
}

// probeKill finds the kubelet's kills of a container for failing one of the probes
// (livenessKill, startupKill). With a termination, only a kill of that instance counts.
func probeKill(v *analyze.View, p *analyze.Pod, container string, t *corev1.ContainerStateTerminated, probes ...string) probeKillRecord {
	if len(probes) == 0 {
		probes = []string{analyze.LivenessKill, analyze.StartupKill}
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
	run := runOf(v, p, container)
	events := run.Events
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Killing" && e.Container() == container && says(e.Message) && notBefore(e, since) {
			r.event, r.kills, r.found = e, e.Count, true
			break
		}
	}
	if !r.found && t != nil && (t.ExitCode == 137 || t.ExitCode == 143) {
		// Ended by a signal, and the kubelet killed this container for its probe: the
		// Killing event's lastTimestamp can lag the instance's start (the recorder
		// aggregates repeated events), so a kill that no later instance explains counts.
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			if e.Reason == "Killing" && e.Container() == container && says(e.Message) {
				r.event, r.kills, r.found = e, e.Count, true
				break
			}
		}
	}
	var lines int32
	for _, e := range run.Journal {
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

// Probe event and journal wording (pkg/kubelet/prober/prober.go, probe): events
// "<Type> probe failed: <output>" and "<Type> probe errored and resulted in <result>
// state: <err>"; journal "Probe failed" probeType="<Type>" … output="…".
const (
	probeFailedSuffix  = " probe failed: "
	probeErroredSuffix = " probe errored"
)

// probeFailure is the latest failure of one probe of one container, from the events and
// the kubelet journal.
type probeFailure struct {
	event  *analyze.Event
	line   *analyze.JournalEntry
	output string
	// lines counts the journal's "Probe failed" lines for the probe.
	lines int32
}

func (f probeFailure) found() bool { return f.event != nil || f.line != nil }

// failures is how many failures the evidence shows: the event's count, or the journal's
// lines when the event is gone.
func (f probeFailure) failures() int32 {
	if f.event != nil && f.event.Count > f.lines {
		return f.event.Count
	}
	return f.lines
}

// evidence cites the event and the journal line.
func (f probeFailure) evidence() []analyze.Evidence {
	var out []analyze.Evidence
	if f.event != nil {
		out = append(out, f.event.Evidence())
	}
	if f.line != nil {
		ev := f.line.Evidence()
		if f.output != "" {
			ev.Excerpt = analyze.Excerpt(f.line.Message + ": " + f.output)
		}
		out = append(out, ev)
	}
	return out
}

// count says how often the probe failed, when the event says.
func (f probeFailure) count() string {
	if f.event != nil && f.event.Count > 1 {
		return fmt.Sprintf(" (x%d)", f.event.Count)
	}
	return ""
}

// latestProbeFailure finds the newest failure of a container's probe of type kind
// ("Readiness", "Liveness", "Startup") seen at or after since.
func latestProbeFailure(v *analyze.View, p *analyze.Pod, container, kind string, since time.Time) probeFailure {
	var f probeFailure
	run := runOf(v, p, container)
	events := run.Events
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason != "Unhealthy" || e.Container() != container || !notBefore(e, since.Add(-time.Second)) {
			continue
		}
		if out, ok := strings.CutPrefix(e.Message, kind+probeFailedSuffix); ok {
			f.event, f.output = e, strings.TrimSpace(out)
			break
		}
		if strings.HasPrefix(e.Message, kind+probeErroredSuffix) {
			f.event, f.output = e, strings.TrimSpace(e.Message[len(kind+probeErroredSuffix):])
			break
		}
	}
	entries := run.Journal
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Message != "Probe failed" || e.Time.Before(since.Add(-time.Second)) {
			continue
		}
		if t, _ := e.Field("probeType"); t != kind {
			continue
		}
		if name, _ := e.Field("containerName"); name != container {
			continue
		}
		f.lines++
		if f.line == nil {
			f.line = e
		}
	}
	if f.line != nil && f.output == "" {
		f.output = run.ProbeOutput(f.line)
	}
	return f
}

// probeAction says what a probe does, with a named port resolved against the
// container's ports: "HTTP GET /healthz on port http (8080)".
func probeAction(c *corev1.Container, pr *corev1.Probe) string {
	switch h := pr.ProbeHandler; {
	case h.Exec != nil:
		return "exec " + strings.Join(h.Exec.Command, " ")
	case h.HTTPGet != nil:
		scheme := string(h.HTTPGet.Scheme)
		if scheme == "" {
			scheme = "HTTP"
		}
		path := h.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		return fmt.Sprintf("%s GET %s on port %s", scheme, path, probePort(c, h.HTTPGet.Port))
	case h.TCPSocket != nil:
		return "TCP connect to port " + probePort(c, h.TCPSocket.Port)
	case h.GRPC != nil:
		s := fmt.Sprintf("gRPC health check on port %d", h.GRPC.Port)
		if h.GRPC.Service != nil && *h.GRPC.Service != "" {
			s += " for service " + *h.GRPC.Service
		}
		return s
	}
	return "no handler"
}

func probePort(c *corev1.Container, port intstr.IntOrString) string {
	if port.Type == intstr.Int {
		return strconv.Itoa(port.IntValue())
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return fmt.Sprintf("%s (%d)", port.StrVal, p.ContainerPort)
		}
	}
	return port.StrVal + " (no such named port on the container)"
}

// probeTiming renders a probe's schedule; zero fields take the API's defaults.
func probeTiming(pr *corev1.Probe) string {
	return fmt.Sprintf("initialDelaySeconds %d, periodSeconds %d, timeoutSeconds %d, failureThreshold %d",
		pr.InitialDelaySeconds, cmp.Or(pr.PeriodSeconds, 10), cmp.Or(pr.TimeoutSeconds, 1), cmp.Or(pr.FailureThreshold, 3))
}
