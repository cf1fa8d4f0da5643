package analyze

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe failures: the kubelet's Unhealthy events and journal lines, the restarts a failing
// liveness or startup probe caused, and how a probe's action and timing read.

// ProbeKillRecord is the kubelet's record of killing a container for a failed probe.
type ProbeKillRecord struct {
	Found bool
	Event *Event
	Line  *JournalEntry
	// Kills counts the kills the records show.
	Kills int32
}

// Evidence cites the Killing event and the kubelet's journal line, when found, the
// line quoted with the kill message it carries.
func (r ProbeKillRecord) Evidence() []Evidence {
	var out []Evidence
	if r.Event != nil {
		out = append(out, r.Event.Evidence())
	}
	if r.Line != nil {
		ev := r.Line.Evidence()
		msg, _ := r.Line.Field("containerMessage")
		ev.Excerpt = Excerpt(r.Line.Message + ": " + msg)
		out = append(out, ev)
	}
	return out
}

// notBefore reports whether an event was last seen at or after t. A pasted event has
// no time (kubectl printed an age), so it cannot be dated out: it counts.
func notBefore(e *Event, t time.Time) bool {
	return e.LastTime.IsZero() || !e.LastTime.Before(t)
}

// ProbeKill finds the kubelet's kills of a container for failing one of the probes
// (LivenessKill, StartupKill). With a termination, only a kill of that instance counts.
func (v *View) ProbeKill(p *Pod, container string, t *corev1.ContainerStateTerminated, probes ...string) ProbeKillRecord {
	if len(probes) == 0 {
		probes = []string{LivenessKill, StartupKill}
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
		since, id = t.StartedAt.Add(-time.Second), ContainerID(t.ContainerID)
	}
	var r ProbeKillRecord
	run := runOf(v, p, container)
	events := run.eventsIf(func(e *Event) bool { return e.Reason == "Killing" })
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Killing" && e.Container() == container && says(e.Message) && notBefore(e, since) {
			r.Event, r.Kills, r.Found = e, e.Count, true
			break
		}
	}
	if !r.Found && t != nil && (t.ExitCode == 137 || t.ExitCode == 143) {
		// Ended by a signal, and the kubelet killed this container for its probe: the
		// Killing event's lastTimestamp can lag the instance's start (the recorder
		// aggregates repeated events), so a kill that no later instance explains counts.
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			if e.Reason == "Killing" && e.Container() == container && says(e.Message) {
				r.Event, r.Kills, r.Found = e, e.Count, true
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
			r.Line, r.Found = e, true
		}
	}
	if lines > r.Kills {
		r.Kills = lines
	}
	return r
}

// ProbeKillEvidence finds the latest failure of a container's probe of type kind
// ("Liveness", "Startup") and cites it, the kill, and the probe as the spec's field
// ("livenessProbe", "startupProbe") sets it.
func (v *View) ProbeKillEvidence(p *Pod, c ContainerInfo, kill ProbeKillRecord, kind, field string, pr *corev1.Probe) (ProbeFailure, []Evidence) {
	fail := v.LatestProbeFailure(p, c.Name, kind, time.Time{})
	evidence := fail.Evidence()
	evidence = append(evidence, kill.Evidence()...)
	evidence = append(evidence, c.SpecLoc().At(field).Evidence(field+": "+ProbeAction(c.Spec, pr)+"; "+ProbeTiming(pr), p.Obj.CreationTimestamp.Time))
	return fail, evidence
}

// Log lines that say an application finished starting.
var (
	reStartedLine = regexp.MustCompile(`(?i)\b(listening|serving|started|ready to|startup complete|up and running|accepting connections)\b`)
	reNegated     = regexp.MustCompile(`(?i)\b(not|failed|error|unable|cannot)\b`)
)

// SaysStarted reports whether a log line (its timestamp removed) says the application
// finished starting: "listening on :8080", "server started", not "failed to start".
func SaysStarted(line string) bool {
	return reStartedLine.MatchString(line) && !reNegated.MatchString(line)
}

// Probe event and journal wording (pkg/kubelet/prober/prober.go, probe): events
// "<Type> probe failed: <output>" and "<Type> probe errored and resulted in <result>
// state: <err>"; journal "Probe failed" probeType="<Type>" … output="…".
const (
	probeFailedSuffix  = " probe failed: "
	probeErroredSuffix = " probe errored"
)

// ProbeFailure is the latest failure of one probe of one container, from the events and
// the kubelet journal.
type ProbeFailure struct {
	Event  *Event
	Line   *JournalEntry
	Output string
	// Lines counts the journal's "Probe failed" lines for the probe.
	Lines int32
}

// Found reports whether the events or the journal show a failure.
func (f ProbeFailure) Found() bool { return f.Event != nil || f.Line != nil }

// Failures is how many failures the evidence shows: the event's count, or the journal's
// lines when the event is gone.
func (f ProbeFailure) Failures() int32 {
	if f.Event != nil && f.Event.Count > f.Lines {
		return f.Event.Count
	}
	return f.Lines
}

// Evidence cites the event and the journal line.
func (f ProbeFailure) Evidence() []Evidence {
	var out []Evidence
	if f.Event != nil {
		out = append(out, f.Event.Evidence())
	}
	if f.Line != nil {
		ev := f.Line.Evidence()
		if f.Output != "" {
			ev.Excerpt = Excerpt(f.Line.Message + ": " + f.Output)
		}
		out = append(out, ev)
	}
	return out
}

// Count says how often the probe failed, when the event says.
func (f ProbeFailure) Count() string {
	if f.Event != nil && f.Event.Count > 1 {
		return fmt.Sprintf(" (x%d)", f.Event.Count)
	}
	return ""
}

// LatestProbeFailure finds the newest failure of a container's probe of type kind
// ("Readiness", "Liveness", "Startup") seen at or after since.
func (v *View) LatestProbeFailure(p *Pod, container, kind string, since time.Time) ProbeFailure {
	var f ProbeFailure
	run := runOf(v, p, container)
	events := run.eventsIf(func(e *Event) bool { return e.Reason == "Unhealthy" })
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason != "Unhealthy" || e.Container() != container || !notBefore(e, since.Add(-time.Second)) {
			continue
		}
		if out, ok := strings.CutPrefix(e.Message, kind+probeFailedSuffix); ok {
			f.Event, f.Output = e, strings.TrimSpace(out)
			break
		}
		if strings.HasPrefix(e.Message, kind+probeErroredSuffix) {
			f.Event, f.Output = e, strings.TrimSpace(e.Message[len(kind+probeErroredSuffix):])
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
		f.Lines++
		if f.Line == nil {
			f.Line = e
		}
	}
	if f.Line != nil && f.Output == "" {
		f.Output = run.ProbeOutput(f.Line)
	}
	return f
}

// ProbeAction says what a probe does, with a named port resolved against the
// container's ports: "HTTP GET /healthz on port http (8080)".
func ProbeAction(c *corev1.Container, pr *corev1.Probe) string {
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

// ProbeTiming renders a probe's schedule; zero fields take the API's defaults.
func ProbeTiming(pr *corev1.Probe) string {
	return fmt.Sprintf("initialDelaySeconds %d, periodSeconds %d, timeoutSeconds %d, failureThreshold %d",
		pr.InitialDelaySeconds, cmp.Or(pr.PeriodSeconds, 10), cmp.Or(pr.TimeoutSeconds, 1), cmp.Or(pr.FailureThreshold, 3))
}

// reProbeStatus is the kubelet's HTTP probe failure for a status the application
// answered (k8s.io/kubernetes pkg/probe/http/http.go DoHTTPProbe).
var reProbeStatus = regexp.MustCompile(`HTTP probe failed with statuscode: (\d{3})\b`)

// ProbeStatusMeaning says what a probe's HTTP status tells of its configuration: a
// 401 or 403 is an endpoint that asks for credentials the probe does not send, a 404 a
// path the application does not serve; "" for any other output.
func ProbeStatusMeaning(output string) string {
	m := reProbeStatus.FindStringSubmatch(output)
	if m == nil {
		return ""
	}
	switch m[1] {
	case "401", "403":
		return ": the application answers " + m[1] + ", so its health endpoint asks for credentials the probe does not send (exempt the path from authentication, or give the probe httpHeaders)"
	case "404":
		return ": the application answers 404, so the probe's path is not one it serves"
	}
	return ""
}
