package analyze

import corev1 "k8s.io/api/core/v1"

// What Services are compared with: the Services whose endpoints come from a pod
// selector, and the pods that should be their endpoints. The service rules and the
// controller and scheduling rules that skip finished pods read these.

// PodFinished reports whether a pod is done: Succeeded, Failed, or being deleted. A
// finished pod is no endpoint and holds no node's ports or spread.
func PodFinished(p *Pod) bool {
	ph := p.Obj.Status.Phase
	return ph == corev1.PodSucceeded || ph == corev1.PodFailed || p.Obj.DeletionTimestamp != nil
}

// SelectorServices lists the Services whose endpoints come from a pod selector: not
// ExternalName, and with a selector (one without manages its endpoints by hand).
func (v *View) SelectorServices() []*Service {
	var out []*Service
	for _, s := range v.Services() {
		if s.Obj.Spec.Type != corev1.ServiceTypeExternalName && len(s.Obj.Spec.Selector) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// ReadyPodsSelectedBy lists the ready pods, not finished, that a Service's selector
// picks: the pods that should be its endpoints.
func (v *View) ReadyPodsSelectedBy(svc *corev1.Service) []*Pod {
	var ready []*Pod
	for _, p := range v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector) {
		if !PodFinished(p) && IsReady(p) {
			ready = append(ready, p)
		}
	}
	return ready
}
