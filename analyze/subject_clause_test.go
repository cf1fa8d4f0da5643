package analyze

import "testing"

// TestSubjectClause: a cause that names none of its pods nor their workload is closed
// with them; one that names one, a pod the evidence does not name, or a node-stage cause
// naming its node, is left as it is.
func TestSubjectClause(t *testing.T) {
	pod := func(ns, name string) ObjectRef { return ObjectRef{Kind: "Pod", Namespace: ns, Name: name} }
	for _, c := range []struct {
		name     string
		stage    Stage
		cause    string
		subjects []ObjectRef
		want     string
	}{
		{"one pod", StageProbe, "the liveness probe fails", []ObjectRef{pod("shop", "web-1")}, "pod shop/web-1"},
		{"namespace not shown", StageProbe, "the liveness probe fails",
			[]ObjectRef{{Kind: "Pod", Namespace: "default", Name: "web-1", NamespaceUnknown: true}}, "pod web-1"},
		{"pods of a workload, top owner", StageImage, "the registry refuses the pull",
			[]ObjectRef{pod("shop", "web-a"), pod("shop", "web-b"), {Kind: "ReplicaSet", Namespace: "shop", Name: "web-7d"}, {Kind: "Deployment", Namespace: "shop", Name: "web"}},
			"2 pods of Deployment shop/web"},
		{"pods without a workload", StageImage, "the registry refuses the pull", []ObjectRef{pod("a", "x"), pod("b", "y"), pod("b", "z")}, "pod a/x and 2 more"},
		{"cause names the pod", StageProbe, "the liveness probe of pod web-1 fails", []ObjectRef{pod("shop", "web-1")}, ""},
		{"cause names the workload", StageAdmission, "the quota refuses every pod of StatefulSet db",
			[]ObjectRef{pod("shop", "db-0"), {Kind: "StatefulSet", Namespace: "shop", Name: "db"}}, ""},
		{"pod not named by the evidence", StageProbe, "the liveness probe fails",
			[]ObjectRef{{Kind: "Pod", Namespace: "default", Name: "unnamed-describe-txt", UnnamedIn: "describe.txt"}}, ""},
		{"node trouble names its node", StageNode, "node n1 is NotReady", []ObjectRef{pod("shop", "web-1"), {Kind: "Node", Name: "n1"}}, ""},
		{"no pod", StageService, "service shop/web has no endpoint", []ObjectRef{{Kind: "Service", Namespace: "shop", Name: "web"}}, ""},
	} {
		f := &Finding{Stage: c.stage, Cause: c.cause, Subjects: c.subjects}
		if got := subjectClause(f); got != c.want {
			t.Errorf("%s: subjectClause = %q, want %q", c.name, got, c.want)
		}
	}
}
