package analyze

import corev1 "k8s.io/api/core/v1"

// What the volume rules compare: pods bound to a node whose containers wait for a
// volume, with the pod's mount facts, and the claims a pod mounts.

// VolumeObjectKind is the API kind of an object the kubelet's configmap and secret
// managers name by resource ("configmap", "secret"): ConfigMap or Secret.
func VolumeObjectKind(resource string) string {
	if resource == "configmap" {
		return "ConfigMap"
	}
	return "Secret"
}

// WaitingToCreate reports whether the pod's containers have not been created yet, and
// which: the state a pod stays in while a volume cannot be set up.
func WaitingToCreate(p *Pod) (bool, []string) {
	if p.Obj.Status.Phase != corev1.PodPending && p.Obj.Status.Phase != "" {
		return false, nil
	}
	var names []string
	for _, c := range Containers(p) {
		if c.Init {
			continue
		}
		if c.Status == nil || (c.Status.State.Waiting != nil && c.Status.State.Waiting.Reason == "ContainerCreating") {
			names = append(names, c.Name)
		}
	}
	return len(names) > 0, names
}

// CreatingPod is a pod bound to a node, not being deleted, whose containers (Waiting)
// have not been created yet, with its volume setup's facts.
type CreatingPod struct {
	Pod     *Pod
	Waiting []string
	Mount   MountFailure
}

// PodsWaitingToCreate lists the bound pods stuck before their containers exist, the pods
// a volume that cannot be attached or mounted holds up, from the view's mount facts.
func (v *View) PodsWaitingToCreate() []CreatingPod {
	var out []CreatingPod
	for _, f := range v.MountFailures() {
		if stuck, waiting := WaitingToCreate(f.Subject.Pod); stuck {
			out = append(out, CreatingPod{Pod: f.Subject.Pod, Waiting: waiting, Mount: f})
		}
	}
	return out
}

// PodClaims lists the claims a pod mounts: its persistentVolumeClaim volumes and the
// claims of its generic ephemeral volumes, named <pod>-<volume>.
func PodClaims(pod *corev1.Pod) []string {
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
