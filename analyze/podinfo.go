package analyze

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerInfo pairs a container's spec and status with where each is in the bundle.
type ContainerInfo struct {
	Name    string
	Init    bool
	Spec    *corev1.Container
	SpecLoc Location
	// Status is nil when the kubelet has not reported the container yet.
	Status    *corev1.ContainerStatus
	StatusLoc Location
}

// Containers lists a pod's init containers then its containers, with their statuses.
func Containers(p *Pod) []ContainerInfo {
	pod := p.Obj
	var out []ContainerInfo
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, specField, statusField string, init bool) {
		for i := range specs {
			c := ContainerInfo{Name: specs[i].Name, Init: init, Spec: &specs[i], SpecLoc: p.Loc.At("spec", specField, i)}
			for j := range statuses {
				if statuses[j].Name == c.Name {
					c.Status, c.StatusLoc = &statuses[j], p.Loc.At("status", statusField, j)
				}
			}
			out = append(out, c)
		}
	}
	add(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, "initContainers", "initContainerStatuses", true)
	add(pod.Spec.Containers, pod.Status.ContainerStatuses, "containers", "containerStatuses", false)
	return out
}

// PodCondition returns a pod condition and its location, or nil.
func PodCondition(p *Pod, t corev1.PodConditionType) (*corev1.PodCondition, Location) {
	i, c := condition(p.Obj, t)
	if c == nil {
		return nil, Location{}
	}
	return c, p.Loc.At("status", "conditions", i)
}

// IsReady reports whether a pod's Ready condition is True.
func IsReady(p *Pod) bool {
	// No location: signatures ask this of every line's pod, and building the pointer
	// string took a third of an analysis's CPU time.
	_, c := condition(p.Obj, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// LatestEvent returns the most recently seen event with one of the reasons (and, when
// container is set, about that container), or nil.
func LatestEvent(events []*Event, container string, reasons ...string) *Event {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if container != "" && e.Container() != container {
			continue
		}
		for _, r := range reasons {
			if e.Reason == r {
				return e
			}
		}
	}
	return nil
}

// ContainerID strips the runtime prefix from a status's container ID
// ("containerd://abc…" → "abc…").
func ContainerID(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
