package analyze_test

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// A ReplicaSet's not-ready pods, and what keeps each from being ready: a container's
// waiting reason before its warning events, an unscheduled pod's condition first.
func TestNotReadyPodsAndTheirState(t *testing.T) {
	owned := func(name string, extra obj) obj {
		p := podObj("shop", name, "n1", extra)
		p["metadata"] = obj{"name": name, "namespace": "shop", "uid": "uid-" + name, "creationTimestamp": "2026-11-29T10:00:00Z",
			"ownerReferences": []any{obj{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid", "controller": true}}}
		return p
	}
	g := load(t, map[string]any{
		"cluster-resources/replicasets/shop.json": list(obj{"metadata": obj{"name": "web-1", "namespace": "shop", "uid": "rs-uid"}, "spec": obj{"replicas": 3}}),
		"cluster-resources/pods/shop.json": list(
			owned("web-1-a", obj{"status": obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}}}}),
			owned("web-1-b", obj{"status": obj{"phase": "Running", "containerStatuses": []any{
				obj{"name": "app", "state": obj{"waiting": obj{"reason": "CrashLoopBackOff", "message": "back-off 5m0s\nrestarting"}}}}}}),
			owned("web-1-c", obj{"status": obj{"phase": "Pending", "conditions": []any{
				obj{"type": "PodScheduled", "status": "False", "message": "0/3 nodes are available: 3 Insufficient cpu."}}}}),
			podObj("shop", "other", "n1", nil),
		),
	})
	got := viewOf(t, g, []analyze.Kind{analyze.Pods, analyze.ReplicaSets, analyze.Events}, func(v *analyze.View) []string {
		var out []string
		for _, rs := range v.ReplicaSets() {
			pods := v.NotReadyPods(rs)
			for _, p := range pods {
				state, ev := v.PodStateText(p)
				out = append(out, p.Obj.Name+" "+state)
				if len(ev) != 1 {
					t.Errorf("%s: %d evidence items, want 1", p.Obj.Name, len(ev))
				}
			}
			if len(pods) > 0 {
				text, _, _ := v.FirstPodState(pods, "pods")
				out = append(out, text)
			}
		}
		return out
	})
	want := []string{
		"web-1-b has container app waiting in CrashLoopBackOff: back-off 5m0s",
		"web-1-c is not scheduled: 0/3 nodes are available: 3 Insufficient cpu.",
		"web-1-b (and 1 more pods) has container app waiting in CrashLoopBackOff: back-off 5m0s",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("not-ready pods:\n got %q\nwant %q", got, want)
	}
	three := int32(3)
	if analyze.Replicas(nil) != 1 || analyze.Replicas(&three) != 3 {
		t.Error("Replicas")
	}
}

func TestNodeReadyAndRuntimeNetworkMessage(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Message: "container runtime network not ready"},
	}}}
	if i, c := analyze.NodeReady(node); i != 1 || c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("NodeReady = %d, %v", i, c)
	}
	if i, c := analyze.NodeReady(&corev1.Node{}); i != -1 || c != nil {
		t.Errorf("NodeReady of a node without conditions = %d, %v", i, c)
	}
	msg := "NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	if got := analyze.RuntimeNetworkMessage(msg); got != "cni plugin not initialized" {
		t.Errorf("RuntimeNetworkMessage = %q", got)
	}
	if got := analyze.RuntimeNetworkMessage("other"); got != "other" {
		t.Errorf("RuntimeNetworkMessage without message = %q", got)
	}
}

// Finding a ReplicaSet's or a Job's pods reads every pod's controller: at 20k pods and a
// few dozen failed Jobs or stuck ReplicaSets that was a million references made and
// dropped, most of what the rules allocated. A reference that is only read must not be
// allocated, so the scan allocates for what it returns and nothing per pod.
func TestScansForAnOwnersPodsAllocateNothingPerPod(t *testing.T) {
	var pods []any
	for i := range 200 {
		p := podObj("shop", fmt.Sprintf("web-1-%03d", i), "n1", obj{"status": obj{"phase": "Running",
			"conditions": []any{obj{"type": "Ready", "status": "True"}}}})
		p["metadata"].(obj)["ownerReferences"] = []any{obj{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid", "controller": true}}
		pods = append(pods, p)
	}
	g := load(t, map[string]any{
		"cluster-resources/replicasets/shop.json": list(obj{"metadata": obj{"name": "web-1", "namespace": "shop", "uid": "rs-uid"}, "spec": obj{"replicas": 200}}),
		"cluster-resources/pods/shop.json":        list(pods...),
	})
	viewOf(t, g, []analyze.Kind{analyze.Pods, analyze.ReplicaSets}, func(v *analyze.View) bool {
		rs := v.ReplicaSets()[0]
		if n := testing.AllocsPerRun(20, func() {
			if len(v.NotReadyPods(rs)) != 0 {
				t.Fatal("a ready pod listed as not ready")
			}
		}); n != 0 {
			t.Errorf("NotReadyPods over %d ready pods allocates %v times, want 0", len(pods), n)
		}
		if n := testing.AllocsPerRun(20, func() {
			if len(v.PodsControlledBy(rs.Ref())) != len(pods) {
				t.Fatal("PodsControlledBy missed pods")
			}
		}); n > 20 {
			t.Errorf("PodsControlledBy over %d pods allocates %v times, want only its result (its list grown by doubling)", len(pods), n)
		}
		p := v.Pods()[0]
		if n := testing.AllocsPerRun(20, func() {
			if c := v.Controller(p.Meta()); c == nil || c.Name != "web-1" {
				t.Fatal("the pod's controller is not web-1")
			}
		}); n != 0 {
			t.Errorf("Controller allocates %v times for a reference only read, want 0", n)
		}
		return true
	})
}
