package analyze_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// A pod whose containers wait to be created is held by its volumes; one running, or one
// whose only waiting container is an init container, is not.
func TestPodsWaitingToCreate(t *testing.T) {
	creating := podObj("shop", "web", "n1", obj{"status": obj{"phase": "Pending", "containerStatuses": []any{
		obj{"name": "app", "image": "registry.example/app:1", "state": obj{"waiting": obj{"reason": "ContainerCreating"}}}}}})
	running := podObj("shop", "db", "n1", obj{"status": obj{"phase": "Running", "containerStatuses": []any{
		obj{"name": "app", "image": "registry.example/app:1", "state": obj{"running": obj{}}}}}})
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(creating, running),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "web-config" not found`, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "db", "", "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "db-config" not found`, "2026-11-29T10:00:05Z"),
		),
	})
	type row struct {
		Pod     string
		Waiting []string
		Events  int
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row {
		var out []row
		for _, cp := range v.PodsWaitingToCreate() {
			out = append(out, row{cp.Pod.Obj.Name, cp.Waiting, len(cp.Mount.Events)})
		}
		return out
	})
	if want := []row{{"web", []string{"app"}, 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("waiting to create:\n got %+v\nwant %+v", got, want)
	}
}

func TestPodClaimsAndVolumeObjectKind(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Name = "db-0"
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
	}
	if got, want := analyze.PodClaims(pod), []string{"data-db-0", "db-0-scratch"}; !slices.Equal(got, want) {
		t.Errorf("PodClaims = %v, want %v", got, want)
	}
	if analyze.VolumeObjectKind("configmap") != "ConfigMap" || analyze.VolumeObjectKind("secret") != "Secret" {
		t.Error("VolumeObjectKind")
	}
}
