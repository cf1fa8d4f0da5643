package rules

import (
	"fmt"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ServiceEndpointSliceMissing finds Services that select ready pods but have no
// EndpointSlice at all.
var ServiceEndpointSliceMissing = &analyze.Rule{
	ID:       "service-endpointslice-missing",
	Stage:    analyze.StageService,
	Title:    "service selects ready pods but has no EndpointSlice",
	Doc:      serviceEndpointSliceMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Services, analyze.Pods, analyze.EndpointSlices},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs},
	},
	Run: serviceEndpointSliceMissing,
}

const serviceEndpointSliceMissingDoc = `The Service has a selector and ready pods match it, yet no EndpointSlice labelled
kubernetes.io/service-name=SERVICE exists. The EndpointSlice controller in
kube-controller-manager (pkg/controller/endpointslice) creates one for every Service
with a selector within seconds, even when no pod matches; without it kube-proxy, DNS
and ingress controllers know no backend, and every connection to the Service fails
while its pods are healthy. Something keeps that controller from doing its work:
kube-controller-manager is down or has no leader, runs with --controllers excluding
endpointslice, lacks RBAC on endpointslices, or a webhook or quota refuses the slices.

## Confirm on a live cluster

    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE
    kubectl get lease -n kube-system kube-controller-manager -o jsonpath='{.spec.holderIdentity} {.spec.renewTime}'
    kubectl logs -n kube-system -l component=kube-controller-manager | grep -i endpointslice

## Fix

Bring the EndpointSlice controller back: start kube-controller-manager (or let it win
its leader election), keep endpointslice among its --controllers, restore its
ClusterRole (system:controller:endpointslice-controller), or stop the webhook or quota
that refuses EndpointSlices. It publishes the slices on its next sync; no change to the
Service or the pods is needed.
`

// sliceGrace is how long after a Service's creation its missing EndpointSlice is still
// the controller catching up rather than a fault; it syncs within seconds.
const sliceGrace = time.Minute

func serviceEndpointSliceMissing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	now := v.CollectedAt().Add(v.ClockSkew())
	for _, s := range v.SelectorServices() {
		svc := s.Obj
		if len(v.EndpointSlicesFor(svc.Namespace, svc.Name)) > 0 {
			continue
		}
		age := now.Sub(svc.CreationTimestamp.Time)
		if svc.CreationTimestamp.IsZero() || age < sliceGrace {
			continue
		}
		ready := v.ReadyPodsSelectedBy(svc)
		if len(ready) == 0 {
			continue // no ready pod: the other service rules say why
		}
		out = append(out, sliceMissingFinding(v, s, ready, age))
	}
	return out
}

func sliceMissingFinding(v *analyze.View, s *analyze.Service, ready []*analyze.Pod, age time.Duration) analyze.Finding {
	svc := s.Obj
	sel := phrase.Selector(svc.Spec.Selector)
	evidence := []analyze.Evidence{
		s.Loc.At("spec", "selector").Evidence(fmt.Sprintf("service %s: selector %s, created %s", svc.Name, sel, phrase.Stamp(svc.CreationTimestamp.Time)), svc.CreationTimestamp.Time),
		v.ListLocation(analyze.EndpointSlices, svc.Namespace).Evidence(
			fmt.Sprintf("no EndpointSlice labelled kubernetes.io/service-name=%s", svc.Name), v.CollectedAt()),
	}
	names := make([]string, 0, len(ready))
	var subjects []analyze.ObjectRef
	for _, p := range ready {
		names = append(names, p.Obj.Name)
		subjects = append(subjects, p.Ref())
		if c, loc := analyze.PodCondition(p, "Ready"); c != nil && len(evidence) < 5 {
			evidence = append(evidence, loc.Evidence(fmt.Sprintf("pod %s Ready=%s", p.Obj.Name, c.Status), c.LastTransitionTime.Time))
		}
	}
	if w := v.Workload(ready[0]); w != nil {
		subjects = append(subjects, *w)
	}
	subjects = append(subjects, s.Ref())
	others := ""
	if n := slicesInNamespace(v, svc.Namespace); n == 0 {
		others = fmt.Sprintf("; no Service of namespace %s has one", svc.Namespace)
	}
	cause := fmt.Sprintf("service %s selects %d ready pod(s) (%s: %s) but has no EndpointSlice %s after it was created%s, so the EndpointSlice controller in kube-controller-manager has not published its endpoints and connections to it reach no pod",
		s.Ref().NamespacedName(), len(ready), sel, strings.Join(names, ", "), age.Round(time.Second), others)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: "Bring the EndpointSlice controller back: make kube-controller-manager run (and hold its leader lease) with the endpointslice controller enabled and its RBAC intact, or remove the webhook or quota that refuses EndpointSlices; it then publishes the slices on its own.",
		Confirm: []string{
			analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name),
			"kubectl get lease -n kube-system kube-controller-manager -o jsonpath='{.spec.holderIdentity} {.spec.renewTime}'",
		},
		GroupKey: s.Ref().String(),
	}
}

// slicesInNamespace counts the EndpointSlices of a namespace's Services.
func slicesInNamespace(v *analyze.View, namespace string) int {
	n := 0
	for _, s := range v.Services() {
		if s.Obj.Namespace == namespace {
			n += len(v.EndpointSlicesFor(namespace, s.Obj.Name))
		}
	}
	return n
}
