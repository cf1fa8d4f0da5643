package analyze

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A decode that outlives its load (the load was cancelled, and the loader let go of its
// tables while the decodes it had started were still running) decodes without sharing
// rather than crashing, and gives what a shared decode gives.
func TestADecodeWithoutTheLoadersTablesStillDecodes(t *testing.T) {
	const list = `{"kind":"PodList","items":[
{"metadata":{"name":"a","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","ports":[{"containerPort":8080}]}],"tolerations":[{"key":"k","operator":"Exists"}]}},
{"metadata":{"name":"b","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","ports":[{"containerPort":8080}]}],"tolerations":[{"key":"k","operator":"Exists"}]}}]}`
	dec := kindDecoders[Pods].decode
	shared := dec(newSharedDecode(), []byte(list))
	alone := dec(nil, []byte(list))
	if shared.err != nil || alone.err != nil {
		t.Fatalf("errors: shared %v, alone %v", shared.err, alone.err)
	}
	if !reflect.DeepEqual(shared, alone) {
		t.Errorf("a decode without sharing differs:\n%+v\n%+v", alone, shared)
	}
}

// The pods of one workload repeat their containers, volumes and conditions: the
// decode gives them one list each, and a pod whose containers differ (a token volume's
// mount of its own) keeps its own list, whose parts are still shared.
func TestPodsShareTheirRepeatedLists(t *testing.T) {
	const list = `{"kind":"PodList","items":[
{"metadata":{"name":"a","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","livenessProbe":{"httpGet":{"path":"/healthz","port":8080}},"volumeMounts":[{"name":"tok-a","mountPath":"/t"}]}],"volumes":[{"name":"data","emptyDir":{}}]},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}},
{"metadata":{"name":"b","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","livenessProbe":{"httpGet":{"path":"/healthz","port":8080}},"volumeMounts":[{"name":"tok-a","mountPath":"/t"}]}],"volumes":[{"name":"data","emptyDir":{}}]},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}},
{"metadata":{"name":"c","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","livenessProbe":{"httpGet":{"path":"/healthz","port":8080}},"volumeMounts":[{"name":"tok-c","mountPath":"/t"}]}],"volumes":[{"name":"data","emptyDir":{}}]},"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}]}`
	d := kindDecoders[Pods].decode(newSharedDecode(), []byte(list))
	pods, _ := d.items.([]corev1.Pod)
	if d.err != nil || len(pods) != 3 {
		t.Fatalf("decode: %v, %d pods", d.err, len(pods))
	}
	a, b, c := &pods[0], &pods[1], &pods[2]
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] || &a.Spec.Volumes[0] != &b.Spec.Volumes[0] ||
		&a.Status.Conditions[0] != &b.Status.Conditions[0] {
		t.Error("equal lists of two pods are decoded apart")
	}
	if &a.Spec.Containers[0] == &c.Spec.Containers[0] || c.Spec.Containers[0].VolumeMounts[0].Name != "tok-c" {
		t.Errorf("a pod's own containers are %+v", c.Spec.Containers)
	}
	if a.Spec.Containers[0].LivenessProbe != c.Spec.Containers[0].LivenessProbe {
		t.Error("a list decoded on its own does not share its probe")
	}
	if c.Status.Conditions[0].Status != corev1.ConditionFalse || &a.Spec.Volumes[0] != &c.Spec.Volumes[0] {
		t.Errorf("pod c: conditions %+v", c.Status.Conditions)
	}
	for _, p := range pods {
		if cap(p.Spec.Containers) != len(p.Spec.Containers) || cap(p.Status.Conditions) != len(p.Status.Conditions) {
			t.Errorf("pod %s: a shared list has spare room", p.Name)
		}
	}
	alone := kindDecoders[Pods].decode(nil, []byte(list))
	if !reflect.DeepEqual(d.items, alone.items) {
		t.Error("sharing changed what was decoded")
	}
}
