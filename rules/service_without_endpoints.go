package rules

import (
	"fmt"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ServiceWithoutEndpoints finds Services with a selector whose EndpointSlices list no
// ready endpoint, in evidence that holds no pods to say why.
var ServiceWithoutEndpoints = &analyze.Rule{
	ID:       "service-without-endpoints",
	Stage:    analyze.StageService,
	Title:    "service has no ready endpoint (the evidence holds no pods to say why)",
	Doc:      serviceWithoutEndpointsDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Services, analyze.EndpointSlices},
		Optional: []analyze.Kind{analyze.Pods},
	},
	Run: serviceWithoutEndpoints,
}

const serviceWithoutEndpointsDoc = `The Service has a selector, and its EndpointSlices (or the Endpoints line of kubectl
describe service, "<none>") list no ready endpoint, so connections to it fail or hang
everywhere in the cluster and DNS for a headless Service answers no address. The
EndpointSlice controller lists a pod as a ready endpoint only when the pod carries every
label of the selector, runs, and passes its readiness probe. The evidence holds no pods,
so which of these fails is not known here: no pod carries the selector's labels (a typo,
or labels changed on one side only), the pods are not ready (a failing readiness probe,
a crash), or none runs (a workload scaled to zero, pods Pending).

## Confirm on a live cluster

    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE
    kubectl get pods -n NAMESPACE -l SELECTOR -o wide
    kubectl get pods -n NAMESPACE --show-labels

## Fix

Make the selector and the pods' labels agree (kubectl get svc -o wide against
--show-labels), or fix what keeps the selected pods from running and becoming ready;
the endpoints return by themselves. Paste the pods (kubectl get pod -o yaml, or describe
pod) for podflow to say which it is.
`

func serviceWithoutEndpoints(v *analyze.View) []analyze.Finding {
	// With pods in the evidence, the selector and readiness rules say which pods the
	// Service selects and why none is ready.
	if v.Has(analyze.Pods) {
		return nil
	}
	var out []analyze.Finding
	for _, s := range v.SelectorServices() {
		svc := s.Obj
		if svc.Spec.PublishNotReadyAddresses {
			continue
		}
		slices := v.EndpointSlicesFor(svc.Namespace, svc.Name)
		if len(slices) == 0 {
			continue
		}
		ready, notReady := 0, 0
		var evidence []analyze.Evidence
		evidence = append(evidence, s.Loc.At("spec", "selector").Evidence("selector "+phrase.Selector(svc.Spec.Selector), svc.CreationTimestamp.Time))
		for _, sl := range slices {
			r, n := analyze.Readiness(sl)
			ready, notReady = ready+r, notReady+n
			evidence = append(evidence, sl.Loc.At("endpoints").Evidence(
				fmt.Sprintf("EndpointSlice %s: %d ready, %d not ready endpoint(s)", sl.Obj.Name, r, n), sl.Obj.CreationTimestamp.Time))
		}
		if ready > 0 {
			continue
		}
		kind := "service"
		if svc.Spec.ClusterIP == "None" {
			kind = "headless service"
		}
		cause := fmt.Sprintf("%s %s has no ready endpoint: no pod that carries its selector's labels (%s) runs and is ready",
			kind, s.Ref().NamespacedName(), phrase.Selector(svc.Spec.Selector))
		if notReady > 0 {
			cause += fmt.Sprintf("; %d endpoint(s) are listed not ready, so pods match and fail their readiness", notReady)
		} else {
			cause += "; the evidence holds no pods to say whether none matches or the matching ones are not ready"
		}
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{s.Ref()},
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Compare the selector of service %s with the labels of the pods meant to serve it and make them agree, "+
				"or fix what keeps those pods from running and becoming ready; paste the pods for podflow to say which.", svc.Name),
			Confirm: []string{
				analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name),
				analyze.Command("kubectl get pods -n %s -l %s -o wide", svc.Namespace, analyze.Value(phrase.Selector(svc.Spec.Selector))),
				analyze.Command("kubectl get pods -n %s --show-labels", svc.Namespace),
			},
		})
	}
	return out
}
