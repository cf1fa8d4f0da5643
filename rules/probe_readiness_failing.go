package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"podflow.dev/podflow/analyze"
)

// ProbeReadinessFailing finds running containers kept out of service by a failing
// readiness probe.
var ProbeReadinessFailing = &analyze.Rule{
	ID:       "probe-readiness-failing",
	Stage:    analyze.StageProbe,
	Title:    "readiness probe failing: pod runs but receives no traffic",
	Doc:      probeReadinessFailingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.Services, analyze.EndpointSlices,
			analyze.ContainerLogs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: probeReadinessFailing,
}

const probeReadinessFailingDoc = `The container runs, but its readiness probe fails, so the pod's Ready condition stays
False. The kubelet records Unhealthy events ("Readiness probe failed: HTTP probe failed
with statuscode: 404") and logs "Probe failed" probeType="Readiness". A pod that is
not ready is listed as a not-ready endpoint in the EndpointSlices of every Service that
selects it, so those Services send it no traffic; a Deployment's rollout also waits for
readiness. The container is not restarted (that is what a liveness probe does).

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=Unhealthy
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].readinessProbe}'
    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE

## Fix

Make the probe ask what the application serves: the right path and port (a named port
must exist on the container), a status below 400, an answer within timeoutSeconds. A
"connection refused" means nothing listens on that port, or the process binds
127.0.0.1 only. When the application reports itself unready on purpose (a dependency is
down), fix the dependency.
`

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

// latestProbeFailure finds the newest failure of a container's probe of type kind
// ("Readiness", "Liveness", "Startup") seen at or after since.
func latestProbeFailure(v *analyze.View, p *analyze.Pod, container, kind string, since time.Time) probeFailure {
	var f probeFailure
	events := v.EventsFor(p.Ref())
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason != "Unhealthy" || e.Container() != container || e.LastTime.Before(since.Add(-time.Second)) {
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
	entries := v.JournalFor(p)
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
		f.output = journalProbeOutput(v, f.line)
	}
	return f
}

// failures is how many failures the evidence shows: the event's count, or the journal's
// lines when the event is gone.
func (f probeFailure) failures() int32 {
	if f.event != nil && f.event.Count > f.lines {
		return f.event.Count
	}
	return f.lines
}

// journalProbeOutput is the output="…" of a "Probe failed" line. klog writes a
// multi-line value as output=<, the lines indented, then " >"; the journal gives each
// its own entry, so they are read back from the node's journal.
func journalProbeOutput(v *analyze.View, e *analyze.JournalEntry) string {
	out, _ := e.Field("output")
	if out != "<" {
		return out
	}
	entries := v.Journal(e.Node())
	for i, x := range entries {
		if x != e {
			continue
		}
		var lines []string
		for _, y := range entries[i+1:] {
			if y.Severity != 0 || len(lines) > 20 {
				break
			}
			text := strings.TrimSpace(y.Message)
			if text == ">" {
				break
			}
			lines = append(lines, text)
		}
		return strings.Join(lines, " ")
	}
	return ""
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
		pr.InitialDelaySeconds, orDefault(pr.PeriodSeconds, 10), orDefault(pr.TimeoutSeconds, 1), orDefault(pr.FailureThreshold, 3))
}

func orDefault(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}

func probeReadinessFailing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, p := range v.Pods() {
		if p.Obj.DeletionTimestamp != nil || p.Obj.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range analyze.Containers(p) {
			st := c.Status
			if c.Spec.ReadinessProbe == nil || st == nil || st.State.Running == nil || st.Ready {
				continue
			}
			// Fewer failures than the threshold is a container still starting up.
			f := latestProbeFailure(v, p, c.Name, "Readiness", st.State.Running.StartedAt.Time)
			if !f.found() || f.failures() < orDefault(c.Spec.ReadinessProbe.FailureThreshold, 3) {
				continue
			}
			out = append(out, readinessFinding(v, p, c, f))
		}
	}
	return out
}

func readinessFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, f probeFailure) analyze.Finding {
	pod := p.Obj
	pr := c.Spec.ReadinessProbe
	action := probeAction(c.Spec, pr)
	evidence := f.evidence()
	evidence = append(evidence, c.SpecLoc.At("readinessProbe").Evidence("readinessProbe: "+action+"; "+probeTiming(pr), pod.CreationTimestamp.Time))
	if cond, loc := analyze.PodCondition(p, corev1.PodReady); cond != nil {
		evidence = append(evidence, loc.Evidence(fmt.Sprintf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message), cond.LastTransitionTime.Time))
	}
	if h := pr.HTTPGet; h != nil && len(h.Path) > 1 {
		if log := v.Log(p, c.Name, false); usableLog(log) {
			if text, n, ok := lastLineMatching(log, regexp.MustCompile(regexp.QuoteMeta(h.Path))); ok {
				evidence = append(evidence, lineEvidence(log, logLine{text: text, n: n}, "the application logs the probe's request: ", time.Time{}))
			}
		}
	}
	output := f.output
	if output == "" {
		output = "no output"
	}
	cause := fmt.Sprintf("container %s of pod %s runs but is not ready: its readiness probe (%s) fails with %q%s",
		c.Name, p.Ref().NamespacedName(), action, output, f.count())
	effect, svcEvidence, services := serviceEffect(v, p)
	evidence = append(evidence, svcEvidence...)
	cause += effect
	subjects, group := v.PodAndWorkload(p)
	subjects = append(subjects, services...)
	confirm := []string{
		analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=Unhealthy", pod.Namespace, pod.Name),
	}
	for _, s := range services {
		confirm = append(confirm, analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", s.Namespace, s.Name))
	}
	if h := pr.HTTPGet; h != nil {
		port := h.Port.String()
		confirm = append(confirm, analyze.Command("kubectl port-forward -n %s pod/%s 18080:%s & curl -i http://127.0.0.1:18080%s", pod.Namespace, pod.Name, analyze.Value(port), analyze.Value(h.Path)))
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: probeFix(c, pr, output),
		Confirm:     confirm,
		GroupKey:    group + "\x00" + c.Name + "\x00" + action,
	}
}

// serviceEffect names the Services that select the pod and what their EndpointSlices
// say of it: the cost of the pod not being ready.
func serviceEffect(v *analyze.View, p *analyze.Pod) (string, []analyze.Evidence, []analyze.ObjectRef) {
	pod := p.Obj
	var names []string
	var evidence []analyze.Evidence
	var refs []analyze.ObjectRef
	for _, s := range v.Services() {
		svc := s.Obj
		if svc.Namespace != pod.Namespace || len(svc.Spec.Selector) == 0 || svc.Spec.PublishNotReadyAddresses {
			continue
		}
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			continue
		}
		refs = append(refs, s.Ref())
		text := svc.Name
		ready, total := 0, 0
		for _, sl := range v.EndpointSlicesFor(svc.Namespace, svc.Name) {
			for i, ep := range sl.Obj.Endpoints {
				total++
				isReady := ep.Conditions.Ready == nil || *ep.Conditions.Ready
				if isReady {
					ready++
				}
				if ep.TargetRef != nil && (ep.TargetRef.UID == pod.UID || ep.TargetRef.Name == pod.Name && ep.TargetRef.Namespace == pod.Namespace) {
					evidence = append(evidence, sl.Loc.At("endpoints", i).Evidence(fmt.Sprintf("EndpointSlice %s: endpoint %s for pod %s ready=%t",
						sl.Obj.Name, strings.Join(ep.Addresses, ","), pod.Name, isReady), time.Time{}))
				}
			}
		}
		if v.Has(analyze.EndpointSlices) {
			text += fmt.Sprintf(" (%d of %d endpoint(s) ready)", ready, total)
		}
		names = append(names, text)
	}
	switch {
	case len(names) > 0:
		return fmt.Sprintf(", so service(s) %s send it no traffic", strings.Join(names, ", ")), evidence, refs
	case v.Has(analyze.Services) && v.Controller(p.Meta()) != nil:
		return "; no Service selects the pod, but its controller counts it as unavailable", evidence, refs
	case v.Has(analyze.Services):
		return "; no Service selects the pod", evidence, refs
	}
	return "", evidence, refs
}

// probeFix turns the probe's output into advice.
func probeFix(c analyze.ContainerInfo, pr *corev1.Probe, output string) string {
	lower := strings.ToLower(output)
	h := pr.ProbeHandler
	switch {
	case h.HTTPGet != nil && strings.Contains(lower, "statuscode: 404"):
		return fmt.Sprintf("Container %s has no handler for %s: point the probe at the path the application serves for health, or add that endpoint.",
			c.Name, h.HTTPGet.Path)
	case strings.Contains(lower, "connection refused"):
		return fmt.Sprintf("Nothing listens on the probed port of container %s: match the probe's port to the port the application binds, "+
			"and bind 0.0.0.0 rather than 127.0.0.1.", c.Name)
	case strings.Contains(lower, "deadline exceeded") || strings.Contains(lower, "timeout") || strings.Contains(lower, "timed out"):
		return fmt.Sprintf("The probe of container %s gets no answer within timeoutSeconds %d: make the endpoint cheaper or raise timeoutSeconds.",
			c.Name, orDefault(pr.TimeoutSeconds, 1))
	case strings.Contains(lower, "statuscode: 5"):
		return fmt.Sprintf("Container %s reports itself unhealthy (a 5xx answer): its log says which dependency it waits for; fix that or the health check.", c.Name)
	case h.Exec != nil:
		return fmt.Sprintf("The probe command of container %s exits non-zero: run it in the container (kubectl exec) to see why, then fix the command or the condition it checks.", c.Name)
	}
	return fmt.Sprintf("Make the readiness probe of container %s succeed: check its %s against what the application serves.", c.Name, probeAction(c.Spec, pr))
}
