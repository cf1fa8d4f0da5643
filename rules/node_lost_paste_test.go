package rules

import (
	"strings"
	"testing"
)

// A pasted session of `kubectl get nodes` and a `kubectl get pods` row cut after its
// RESTARTS cell, between bare shell prompts (the printers' columns: k8s.io/kubernetes
// pkg/printers/internalversion printNode and printPod): the pod that stays Terminating on
// the node kubectl shows NotReady is termination-node-lost's, and names the node. With
// the node Ready, nothing says the node is why; with a pod of the node still running, the
// node's own finding stays.
func TestAPodTerminatingOnANotReadyNodeIsNodeLost(t *testing.T) {
	session := func(status, podStatus string) string {
		return strings.Join([]string{
			"[admin@cp-1 ~]# ",
			"[admin@cp-1 ~]# kubectl get nodes",
			"NAME        STATUS     ROLES           AGE   VERSION",
			"cp-1        Ready      control-plane   12d   v1.30.4",
			"worker-7    " + status + "   <none>          12d   v1.30.4",
			"[admin@cp-1 ~]# ",
			"[admin@cp-1 ~]# kubectl get pods -o wide",
			"NAME                      READY   STATUS        RESTARTS   AGE   IP            NODE       NOMINATED NODE   READINESS GATES",
			"shop-api-5d8f9c7b6-x2x9k  1/1     " + podStatus + "   0",
			"",
		}, "\n")
	}
	events := "Events:\n  Type     Reason        Age   From               Message\n  ----     ------        ----  ----               -------\n" +
		"  Normal   Scheduled     40m   default-scheduler  Successfully assigned default/shop-api-5d8f9c7b6-x2x9k to worker-7\n" +
		"  Warning  NodeNotReady  31m   node-controller    Node is not ready\n"

	rep := analyzePaste(t, map[string]string{"ticket.txt": events + session("NotReady", "Terminating")})
	wantOneRoot(t, roots(rep), "termination-node-lost", "worker-7", "NotReady")

	// Ready again: the node is not what holds the pod.
	rep = analyzePaste(t, map[string]string{"ticket.txt": strings.Replace(events, "  Warning  NodeNotReady  31m   node-controller    Node is not ready\n", "", 1) +
		session("Ready   ", "Terminating")})
	for _, f := range roots(rep) {
		if f.Rule == "termination-node-lost" || f.Rule == "node-not-ready" {
			t.Errorf("node Ready: %s: %s", f.Rule, f.Cause)
		}
	}

	// A pod still running there: the node is reported at its own stage.
	rep = analyzePaste(t, map[string]string{"ticket.txt": events + session("NotReady", "Running    ")})
	found := false
	for _, f := range roots(rep) {
		found = found || f.Rule == "node-not-ready" && strings.Contains(f.Cause, "kubectl get nodes shows it NotReady")
	}
	if !found {
		for _, f := range roots(rep) {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Error("a running pod on a NotReady node: no node-not-ready finding from the get nodes row")
	}
}

// kubectl prints Unknown for a deleted pod the node lifecycle controller marked NodeLost
// (printers.go printPod): that status says the node stopped reporting, with or without
// the node in the evidence. A pod Running is not one.
func TestAPodShownUnknownIsNodeLost(t *testing.T) {
	paste := func(status string) string {
		return "# kubectl get pod kubernetes-dashboard-db4db8c77-4qqvm -n kube-system\n" +
			"NAME                                   READY     STATUS    RESTARTS   AGE\n" +
			"kubernetes-dashboard-db4db8c77-4qqvm   1/1       " + status + "   0          3h\n"
	}
	rep := analyzePaste(t, map[string]string{"kubectl.txt": paste("Unknown")})
	wantOneRoot(t, roots(rep), "termination-node-lost", "kube-system/kubernetes-dashboard-db4db8c77-4qqvm", "stopped reporting")
	for _, f := range roots(analyzePaste(t, map[string]string{"kubectl.txt": paste("Running")})) {
		if f.Rule == "termination-node-lost" {
			t.Errorf("a Running pod is not lost: %s", f.Cause)
		}
	}
}

// A describe of an object other than a pod is read by its condition's Message: the
// aggregator's "no response from …" on an APIService is the termination stage's (what
// an unavailable APIService holds up is a namespace's deletion), not a guess from words.
func TestAnObjectsConditionMessageIsReadByTheCatalog(t *testing.T) {
	paste := "[root@bootstrap ~]# kubectl describe apiservice v1beta1.metrics.k8s.io\n" +
		"Name:         v1beta1.metrics.k8s.io\nNamespace:\nLabels:       <none>\nAnnotations:  <none>\n" +
		"API Version:  apiregistration.k8s.io/v1\nKind:         APIService\nSpec:\n  Group:                   metrics.k8s.io\n" +
		"  Service:\n    Name:            prometheus-adapter\n    Namespace:       metalk8s-monitoring\n  Version:           v1beta1\n" +
		"Status:\n  Conditions:\n    Last Transition Time:  2019-09-05T09:32:38Z\n" +
		"    Message:               no response from https://10.96.10.86:443: Get https://10.96.10.86:443: dial tcp 10.96.10.86:443: connect: connection refused\n" +
		"    Reason:                FailedDiscoveryCheck\n    Status:                False\n    Type:                  Available\nEvents:                    <none>\n"
	rs := roots(analyzePaste(t, map[string]string{"kubectl.txt": paste}))
	wantFirstRoot(t, rs, "termination", "", "no response from https://10.96.10.86:443")
}

// A reporter who says the pod stays Terminating after the node was shut down describes
// the node-lost failure, not the node's own NotReady.
func TestProseOfAPodTerminatingOnANodeShutDown(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "With taint based eviction enabled, if I shutdown a worker node or stop the kubelet service on the node, the pod running on that node will be evicted and re-scheduled to other available nodes.\n" +
			"The problem is that the original pod running on the off node will keeps in `Terminating` state and never disappear.\n",
	})
	wantFirstRoot(t, rs, "termination", "termination-node-lost")
}

// A pod's status pasted from a container's state down to its own keys, without the
// spec, is read at both levels: NodeLost and the node its message names make the
// finding, which names that node.
func TestANodeLostStatusPastedFromItsContainerState(t *testing.T) {
	status := "```\n    name: db\n    ready: true\n    restartCount: 0\n    state:\n      running:\n        startedAt: 2021-05-02T08:00:00Z\n" +
		"  message: Node worker-7 which was running pod db-0 is unresponsive\n  phase: Running\n  podIP: 10.244.1.15\n  reason: NodeLost\n```\n"
	rs := catalogRoots(t, map[string]string{"pod-status.txt": status})
	wantOneRoot(t, rs, "termination-node-lost", "NodeLost", "node worker-7")
}
