package analyze

import (
	"iter"

	corev1 "k8s.io/api/core/v1"
)

// Containers that report a status, in pods not being deleted: the start, config, probe
// and crash rules all read their runs, and a pod on its way out explains nothing.

// PodContainer is one container of a pod.
type PodContainer struct {
	Pod       *Pod
	Container ContainerInfo
}

// LiveContainers yields, pod by pod in the view's order and each pod's containers in
// Containers order, the containers with a status in pods not being deleted,
// from the view's container runs.
func (v *View) LiveContainers() iter.Seq[PodContainer] {
	return func(yield func(PodContainer) bool) {
		for r := range v.ContainerRuns() {
			if p := r.Subject.Pod; p.Obj.DeletionTimestamp == nil && r.Container.Status != nil {
				if !yield(PodContainer{Pod: p, Container: r.Container}) {
					return
				}
			}
		}
	}
}

// runOf is the container's run: its events, journal lines, runtime attempts and logs.
func runOf(v *View, p *Pod, container string) ContainerRun {
	r, _ := v.ContainerRun(p, container)
	return r
}

// RestartsOnItsOwn says what happens to a container that exited with an error, for the
// pod's restartPolicy: the kubelet restarts it only under Always and OnFailure; under
// Never the pod fails, and only its owner (a Job within its backoffLimit) makes another.
func RestartsOnItsOwn(policy corev1.RestartPolicy) string {
	if policy == corev1.RestartPolicyNever {
		return "With restartPolicy Never the kubelet does not restart it: the pod has failed, and a Job makes a new pod only " +
			"while within its backoffLimit (a pod nothing owns must be recreated)."
	}
	return "The kubelet restarts it on its own."
}

// KilledVerb is how a probe kill ends for the pod's restartPolicy: under Never the
// container is killed and not restarted, and the pod fails.
func KilledVerb(policy corev1.RestartPolicy) string {
	if policy == corev1.RestartPolicyNever {
		return "killed for good (restartPolicy Never: not restarted, the pod fails)"
	}
	return "killed and restarted"
}
