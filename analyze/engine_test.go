package analyze_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// nodeNotReady stands for the node rules: a NotReady node, listing the pods on it.
var nodeNotReady = &analyze.Rule{
	ID: "node-not-ready-test", Stage: analyze.StageNode, Title: "node is NotReady", Severity: analyze.SeverityCritical,
	Needs: analyze.Needs{Required: []analyze.Kind{analyze.Nodes, analyze.Pods}},
	Run: func(v *analyze.View) []analyze.Finding {
		var out []analyze.Finding
		for _, n := range v.Nodes() {
			for i, c := range n.Obj.Status.Conditions {
				if c.Type != corev1.NodeReady || c.Status == corev1.ConditionTrue {
					continue
				}
				subjects := []analyze.ObjectRef{n.Ref()}
				for _, p := range v.PodsOnNode(n.Obj.Name) {
					subjects = append(subjects, p.Ref())
				}
				out = append(out, analyze.Finding{Subjects: subjects, Cause: "node " + n.Obj.Name + " is NotReady",
					Remediation: "Bring the kubelet on " + n.Obj.Name + " back.",
					Evidence:    []analyze.Evidence{n.Loc.At("status", "conditions", i).Evidence(c.Message, c.LastTransitionTime.Time)}})
			}
		}
		return out
	},
}

const dnsError = `rpc error: code = Unknown desc = failed to pull and unpack image "registry.example/app:1": failed to resolve reference "registry.example/app:1": failed to do request: Head "https://registry.example/v2/app/manifests/1": dial tcp: lookup registry.example on 10.0.2.3:53: no such host`

func TestEarliestStageWins(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/nodes.json":     list(nodeObj("n1", "Unknown")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError)),
	})
	// The image rule runs first: order of rules must not matter.
	rep := analyze.Run(g, []*analyze.Rule{rules.ImagePullDNS, nodeNotReady}, analyze.Options{})
	want := []string{
		"node-not-ready-test#1 root=true explains=[image-pull-dns#1] explainedBy=[]",
		"image-pull-dns#1 root=false explains=[] explainedBy=[node-not-ready-test#1]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
	if len(rep.Pods) != 1 || rep.Pods[0].RootCause != "node-not-ready-test#1" {
		t.Errorf("pod root cause = %+v", rep.Pods)
	}
	if rep.Summary.RootCauses != 1 || rep.Summary.Findings != 2 || rep.Summary.Highest != analyze.SeverityCritical {
		t.Errorf("summary = %+v", rep.Summary)
	}

	x, err := analyze.Explain(g, []*analyze.Rule{rules.ImagePullDNS, nodeNotReady}, "shop", "web-1", analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, v := range x.Stages {
		stages = append(stages, string(v.Stage)+"="+v.Status)
	}
	wantStages := "request=ok admission=ok controller=not-applicable scheduling=ok node=broken sandbox=not-reached image=broken " +
		"volume=not-applicable config=not-reached start=not-reached runtime=not-reached probe=not-reached service=not-applicable termination=not-applicable"
	if got := strings.Join(stages, " "); got != wantStages {
		t.Errorf("explain stages:\n got %s\nwant %s", got, wantStages)
	}
	if x.RootCause == nil || x.RootCause.ID != "node-not-ready-test#1" {
		t.Errorf("explain root cause = %+v", x.RootCause)
	}
}

func TestHealthyNodeLeavesImageAsRoot(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/nodes.json":     list(nodeObj("n1", "True")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError)),
	})
	rep := analyze.Run(g, []*analyze.Rule{nodeNotReady, rules.ImagePullDNS}, analyze.Options{})
	want := []string{"image-pull-dns#1 root=true explains=[] explainedBy=[]"}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %q, want %q", got, want)
	}
}

// quotaRule stands for admission rules: one cause blocking many replicas.
var quotaRule = &analyze.Rule{
	ID: "quota-test", Stage: analyze.StageAdmission, Title: "quota exhausted", Severity: analyze.SeverityError,
	Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
	Run: func(v *analyze.View) []analyze.Finding {
		var out []analyze.Finding
		for _, p := range v.Pods() {
			out = append(out, analyze.Finding{
				Subjects:    []analyze.ObjectRef{p.Ref(), *v.Controller(p.Meta())},
				Cause:       "quota compute in shop: requested cpu 2, used 9 of 10",
				Remediation: "Raise the quota or lower the requests.",
				Evidence:    []analyze.Evidence{p.Loc.Evidence("pod "+p.Obj.Name, v.CollectedAt())},
				GroupKey:    "shop/compute",
			})
		}
		return out
	},
}

func TestManyPodsOneCauseIsOneFinding(t *testing.T) {
	var pods []any
	for i := 0; i < 50; i++ {
		p := podObj("shop", fmt.Sprintf("web-5d8f9c-%05d", i), "", nil)
		p["metadata"].(obj)["ownerReferences"] = []any{obj{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f9c", "uid": "rs", "controller": true}}
		pods = append(pods, p)
	}
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(pods...)})
	rep := analyze.Run(g, []*analyze.Rule{quotaRule}, analyze.Options{})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings = %d, want 1", len(rep.Findings))
	}
	f := rep.Findings[0]
	if got := len(f.Pods()); got != 50 {
		t.Errorf("pods = %d, want 50", got)
	}
	if got := analyze.PodsLabel(f); got != "shop/web-5d8f9c-* (50 pods)" {
		t.Errorf("label = %q", got)
	}
	if len(f.Evidence) != 20 || f.EvidenceOmitted != 30 {
		t.Errorf("evidence kept %d, omitted %d; want 20 and 30", len(f.Evidence), f.EvidenceOmitted)
	}
	last := f.Subjects[len(f.Subjects)-1]
	if last.Kind != "ReplicaSet" || last.Name != "web-5d8f9c" || len(f.Subjects) != 51 {
		t.Errorf("subjects end with %+v (%d in all)", last, len(f.Subjects))
	}
}

func TestWorkloadFindingExplainedThroughSharedOwner(t *testing.T) {
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(podObj("shop", "a", "", nil))})
	rs := analyze.ObjectRef{Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d8f9c"}
	mk := func(id string, stage analyze.Stage) *analyze.Rule {
		return &analyze.Rule{ID: id, Stage: stage, Title: id, Severity: analyze.SeverityWarning,
			Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
			Run: func(v *analyze.View) []analyze.Finding {
				p := v.Pod("shop", "a")
				return []analyze.Finding{{Subjects: []analyze.ObjectRef{rs}, Cause: id, Remediation: "fix " + id,
					Evidence: []analyze.Evidence{p.Loc.Evidence("x", v.CollectedAt())}}}
			}}
	}
	rep := analyze.Run(g, []*analyze.Rule{mk("stalled-rollout", analyze.StageController), mk("quota", analyze.StageAdmission)}, analyze.Options{})
	want := []string{
		"quota#1 root=true explains=[stalled-rollout#1] explainedBy=[]",
		"stalled-rollout#1 root=false explains=[] explainedBy=[quota#1]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %q, want %q", got, want)
	}
}

func TestViewRefusesUndeclaredKinds(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json":   list(podObj("shop", "a", "", nil)),
		"cluster-resources/events/shop.json": list(obj{"metadata": obj{"name": "e", "namespace": "shop"}, "involvedObject": obj{"kind": "Pod", "name": "a", "namespace": "shop"}, "reason": "X"}),
	})
	var events, nodes int
	sneaky := &analyze.Rule{ID: "sneaky", Stage: analyze.StageImage, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
		Run: func(v *analyze.View) []analyze.Finding {
			events = len(v.Events())
			v.Events()
			nodes = len(v.Nodes())
			return []analyze.Finding{{Subjects: []analyze.ObjectRef{v.Pods()[0].Ref()}, Cause: "no evidence"}}
		}}
	broken := &analyze.Rule{ID: "broken", Stage: analyze.StageImage, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
		Run:   func(v *analyze.View) []analyze.Finding { var p *analyze.Pod; _ = p.Obj.Name; return nil }}
	rep := analyze.Run(g, []*analyze.Rule{sneaky, broken}, analyze.Options{})
	if events != 0 || nodes != 0 {
		t.Errorf("undeclared kinds leaked: %d events, %d nodes", events, nodes)
	}
	var got []string
	for _, v := range rep.Violations {
		got = append(got, v.Rule+": "+v.Message)
	}
	want := []string{
		"sneaky: read events without declaring it in Needs",
		"sneaky: read nodes without declaring it in Needs",
		"sneaky: finding without evidence: no evidence",
		`sneaky: finding without a cause or a remediation: "no evidence"`,
		"broken: panic: runtime error: invalid memory address or nil pointer dereference",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

func TestPodScopeKeepsTheLinkedRoot(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/nodes.json": list(nodeObj("n1", "False")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError),
			pullFailing("shop", "web-2", "n2", dnsError)),
	})
	rep := analyze.Run(g, []*analyze.Rule{nodeNotReady, rules.ImagePullDNS}, analyze.Options{Pod: "shop/web-1"})
	// web-2's image finding (node n2) is out of scope; web-1's is the node's consequence.
	want := []string{
		"node-not-ready-test#1 root=true explains=[image-pull-dns#1] explainedBy=[]",
		"image-pull-dns#1 root=false explains=[] explainedBy=[node-not-ready-test#1]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
	if rep.Summary.Pods != 1 || len(rep.Pods) != 1 || rep.Pods[0].Name != "web-1" {
		t.Errorf("pods in scope: %d, reported %+v", rep.Summary.Pods, rep.Pods)
	}
}

func TestServiceOutageIsExplainedByItsPods(t *testing.T) {
	oomPod := func(name string) obj {
		p := podObj("shop", name, "n1", obj{"status": obj{"phase": "Running",
			"conditions": []any{obj{"type": "PodScheduled", "status": "True"}, obj{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}},
			"containerStatuses": []any{obj{"name": "app", "image": "registry.example/app:1", "imageID": "sha256:1", "restartCount": 3,
				"state":     obj{"waiting": obj{"reason": "CrashLoopBackOff"}},
				"lastState": obj{"terminated": obj{"reason": "OOMKilled", "exitCode": 137, "finishedAt": "2026-11-29T10:05:00Z"}}}}}})
		p["metadata"].(obj)["labels"] = obj{"app": "web"}
		return p
	}
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(oomPod("web-1"), oomPod("web-2")),
		"cluster-resources/services/shop.json": list(obj{"metadata": obj{"name": "web", "namespace": "shop", "uid": "svc"},
			"spec": obj{"selector": obj{"app": "web"}}}),
	})
	rep := analyze.Run(g, rules.All(), analyze.Options{})
	want := []string{
		"runtime-oom-killed#1 root=true explains=[service-no-ready-endpoints#1] explainedBy=[]",
		"runtime-oom-killed#2 root=true explains=[service-no-ready-endpoints#1] explainedBy=[]",
		"service-no-ready-endpoints#1 root=false explains=[] explainedBy=[runtime-oom-killed#1 runtime-oom-killed#2]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
}

// An outcome rule (a Job out of retries) lists the pods it gave up on, at the controller
// stage; the pods' own finding, at a later stage, is still their root cause. Without a
// finding of their own the outcome stays the root.
func TestOutcomeIsExplainedByThePodsOwnCause(t *testing.T) {
	g := load(t, map[string]any{"cluster-resources/pods/batch.json": list(
		podObj("batch", "a", "", nil), podObj("batch", "b", "", nil))})
	job := analyze.ObjectRef{Kind: "Job", Namespace: "batch", Name: "migrate"}
	mk := func(id string, stage analyze.Stage, outcome bool, pods ...string) *analyze.Rule {
		return &analyze.Rule{ID: id, Stage: stage, Title: id, Severity: analyze.SeverityError, Outcome: outcome,
			Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
			Run: func(v *analyze.View) []analyze.Finding {
				subjects := []analyze.ObjectRef{job}
				for _, name := range pods {
					subjects = append(subjects, v.Pod("batch", name).Ref())
				}
				return []analyze.Finding{{Subjects: subjects, Cause: id, Remediation: "fix " + id,
					Evidence: []analyze.Evidence{v.Pod("batch", pods[0]).Loc.Evidence("x", v.CollectedAt())}}}
			}}
	}
	backoff := mk("backoff-limit", analyze.StageController, true, "a", "b")
	rep := analyze.Run(g, []*analyze.Rule{backoff, mk("crash", analyze.StageRuntime, false, "a")}, analyze.Options{})
	want := []string{
		"backoff-limit#1 root=true explains=[] explainedBy=[crash#1]",
		"crash#1 root=true explains=[backoff-limit#1] explainedBy=[]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %q, want %q", got, want)
	}
	roots := map[string]string{}
	for _, p := range rep.Pods {
		roots[p.Name] = p.RootCause
	}
	// Pod a crashed: its crash is its root. Pod b left no finding of its own.
	if roots["a"] != "crash#1" || roots["b"] != "backoff-limit#1" {
		t.Errorf("pod roots = %v", roots)
	}

	rep = analyze.Run(g, []*analyze.Rule{backoff}, analyze.Options{})
	if got := ids(rep.Findings); !reflect.DeepEqual(got, []string{"backoff-limit#1 root=true explains=[] explainedBy=[]"}) {
		t.Errorf("alone: findings = %q", got)
	}

	// An earlier stage explaining the workload (admission refusing its next pods) is the
	// root of the outcome and of the pods the outcome alone covered.
	rep = analyze.Run(g, []*analyze.Rule{backoff, mk("quota", analyze.StageAdmission, false, "a")}, analyze.Options{})
	want = []string{
		"quota#1 root=true explains=[backoff-limit#1] explainedBy=[]",
		"backoff-limit#1 root=false explains=[] explainedBy=[quota#1]",
	}
	if got := ids(rep.Findings); !reflect.DeepEqual(got, want) {
		t.Errorf("with quota: findings = %q, want %q", got, want)
	}
	for _, p := range rep.Pods {
		if p.RootCause != "quota#1" {
			t.Errorf("with quota: pod %s root = %s, want quota#1", p.Name, p.RootCause)
		}
	}
}
