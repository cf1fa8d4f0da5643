package rules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ServiceNoReadyEndpoints finds Services whose selected pods exist but none is ready.
var ServiceNoReadyEndpoints = &analyze.Rule{
	ID:       "service-no-ready-endpoints",
	Stage:    analyze.StageService,
	Title:    "service selects pods but none is ready",
	Doc:      serviceNoReadyEndpointsDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Services, analyze.Pods},
		Optional: []analyze.Kind{analyze.EndpointSlices},
	},
	Run: serviceNoReadyEndpoints,
}

const serviceNoReadyEndpointsDoc = `The Service's selector matches pods, but none of them is ready, so its EndpointSlices
hold no ready endpoint and connections to the Service fail (or hang) everywhere in the
cluster. The Service is fine: the cause is whatever keeps its pods from being ready,
which podflow reports as the findings that explain this one.

## Confirm on a live cluster

    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE
    kubectl get pods -n NAMESPACE -l SELECTOR -o wide

## Fix

Fix the pods (follow the linked root cause). Only when the pods are meant to receive
traffic before they are ready (peer discovery in a StatefulSet, say) set
publishNotReadyAddresses on the Service.
`

func serviceNoReadyEndpoints(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, s := range v.SelectorServices() {
		svc := s.Obj
		if svc.Spec.PublishNotReadyAddresses {
			continue
		}
		var selected []*analyze.Pod
		for _, p := range v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector) {
			if p.Obj.Status.Phase != corev1.PodSucceeded && p.Obj.Status.Phase != corev1.PodFailed && p.Obj.DeletionTimestamp == nil {
				selected = append(selected, p)
			}
		}
		if len(selected) == 0 {
			continue
		}
		ready := 0
		for _, p := range selected {
			if analyze.IsReady(p) {
				ready++
			}
		}
		sliceText, sliceEvidence, readyEndpoints := endpointState(v, s)
		if ready > 0 || readyEndpoints > 0 {
			continue
		}
		evidence := []analyze.Evidence{s.Loc.At("spec", "selector").Evidence("selector "+phrase.Selector(svc.Spec.Selector), svc.CreationTimestamp.Time)}
		evidence = append(evidence, sliceEvidence...)
		subjects := []analyze.ObjectRef{s.Ref()}
		for _, p := range selected {
			subjects = append(subjects, p.Ref())
			c, loc := analyze.PodCondition(p, corev1.PodReady)
			if c != nil {
				evidence = append(evidence, loc.Evidence(fmt.Sprintf("pod %s Ready=%s %s", p.Obj.Name, c.Status, c.Reason), c.LastTransitionTime.Time))
			} else {
				evidence = append(evidence, p.Loc.At("status").Evidence(fmt.Sprintf("pod %s phase %s, no Ready condition", p.Obj.Name, p.Obj.Status.Phase), p.Obj.CreationTimestamp.Time))
			}
		}
		cause := fmt.Sprintf("service %s selects %d pod(s) (%s) and none is ready, so it has no ready endpoints",
			s.Ref().NamespacedName(), len(selected), phrase.Selector(svc.Spec.Selector))
		if sliceText != "" {
			cause += ": " + sliceText
		}
		out = append(out, analyze.Finding{
			Subjects:    subjects,
			Cause:       cause,
			Evidence:    evidence,
			Remediation: fmt.Sprintf("Fix what keeps the pods of service %s from becoming ready (see the findings that explain this one); traffic returns once they pass their readiness checks.", svc.Name),
			Confirm: []string{
				analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name),
				analyze.Command("kubectl get pods -n %s -l %s -o wide", svc.Namespace, analyze.Value(phrase.Selector(svc.Spec.Selector))),
			},
		})
	}
	return out
}

// endpointState summarizes a Service's EndpointSlices: ready and not-ready endpoint
// counts, with the slices as evidence. Without EndpointSlices in the bundle it says nothing.
func endpointState(v *analyze.View, s *analyze.Service) (string, []analyze.Evidence, int) {
	if !v.Has(analyze.EndpointSlices) {
		return "", nil, 0
	}
	slices := v.EndpointSlicesFor(s.Obj.Namespace, s.Obj.Name)
	if len(slices) == 0 {
		return "it has no EndpointSlice", nil, 0
	}
	ready, notReady := 0, 0
	readyOnly := false
	var evidence []analyze.Evidence
	for _, sl := range slices {
		readyOnly = readyOnly || analyze.Partial(sl.Obj.ObjectMeta, "notReadyEndpoints")
		r, n := analyze.Readiness(sl)
		ready, notReady = ready+r, notReady+n
		evidence = append(evidence, sl.Loc.At("endpoints").Evidence(
			fmt.Sprintf("EndpointSlice %s: %d ready, %d not ready endpoint(s)", sl.Obj.Name, r, n), sl.Obj.CreationTimestamp.Time))
	}
	if readyOnly {
		// kubectl get endpoints and describe service print ready endpoints only.
		return fmt.Sprintf("its endpoints list %d ready endpoint(s) (the evidence shows no not-ready ones)", ready), evidence, ready
	}
	return fmt.Sprintf("its EndpointSlices list %d ready and %d not-ready endpoint(s)", ready, notReady), evidence, ready
}
