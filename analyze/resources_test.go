package analyze_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"podflow.dev/podflow/analyze"
)

// TestPodRequestsIntoAReusedList checks that requests read into one list pod after pod
// are each pod's own, as PodRequests gives them: nothing of the pod before is left.
func TestPodRequestsIntoAReusedList(t *testing.T) {
	req := func(cpu, mem string) corev1.ResourceRequirements {
		r := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		if mem != "" {
			r[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return corev1.ResourceRequirements{Requests: r}
	}
	always := corev1.ContainerRestartPolicyAlways
	pods := []*corev1.Pod{
		{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Resources: req("2", "1Gi")}, {RestartPolicy: &always, Resources: req("100m", "")}},
			Containers:     []corev1.Container{{Resources: req("250m", "64Mi")}, {Resources: req("1.5", "")}},
			Overhead:       corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: req("5m", "")}}}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: req("1", "")}}}},
		{Spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{}}},
	}
	pods[2].Spec.Resources = &corev1.ResourceRequirements{Requests: req("3", "2Gi").Requests}
	reused := corev1.ResourceList{}
	for i, p := range pods {
		analyze.PodRequestsInto(reused, p)
		want := analyze.PodRequests(p)
		if len(reused) != len(want) {
			t.Errorf("pod %d: %d requests read into a reused list, want %d", i, len(reused), len(want))
		}
		for name, q := range want {
			if got := reused[name]; got.Cmp(q) != 0 || got.String() != q.String() {
				t.Errorf("pod %d: %s is %s read into a reused list, want %s", i, name, got.String(), q.String())
			}
		}
	}
}
