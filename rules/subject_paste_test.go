package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// The subject of a finding read from a pasted line that names no object: the pod the
// message names when it names one, the node for a node agent's failure, and the pod
// unnamed in its file for a failure past the pod's placement, never an unknown node.
func TestAPastedLinesSubject(t *testing.T) {
	cases := []struct {
		name, file, line string
		want             analyze.ObjectRef
	}{
		{"drain names its pod", "drain.txt",
			`error when evicting pods/"web-7c9d8f6b5-2xk4p" -n "shop" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
			analyze.ObjectRef{Kind: "Pod", Namespace: "shop", Name: "web-7c9d8f6b5-2xk4p"}},
		{"a node agent's failure", "kubelet.log",
			`Failed to start ContainerManager failed to initialize top level QOS containers: root container [kubepods] doesn't exist`,
			analyze.ObjectRef{Kind: "Node", Name: analyze.UnknownSubject}},
		{"a container's create", "containerd.log",
			`Error: failed to create containerd container: cannot load seccomp profile "/var/lib/kubelet/seccomp/app.json": open /var/lib/kubelet/seccomp/app.json: no such file or directory`,
			analyze.ObjectRef{Kind: "Container", Name: analyze.UnknownSubject}},
		{"a ticket's sentence past placement", "ticket.txt",
			`The cluster does not form, nacos-0 logs lookup nacos-hs on 10.43.0.10:53: no such host`,
			analyze.ObjectRef{Kind: "Pod", Name: analyze.UnknownSubject, UnnamedIn: "ticket.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := catalogRoots(t, map[string]string{c.file: c.line + "\n"})
			if len(rs) != 1 {
				t.Fatalf("want one root, got %d", len(rs))
			}
			if s := rs[0].Subjects; len(s) != 1 || s[0] != c.want {
				t.Errorf("%s: subjects %+v, want %+v", rs[0].Rule, s, c.want)
			}
		})
	}
}

// The scheduler's refusal for a node selector names no label; the pod's selector that
// a pasted describe shows is said with it, and none is made up without one.
func TestASelectorRefusalNamesThePodsSelector(t *testing.T) {
	refusal := "Warning  FailedScheduling  12s  default-scheduler  0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.\n"
	describe := "Node-Selectors:              node.kubernetes.io/instance-type=m5.large\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": refusal, "describe.txt": describe}),
		"scheduling-node-selector-mismatch", "the pod's nodeSelector is node.kubernetes.io/instance-type=m5.large")
	for _, f := range catalogRoots(t, map[string]string{"events.txt": refusal}) {
		if strings.Contains(f.Cause, "nodeSelector is") {
			t.Errorf("a selector named without evidence of it: %s", f.Cause)
		}
	}
}
