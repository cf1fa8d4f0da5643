package rules

import "podflow.dev/podflow/analyze"

// Containers that report a status, in pods not being deleted: the start, config, probe
// and crash rules all read their runs, and a pod on its way out explains nothing.

// podContainer is one container of a pod.
type podContainer struct {
	pod *analyze.Pod
	c   analyze.ContainerInfo
}

// liveContainers lists, pod by pod in the view's order and each pod's containers in
// analyze.Containers order, the containers with a status in pods not being deleted,
// from the view's container runs.
func liveContainers(v *analyze.View) []podContainer {
	var out []podContainer
	for _, r := range v.ContainerRuns() {
		if p := r.Subject.Pod; p.Obj.DeletionTimestamp == nil && r.Container.Status != nil {
			out = append(out, podContainer{pod: p, c: r.Container})
		}
	}
	return out
}

// runOf is the container's run: its events, journal lines, runtime attempts and logs.
func runOf(v *analyze.View, p *analyze.Pod, container string) analyze.ContainerRun {
	r, _ := v.ContainerRun(p, container)
	return r
}
