package rules

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// What the service rules share: a Service's selector, the Services that select a pod and
// the ready pods a selector picks.

func selectorString(sel map[string]string) string {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sel[k]
	}
	return strings.Join(parts, ",")
}

// selectorServices lists the Services whose endpoints come from a pod selector: not
// ExternalName, and with a selector (one without manages its endpoints by hand).
func selectorServices(v *analyze.View) []*analyze.Service {
	var out []*analyze.Service
	for _, s := range v.Services() {
		if s.Obj.Spec.Type != corev1.ServiceTypeExternalName && len(s.Obj.Spec.Selector) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func podFinished(p *analyze.Pod) bool {
	ph := p.Obj.Status.Phase
	return ph == corev1.PodSucceeded || ph == corev1.PodFailed || p.Obj.DeletionTimestamp != nil
}

// readyPodsSelectedBy lists the ready pods, not finished, that a Service's selector
// picks: the pods that should be its endpoints.
func readyPodsSelectedBy(v *analyze.View, svc *corev1.Service) []*analyze.Pod {
	var ready []*analyze.Pod
	for _, p := range v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector) {
		if !podFinished(p) && analyze.IsReady(p) {
			ready = append(ready, p)
		}
	}
	return ready
}
