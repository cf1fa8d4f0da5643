package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// Evicted pods shown only by get pods rows, and a ticket line that quotes what their
// status said (the eviction manager's "The node was low on resource: %v. ", k8s.io/
// kubernetes pkg/kubelet/eviction/helpers.go): the finding reads the quoted message
// instead of saying the evidence lacks it. Lines quoting more distinct messages than a
// ticket's few are no pod's.
func TestEvictedPodsReadTheMessageTheTicketQuotes(t *testing.T) {
	rows := "NAME                       READY   STATUS    RESTARTS   AGE\n" +
		"api-7c9d8f6b5-2xk4p        0/1     Evicted   0          7m\n" +
		"api-7c9d8f6b5-9qw8r        0/1     Evicted   0          7m\n"
	ticket := "The pods keep getting evicted, their status says `The node was low on resource: ephemeral-storage. `\n"
	rs := catalogRoots(t, map[string]string{"pods.txt": rows, "ticket.txt": ticket})
	found := false
	for _, f := range rs {
		found = found || f.Rule == "node-pod-evicted" && strings.Contains(f.Cause, "ephemeral-storage")
	}
	if !found {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("no node-pod-evicted root naming the quoted resource")
	}
	many := ticket + "Before that: The node was low on resource: memory. Then The node was low on resource: pids. " +
		"And The node had condition: [DiskPressure].\n"
	for _, f := range catalogRoots(t, map[string]string{"pods.txt": rows, "ticket.txt": many}) {
		if f.Rule == "node-pod-evicted" && strings.Contains(f.Cause, "the evidence quotes") {
			t.Errorf("four quoted messages given to the pods: %s", f.Cause)
		}
	}
}

// Evicted pods whose message the paste lacks, beside a node describe that shows only the
// pressure taint the node lifecycle controller sets: the finding names that pressure as
// what the kubelet evicts for. Without it the finding says the message is missing.
func TestEvictedPodsNameTheNodesPressureTaint(t *testing.T) {
	rows := "NAMESPACE   NAME                      READY   STATUS    RESTARTS   AGE\n" +
		"web         front-7c9d8f6b5-2xk4p     0/1     Evicted   0          7m\n" +
		"web         front-7c9d8f6b5-9qw8r     1/1     Running   0          7m\n"
	node := "$ kubectl describe node worker-3\n\nTaints: node.kubernetes.io/disk-pressure:NoSchedule\n"
	evicted := func(rs []*analyze.Finding) *analyze.Finding {
		for _, f := range rs {
			if f.Rule == "node-pod-evicted" {
				return f
			}
		}
		t.Fatal("no node-pod-evicted root")
		return nil
	}
	if f := evicted(catalogRoots(t, map[string]string{"pods.txt": rows, "node.txt": node})); !strings.Contains(f.Cause, "DiskPressure (taint node.kubernetes.io/disk-pressure)") {
		t.Errorf("the cause does not name the node's pressure: %s", f.Cause)
	}
	if f := evicted(catalogRoots(t, map[string]string{"pods.txt": rows})); strings.Contains(f.Cause, "Pressure") {
		t.Errorf("a pressure named without evidence of it: %s", f.Cause)
	}
}
