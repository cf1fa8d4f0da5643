package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

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
	// It says the probe fails and quotes why; a signature that knows the reason (a
	// port name no port has, TLS on a plain-HTTP probe) wins over it.
	Catchall: true,
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

func probeReadinessFailing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for r := range v.ContainerRuns() {
		p, c := r.Subject.Pod, r.Container
		if p.Obj.DeletionTimestamp != nil || p.Obj.Status.Phase != corev1.PodRunning {
			continue
		}
		st := c.Status
		if c.Spec.ReadinessProbe == nil || st == nil || st.State.Running == nil || st.Ready {
			continue
		}
		// Fewer failures than the threshold is a container still starting up.
		f := v.LatestProbeFailure(p, c.Name, "Readiness", st.State.Running.StartedAt.Time)
		if !f.Found() || f.Failures() < cmp.Or(c.Spec.ReadinessProbe.FailureThreshold, 3) {
			continue
		}
		out = append(out, readinessFinding(v, p, c, f))
	}
	return out
}

func readinessFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, f analyze.ProbeFailure) analyze.Finding {
	pod := p.Obj
	pr := c.Spec.ReadinessProbe
	action := analyze.ProbeAction(c.Spec, pr)
	evidence := f.Evidence()
	evidence = append(evidence, c.SpecLoc().At("readinessProbe").Evidence("readinessProbe: "+action+"; "+analyze.ProbeTiming(pr), pod.CreationTimestamp.Time))
	if cond, loc := analyze.PodCondition(p, corev1.PodReady); cond != nil {
		evidence = append(evidence, loc.Evidence(fmt.Sprintf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message), cond.LastTransitionTime.Time))
	}
	if h := pr.HTTPGet; h != nil && len(h.Path) > 1 {
		run, _ := v.ContainerRun(p, c.Name)
		if log := run.Log; analyze.UsableLog(log) {
			if text, n, ok := analyze.LastLineMatching(log, regexp.MustCompile(regexp.QuoteMeta(h.Path))); ok {
				evidence = append(evidence, analyze.LineEvidence(log, analyze.LogLine{Text: text, N: n}, "the application logs the probe's request: ", time.Time{}))
			}
		}
	}
	output := f.Output
	if output == "" {
		output = "no output"
	}
	cause := fmt.Sprintf("container %s of pod %s runs but is not ready: its readiness probe (%s) fails with %q%s%s",
		c.Name, p.Ref().NamespacedName(), action, output, f.Count(), analyze.ProbeStatusMeaning(output))
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
		readyOnly := false
		for _, sl := range v.EndpointSlicesFor(svc.Namespace, svc.Name) {
			readyOnly = readyOnly || analyze.Partial(sl.Obj.ObjectMeta, "notReadyEndpoints")
			for i, ep := range sl.Obj.Endpoints {
				total++
				isReady := analyze.EndpointReady(ep)
				if isReady {
					ready++
				}
				if ep.TargetRef != nil && (ep.TargetRef.UID == pod.UID || ep.TargetRef.Name == pod.Name && ep.TargetRef.Namespace == pod.Namespace) {
					evidence = append(evidence, sl.Loc.At("endpoints", i).Evidence(fmt.Sprintf("EndpointSlice %s: endpoint %s for pod %s ready=%t",
						sl.Obj.Name, strings.Join(ep.Addresses, ","), pod.Name, isReady), time.Time{}))
				}
			}
		}
		switch {
		case readyOnly:
			text += fmt.Sprintf(" (%d ready endpoint(s))", ready)
		case v.Has(analyze.EndpointSlices):
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
			c.Name, cmp.Or(pr.TimeoutSeconds, 1))
	case strings.Contains(lower, "statuscode: 5"):
		return fmt.Sprintf("Container %s reports itself unhealthy (a 5xx answer): its log says which dependency it waits for; fix that or the health check.", c.Name)
	case h.Exec != nil:
		return fmt.Sprintf("The probe command of container %s exits non-zero: run it in the container (kubectl exec) to see why, then fix the command or the condition it checks.", c.Name)
	}
	return fmt.Sprintf("Make the readiness probe of container %s succeed: check its %s against what the application serves.", c.Name, analyze.ProbeAction(c.Spec, pr))
}
