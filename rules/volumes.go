package rules

import (
	corev1 "k8s.io/api/core/v1"
	"podflow.dev/podflow/analyze"
)

// What the volume rules share: pods waiting for their containers to be created while a
// volume cannot be set up, and the claims a pod mounts.

func isTrue(b *bool) bool { return b != nil && *b }

// kindTitle is the API kind for people: ConfigMap, Secret.
func kindTitle(kind string) string {
	if kind == "configmap" {
		return "ConfigMap"
	}
	return "Secret"
}

// waitingToCreate reports whether the pod's containers have not been created yet: the
// state a pod stays in while a volume cannot be set up.
func waitingToCreate(p *analyze.Pod) (bool, []string) {
	if p.Obj.Status.Phase != corev1.PodPending && p.Obj.Status.Phase != "" {
		return false, nil
	}
	var names []string
	for _, c := range analyze.Containers(p) {
		if c.Init {
			continue
		}
		if c.Status == nil || (c.Status.State.Waiting != nil && c.Status.State.Waiting.Reason == "ContainerCreating") {
			names = append(names, c.Name)
		}
	}
	return len(names) > 0, names
}

// creatingPod is a pod bound to a node, not being deleted, whose containers (waiting)
// have not been created yet.
type creatingPod struct {
	pod     *analyze.Pod
	waiting []string
	mount   analyze.MountFailure
}

// podsWaitingToCreate lists the bound pods stuck before their containers exist, the
// pods a volume that cannot be attached or mounted holds up, from the view's mount facts.
func podsWaitingToCreate(v *analyze.View) []creatingPod {
	var out []creatingPod
	for _, f := range v.MountFailures() {
		if stuck, waiting := waitingToCreate(f.Subject.Pod); stuck {
			out = append(out, creatingPod{pod: f.Subject.Pod, waiting: waiting, mount: f})
		}
	}
	return out
}

// podClaims lists the claims a pod mounts: its persistentVolumeClaim volumes and the
// claims of its generic ephemeral volumes, named <pod>-<volume>.
func podClaims(pod *corev1.Pod) []string {
	var out []string
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			out = append(out, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			out = append(out, pod.Name+"-"+vol.Name)
		}
	}
	return out
}
