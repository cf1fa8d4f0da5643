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
// analyze.Containers order, the containers with a status in pods not being deleted.
func liveContainers(v *analyze.View) []podContainer {
	var out []podContainer
	for _, p := range v.Pods() {
		if p.Obj.DeletionTimestamp != nil {
			continue
		}
		for _, c := range analyze.Containers(p) {
			if c.Status != nil {
				out = append(out, podContainer{pod: p, c: c})
			}
		}
	}
	return out
}
