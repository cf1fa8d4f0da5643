package analyze

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerInfo pairs a container's spec and status with where each is in the bundle.
type ContainerInfo struct {
	Name string
	Init bool
	Spec *corev1.Container
	// Status is nil when the kubelet has not reported the container yet.
	Status *corev1.ContainerStatus
	// pod is the pod the container is listed in, and spec and status the indexes of
	// its spec and status in the pod's lists (status -1 for none): the locations are
	// made when a finding cites them. Every container of a big cluster has a
	// ContainerInfo in the facts, and two pointer strings each were megabytes.
	pod          *Pod
	spec, status int32
}

// SpecLoc is where the container's spec is in the bundle; the zero Location when the
// evidence holds no pod object for it.
func (c ContainerInfo) SpecLoc() Location {
	if c.pod == nil {
		return Location{}
	}
	field := "containers"
	if c.Init {
		field = "initContainers"
	}
	return c.pod.Loc.At("spec", field, int(c.spec))
}

// StatusLoc is where the container's status is in the bundle; the zero Location when
// the kubelet has not reported it or the evidence holds no pod object for it.
func (c ContainerInfo) StatusLoc() Location {
	if c.pod == nil || c.Status == nil {
		return Location{}
	}
	field := "containerStatuses"
	if c.Init {
		field = "initContainerStatuses"
	}
	return c.pod.Loc.At("status", field, int(c.status))
}

// Containers lists a pod's init containers then its containers, with their statuses.
func Containers(p *Pod) []ContainerInfo {
	n := len(p.Obj.Spec.InitContainers) + len(p.Obj.Spec.Containers)
	if n == 0 {
		return nil
	}
	return appendContainers(make([]ContainerInfo, 0, n), p)
}

// appendContainers appends what Containers lists to out.
func appendContainers(out []ContainerInfo, p *Pod) []ContainerInfo {
	pod := p.Obj
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, init bool) {
		for i := range specs {
			c := ContainerInfo{Name: specs[i].Name, Init: init, Spec: &specs[i], pod: p, spec: int32(i), status: -1}
			for j := range statuses {
				if statuses[j].Name == c.Name {
					c.Status, c.status = &statuses[j], int32(j)
				}
			}
			out = append(out, c)
		}
	}
	add(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, true)
	add(pod.Spec.Containers, pod.Status.ContainerStatuses, false)
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

// CommandLine is a container's command and args as one line, as the runtime runs them
// (the image's entrypoint's part left out when the spec does not set it); "" when it
// sets neither.
func CommandLine(c *corev1.Container) string {
	if c == nil {
		return ""
	}
	return strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
}
