package analyze

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodRequests is what the scheduler counts a pod as requesting: pod-level requests when
// set, else the sum of its containers and sidecars, at least the largest init container
// (plus the sidecars started before it), plus the RuntimeClass overhead. It follows
// k8s.io/component-helpers/resource.PodRequests.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	PodRequestsInto(out, pod)
	return out
}

// PodRequestsInto is PodRequests into out, which it clears first: a caller that sums
// the requests of every pod of a cluster (a node's bound requests) reuses one list
// instead of making one, and two more for the init containers, per pod (at 80k pods,
// about 50 MB made and let go while the rules run, where an analysis's memory peaks).
func PodRequestsInto(out corev1.ResourceList, pod *corev1.Pod) {
	clear(out)
	if pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0 {
		addList(out, pod.Spec.Resources.Requests)
		addList(out, pod.Spec.Overhead)
		return
	}
	for _, c := range pod.Spec.Containers {
		addList(out, c.Resources.Requests)
	}
	if len(pod.Spec.InitContainers) > 0 {
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
	}
	addList(out, pod.Spec.Overhead)
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

// reRequestsKey opens a resources' requests block in a pasted manifest; reRequestEntry
// is one of its entries.
var (
	reRequestsKey  = regexp.MustCompile(`^(\s*)requests:\s*$`)
	reRequestEntry = regexp.MustCompile(`^(\s*)(cpu|memory|ephemeral-storage):\s*["']?([0-9]+(?:\.[0-9]+)?(?:m|[KMGTPE]i?|[kmgtpe])?)["']?\s*$`)
)

// PastedRequests is the one requests block the evidence's pasted text shows ("requests:"
// with cpu, memory or ephemeral-storage entries indented below it), for a pod whose spec
// the evidence lacks: what a ticket says its pod asks for. Nil when there is none, or
// several that differ.
func (v *View) PastedRequests() corev1.ResourceList {
	var found corev1.ResourceList
	for _, f := range v.g.fragments {
		var cur corev1.ResourceList
		indent := -1
		flush := func() bool {
			if len(cur) == 0 {
				return true
			}
			if found != nil && !equalLists(found, cur) {
				return false
			}
			found, cur = cur, nil
			return true
		}
		for _, line := range f.lines {
			if m := reRequestsKey.FindStringSubmatch(line); m != nil {
				if !flush() {
					return nil
				}
				indent, cur = len(m[1]), corev1.ResourceList{}
				continue
			}
			if indent < 0 {
				continue
			}
			m := reRequestEntry.FindStringSubmatch(line)
			if m == nil || len(m[1]) <= indent {
				if !flush() {
					return nil
				}
				indent = -1
				continue
			}
			if q, err := resource.ParseQuantity(m[3]); err == nil {
				cur[corev1.ResourceName(m[2])] = q
			}
		}
		if !flush() {
			return nil
		}
	}
	return found
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if o, ok := b[k]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
