package rules

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// A describe excerpt cut below the pod's Name line and above its container header is
// what a ticket often holds. Its answer names the pod by the file it came from, never
// by podflow's made-up name; the commands a reader copies say POD, NAMESPACE and
// CONTAINER where the evidence does not show them; and the chain does not call the pod
// unscheduled when its container ran on a node.
func TestAPodTheEvidenceDoesNotNameIsNamedByItsFile(t *testing.T) {
	const excerpt = `    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Ready:          False
    Restart Count:  4
    Limits:
      memory:  300Mi
`
	b := importPaste(t, map[string]string{"excerpt.txt": excerpt})
	g := analyze.Load([]*bundle.Bundle{b}, nil)
	rep := analyze.Run(g, All(), analyze.Options{Unexplained: true, Timelines: true})
	rs := roots(rep)
	if len(rs) != 1 || rs[0].Rule != "runtime-oom-killed" {
		t.Fatalf("want one runtime-oom-killed root, got %v", ruleIDs(rs))
	}
	f := rs[0]
	pods := f.Pods()
	if len(pods) != 1 || pods[0].UnnamedIn != "excerpt.txt" || !pods[0].NamespaceUnknown {
		t.Fatalf("subject = %+v, want a pod unnamed in excerpt.txt with no namespace shown", pods)
	}
	made := pods[0].Name
	shown := analyze.SubjectLines(f)
	if len(shown) != 1 || shown[0] != "(unnamed in excerpt.txt)" {
		t.Errorf("subjects column = %q", shown)
	}
	var texts []string
	texts = append(texts, f.Cause, f.Remediation)
	texts = append(texts, f.Confirm...)
	if f.Plan != nil {
		texts = append(texts, f.Plan.Change.Fields...)
		for _, k := range f.Plan.KeepFirst {
			texts = append(texts, k.What, k.Command)
		}
	}
	for _, s := range texts {
		if strings.Contains(s, made) || strings.Contains(s, "-n default") || strings.Contains(s, "container unknown") ||
			strings.Contains(s, "-c unknown") || strings.Contains(s, "[unknown]") {
			t.Errorf("a placeholder shows: %q", s)
		}
	}
	if !strings.Contains(f.Cause, "300Mi") || !strings.Contains(f.Cause, "its name is not in the evidence") {
		t.Errorf("cause = %q, want the limit and that the container's name is not shown", f.Cause)
	}
	joined := strings.Join(f.Confirm, "\n")
	for _, want := range []string{" POD", "-n NAMESPACE", "-c CONTAINER"} {
		if !strings.Contains(joined, want) {
			t.Errorf("confirm commands lack %q:\n%s", want, joined)
		}
	}
	for _, pr := range rep.Pods {
		if pr.UnnamedIn != "excerpt.txt" {
			t.Errorf("pod report %s/%s: unnamedIn = %q", pr.Namespace, pr.Name, pr.UnnamedIn)
		}
		for _, s := range pr.Timeline {
			if s.Step == "scheduled" && s.Status != analyze.StepOK {
				t.Errorf("scheduled step = %s (%s): the container ran on a node", s.Status, s.Detail)
			}
			for _, e := range s.Evidence {
				if strings.Contains(e.Excerpt, "0001-01-01") || strings.Contains(e.Excerpt, made) {
					t.Errorf("step %s cites %q", s.Step, e.Excerpt)
				}
			}
		}
	}
	for _, gap := range rep.Gaps {
		for _, m := range gap.Missing {
			for _, n := range m.PodNames {
				if strings.Contains(n, made) {
					t.Errorf("coverage gap names %q", n)
				}
			}
		}
	}

	x, err := analyze.Explain(g, All(), pods[0].Namespace, made, analyze.Options{Unexplained: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range x.Stages {
		if v.Stage.Order() < analyze.StageRuntime.Order() && v.Status == analyze.VerdictNotReached {
			t.Errorf("stage %s is %s before the broken runtime stage: %s", v.Stage, v.Status, v.Summary)
		}
	}
	var out bytes.Buffer
	if err := analyze.RenderExplanation(&out, x, "text", analyze.RenderOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.Contains(first, "(unnamed in excerpt.txt)") || strings.Contains(out.String(), made) {
		t.Errorf("explain text names the pod by its placeholder:\n%s", out.String())
	}
	out.Reset()
	if err := analyze.Render(&out, rep, analyze.FormatJSON, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []struct {
			Subjects []map[string]any `json:"subjects"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) == 0 || doc.Findings[0].Subjects[0]["unnamedIn"] != "excerpt.txt" || doc.Findings[0].Subjects[0]["namespaceUnknown"] != true {
		t.Errorf("JSON subjects = %v", doc.Findings)
	}
}

// A `kubectl get pods` row (Evicted, no namespace shown) with the describe lines of the
// same pod below it: the eviction's message is read from the excerpt, and the namespace
// kubectl did not print is not invented.
func TestAPastedEvictionRowTakesTheExcerptsMessage(t *testing.T) {
	const paste = `api-6c9f7d8b5-zr4tx   0/1   Evicted   0   2h
Status:  Failed
Reason:  Evicted
Message: The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. Container api was using 3Gi, request is 0, has larger consumption of ephemeral-storage.
`
	rs := roots(analyzePaste(t, map[string]string{"evicted.txt": paste}))
	if len(rs) != 1 || rs[0].Rule != "node-pod-evicted" {
		t.Fatalf("want one node-pod-evicted root, got %v", ruleIDs(rs))
	}
	f := rs[0]
	if !strings.Contains(f.Cause, "ephemeral-storage") || !strings.Contains(f.Cause, "3Gi") {
		t.Errorf("cause = %q, want the excerpt's message read", f.Cause)
	}
	if got := analyze.SubjectLines(f); len(got) != 1 || got[0] != "api-6c9f7d8b5-zr4tx" {
		t.Errorf("subjects = %q, want the pod without an invented namespace", got)
	}
	for _, c := range f.Confirm {
		if strings.Contains(c, "-n default") || strings.Contains(c, "not a valid Kubernetes name") {
			t.Errorf("confirm command %q", c)
		}
	}
}

// `kubectl get pods` prints no namespace unless asked: a table without -n or a
// NAMESPACE column names pods of a namespace the paste does not say, and podflow does not
// make one up; with `-n shop` on its prompt, the pods are shop's.
func TestAPastedPodsTableKeepsTheNamespaceItShows(t *testing.T) {
	const table = "NAME                  READY   STATUS    RESTARTS   AGE\nweb-5d8f9c7b6-x2x9q   0/1     Evicted   0          5m\n"
	for _, c := range []struct{ paste, subject, ns string }{
		{table, "web-5d8f9c7b6-x2x9q", "-n NAMESPACE"},
		{"$ kubectl get pods -n shop\n" + table, "shop/web-5d8f9c7b6-x2x9q", "-n shop"},
		{"NAMESPACE   " + strings.Replace(table, "\nweb", "\nshop        web", 1), "shop/web-5d8f9c7b6-x2x9q", "-n shop"},
	} {
		rs := roots(analyzePaste(t, map[string]string{"pods.txt": c.paste}))
		if len(rs) != 1 {
			t.Fatalf("%q: want one root, got %v", c.paste, ruleIDs(rs))
		}
		if got := analyze.SubjectLines(rs[0]); len(got) != 1 || got[0] != c.subject {
			t.Errorf("%q: subjects = %q, want %q", c.paste, got, c.subject)
		}
		if len(rs[0].Confirm) == 0 || !strings.Contains(rs[0].Confirm[0], c.ns) {
			t.Errorf("%q: confirm = %q, want %q", c.paste, rs[0].Confirm, c.ns)
		}
	}
}

// A pasted sandbox event without its pod: the catch-all sandbox rule and the signature
// that knows the line's cause (the node's pod addresses are used up) both read it; the
// signature's reading is the one reported, about the pod.
func TestASignatureTakesTheLineACatchAllRead(t *testing.T) {
	const row = `  Warning  FailedCreatePodSandBox  2m (x6 over 3m)  kubelet, ip-10-1-2-3.eu-west-1.compute.internal  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up sandbox container "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0" network for pod "api-7b8c9d6f5-mm2pq": networkPlugin cni failed to set up pod "api-7b8c9d6f5-mm2pq_prod" network: add cmd: failed to assign an IP address to container
`
	rs := catalogRoots(t, map[string]string{"events.txt": row})
	if len(rs) != 1 || rs[0].Rule != "sandbox-ip-exhausted" {
		t.Fatalf("want one sandbox-ip-exhausted root, got %v", ruleIDs(rs))
	}
	if len(rs[0].Pods()) != 1 {
		t.Errorf("subjects = %v, want the pod the catch-all read", rs[0].Subjects)
	}
}

// An event row is all a ticket shows of a pod whose sandbox fails: the pod is neither
// named nor placed on a node, and its phase is not shown, yet the sandbox rule reads the
// failure and names its part.
func TestASandboxEventRowAloneIsReadBySandboxRule(t *testing.T) {
	const row = `  Warning  FailedCreatePodSandBox  40s (x9 over 5m)  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "5c1b0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c": failed to find plugin "bridge" in path [/opt/cni/bin]
`
	rs := roots(analyzePaste(t, map[string]string{"describe.txt": row}))
	if len(rs) != 1 || rs[0].Rule != "sandbox-create-failed" {
		t.Fatalf("want one sandbox-create-failed root, got %v", ruleIDs(rs))
	}
	if c := rs[0].Cause; !strings.Contains(c, "CNI network setup") || !strings.Contains(c, `failed to find plugin \"bridge\"`) || strings.Contains(c, "node  ") {
		t.Errorf("cause = %q", c)
	}
}

// containerd's resolver also says only "not found" after the reference it could not
// resolve; that is the image-not-found refusal. Another controller's "not found" is not.
func TestTheShortResolveNotFoundIsAnImageNotFound(t *testing.T) {
	run := func(row string) []*analyze.Finding {
		return catalogRoots(t, map[string]string{"events.txt": row})
	}
	rs := run(`  Warning  Failed  31s (x3 over 70s)  kubelet  Failed to pull image "registry.example.com/team/api:4.1.0": failed to resolve reference "registry.example.com/team/api:4.1.0": not found
`)
	if len(rs) != 1 || rs[0].Rule != "image-pull-not-found" || !strings.Contains(rs[0].Cause, "registry.example.com/team/api") {
		t.Fatalf("want one image-pull-not-found root naming the image, got %v", ruleIDs(rs))
	}
	for _, f := range run(`Warning  FailedGetScale  4s  horizontal-pod-autoscaler  deployments/scale.apps "orders" not found
`) {
		if f.Rule == "image-pull-not-found" {
			t.Errorf("an autoscaler's not found is read as an image's: %s", f.Cause)
		}
	}
}

// An IP address manager other than host-local says it has no address left in its own
// words (cilium's agent: "range is full"): the sandbox's IP rule reads it, not the
// catch-all sandbox rule, and names the plugin and the words.
func TestAnotherIPAMsExhaustionIsTheIPRule(t *testing.T) {
	const row = `  Warning  FailedCreatePodSandBox  5m (x40 over 20m)  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up sandbox container "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0" network for pod "api-7b8c9d6f5-mm2pq": networkPlugin cni failed to set up pod "api-7b8c9d6f5-mm2pq_prod" network: unable to allocate IP via local cilium agent: [POST /ipam][502] postIpamFailure  range is full
`
	rs := catalogRoots(t, map[string]string{"events.txt": row})
	if len(rs) != 1 || rs[0].Rule != "sandbox-ip-exhausted" {
		t.Fatalf("want one sandbox-ip-exhausted root, got %v", ruleIDs(rs))
	}
	for _, w := range []string{`plugin "cilium"`, "range is full"} {
		if !strings.Contains(rs[0].Cause, w) {
			t.Errorf("cause %q does not say %q", rs[0].Cause, w)
		}
	}
	if strings.Contains(rs[0].Cause, "range set") {
		t.Errorf("cause %q speaks of host-local's range set", rs[0].Cause)
	}
}

// A CLI's error box (a left edge only, the message wrapped over its lines) is one
// message: the API server's "field is immutable" at its end is read, not the
// "is invalid" its first line shows.
func TestAnErrorBoxIsOneMessage(t *testing.T) {
	const box = "`│ Error: cannot patch \"api\" with kind Deployment: Deployment.apps \"api\" is invalid: spec.selector: Invalid value:\n" +
		"│ v1.LabelSelector{MatchLabels:map[string]string{\"app.kubernetes.io/name\":\"api\", \"app.kubernetes.io/version\":\"2.0.0\",\n" +
		"│ \"helm.sh/chart\":\"api-2.0.0\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable`\n"
	rs := catalogRoots(t, map[string]string{"helm.txt": box})
	if len(rs) != 1 || rs[0].Rule != "request-field-immutable" {
		t.Fatalf("want one request-field-immutable root, got %v", ruleIDs(rs))
	}
	if !strings.Contains(rs[0].Cause, "spec.selector") || strings.Contains(rs[0].Cause, "│") {
		t.Errorf("cause %q: want the field, without the box's edge", rs[0].Cause)
	}
}

// The scheduler's wording that does not name the taint, quoted in a ticket's sentence
// that does ("tainted KEY=VALUE:EFFECT"): the cause carries the taint.
func TestAnUnnamedTaintRefusalTakesTheTaintTheSentenceNames(t *testing.T) {
	const text = "Pods stay Pending: `2 node(s) had untolerated taint(s)`. Both workers are tainted `dedicated=batch:NoSchedule` since Monday.\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": text})
	if len(rs) != 1 || rs[0].Rule != "scheduling-untolerated-taint" {
		t.Fatalf("want one scheduling-untolerated-taint root, got %v", ruleIDs(rs))
	}
	if !strings.Contains(rs[0].Cause, "dedicated=batch:NoSchedule") {
		t.Errorf("cause %q does not name the taint", rs[0].Cause)
	}
}

// catalogRoots are the root findings of pasted files analyzed with the whole catalog:
// the Go rules and the signatures.
// wantOneRoot fails the test unless the paste's analysis has exactly one root, of rule,
// whose cause holds every one of holds; it logs the roots it got.
func wantOneRoot(t *testing.T, roots []*analyze.Finding, rule string, holds ...string) {
	t.Helper()
	ok := len(roots) == 1 && roots[0].Rule == rule
	for _, h := range holds {
		ok = ok && strings.Contains(roots[0].Cause, h)
	}
	if !ok {
		for _, f := range roots {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("%d roots, want one %s whose cause holds %q", len(roots), rule, holds)
	}
}

func catalogRoots(t *testing.T, files map[string]string) []*analyze.Finding {
	t.Helper()
	b := importPaste(t, files)
	return roots(analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), loadCatalog(t), analyze.Options{Unexplained: true}))
}

// Two event rows of one unnamed pod, each a different missing ConfigMap, make one
// finding that names both and cites both rows; the same row twice names it once.
func TestOnePodTwoMissingConfigMaps(t *testing.T) {
	const rows = `  Warning  FailedMount  2m (x9 over 4m)  kubelet  MountVolume.SetUp failed for volume "app-config" : configmap "app-config" not found
  Warning  FailedMount  2m (x9 over 4m)  kubelet  MountVolume.SetUp failed for volume "nginx-conf" : configmap "nginx-conf" not found
`
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantOneRoot(t, rs, "volume-configmap-missing", `configmap app-config`, `configmap nginx-conf`)
	if len(rs) == 1 && len(rs[0].Evidence) < 2 {
		t.Errorf("evidence %v, want both rows", rs[0].Evidence)
	}
	const twice = `  Warning  FailedMount  2m (x9 over 4m)  kubelet  MountVolume.SetUp failed for volume "app-config" : configmap "app-config" not found
  Warning  FailedMount  1m (x3 over 2m)  kubelet  MountVolume.SetUp failed for volume "app-config" : configmap "app-config" not found
`
	rs = catalogRoots(t, map[string]string{"events.txt": twice})
	wantOneRoot(t, rs, "volume-configmap-missing", `configmap app-config`)
	if len(rs) == 1 && strings.Count(rs[0].Cause, "refers to") != 1 {
		t.Errorf("cause %q names the same ConfigMap twice", rs[0].Cause)
	}
}

// wantFirstRoot fails t unless the first root is at stage, of rule (any when ""), and its
// cause holds every text; it logs the roots when not.
func wantFirstRoot(t *testing.T, roots []*analyze.Finding, stage, rule string, holds ...string) {
	t.Helper()
	ok := len(roots) > 0 && string(roots[0].Stage) == stage && (rule == "" || roots[0].Rule == rule)
	for _, h := range holds {
		ok = ok && strings.Contains(roots[0].Cause, h)
	}
	if !ok {
		for _, f := range roots {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("want a first root at %s (rule %q) whose cause holds %q", stage, rule, holds)
	}
}
