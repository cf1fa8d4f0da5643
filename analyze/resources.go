package analyze

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodRequests is what the scheduler counts a pod as requesting: pod-level requests when
// set, else the sum of its containers and sidecars, at least the largest init container
// (plus the sidecars started before it), plus the RuntimeClass overhead. It follows
// k8s.io/component-helpers/resource.PodRequests.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	if pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0 {
		addList(out, pod.Spec.Resources.Requests)
		addList(out, pod.Spec.Overhead)
		return out
	}
	for _, c := range pod.Spec.Containers {
		addList(out, c.Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(out, c.Resources.Requests)
			addList(sidecars, c.Resources.Requests)
			continue
		}
		need := corev1.ResourceList{}
		addList(need, sidecars)
		addList(need, c.Resources.Requests)
		maxList(initMax, need)
	}
	maxList(out, initMax)
	addList(out, pod.Spec.Overhead)
	return out
}

func addList(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

func maxList(into, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}

// Quantity returns a resource from a list, zero when absent.
func Quantity(list corev1.ResourceList, name corev1.ResourceName) resource.Quantity {
	if q, ok := list[name]; ok {
		return q
	}
	return resource.Quantity{}
}
