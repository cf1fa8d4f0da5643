package analyze

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
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

// The small parts every pod or Deployment of a kind carries alike (a preemption
// policy and DNS policy, a start time, the resources the kubelet reports, a
// rollout strategy and a selector) are decoded once and shared.
func TestObjectsShareTheirSmallRepeatedParts(t *testing.T) {
	const pod = `{"metadata":{"name":%q,"namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1"}],"preemptionPolicy":"PreemptLowerPriority","dnsPolicy":"ClusterFirst"},` +
		`"status":{"qosClass":"Burstable","startTime":"2026-01-01T00:00:00Z","resources":{"requests":{"cpu":"100m"}}}}`
	pods := fmt.Sprintf(`{"kind":"PodList","items":[`+pod+`,`+pod+`]}`, "a", "b")
	d := kindDecoders[Pods].decode(newSharedDecode(), []byte(pods))
	ps, _ := d.items.([]corev1.Pod)
	if d.err != nil || len(ps) != 2 {
		t.Fatalf("decode: %v, %d pods", d.err, len(ps))
	}
	a, b := &ps[0], &ps[1]
	if a.Spec.PreemptionPolicy != b.Spec.PreemptionPolicy || a.Status.StartTime != b.Status.StartTime || a.Status.Resources != b.Status.Resources ||
		unsafe.StringData(string(a.Spec.DNSPolicy)) != unsafe.StringData(string(b.Spec.DNSPolicy)) {
		t.Error("two pods' equal preemption policy, DNS policy, start time or resources are decoded apart")
	}
	if alone := kindDecoders[Pods].decode(nil, []byte(pods)); !reflect.DeepEqual(d.items, alone.items) {
		t.Error("sharing changed the pods decoded")
	}
	const deploy = `{"metadata":{"name":%q,"namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}},` +
		`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%%","maxSurge":"25%%"}},"template":{"spec":{"containers":[{"name":"app","image":"web:1"}]}}}}`
	deploys := fmt.Sprintf(`{"kind":"DeploymentList","items":[`+deploy+`,`+deploy+`]}`, "a", "b")
	d = kindDecoders[Deployments].decode(newSharedDecode(), []byte(deploys))
	ds, _ := d.items.([]appsv1.Deployment)
	if d.err != nil || len(ds) != 2 {
		t.Fatalf("decode: %v, %d deployments", d.err, len(ds))
	}
	if ds[0].Spec.Strategy.RollingUpdate != ds[1].Spec.Strategy.RollingUpdate || ds[0].Spec.Selector != ds[1].Spec.Selector {
		t.Error("two Deployments' equal rolling update or selector are decoded apart")
	}
	if alone := kindDecoders[Deployments].decode(nil, []byte(deploys)); !reflect.DeepEqual(d.items, alone.items) {
		t.Error("sharing changed the Deployments decoded")
	}
}

// A big cluster's pods name more owners than a few thousand, each a ReplicaSet whose
// pods carry the same owner references: the pods of the last ReplicaSet read still
// share theirs. With room for 4096 texts, the table was full a fifth of the way into
// 20k pods.
func TestPodsOfManyOwnersShareTheirOwnerReferences(t *testing.T) {
	const owners = 5000
	var b []byte
	b = append(b, `{"kind":"PodList","items":[`...)
	for i := range 2 * owners {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"metadata":{"name":"p-%d","namespace":"shop","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs-%d","uid":"uid-rs-%d","controller":true}]}}`,
			i, i/2, i/2)
	}
	b = append(b, "]}"...)
	d := kindDecoders[Pods].decode(newSharedDecode(), b)
	pods, _ := d.items.([]corev1.Pod)
	if d.err != nil || len(pods) != 2*owners {
		t.Fatalf("decode: %v, %d pods", d.err, len(pods))
	}
	last, before := &pods[len(pods)-1], &pods[len(pods)-2]
	if last.OwnerReferences[0].Name != fmt.Sprintf("rs-%d", owners-1) || &last.OwnerReferences[0] != &before.OwnerReferences[0] {
		t.Error("the pods of the last ReplicaSet decode their owner references apart")
	}
}
