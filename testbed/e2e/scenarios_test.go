//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/testbed/record"
	"podflow.dev/podflow/testbed/scenario"
)

// collectorNamespace holds the ServiceAccount podflow collects as, with the
// least-privilege RBAC that `podflow collect --print-rbac` prints.
const collectorNamespace = "podflow"

// demoScenarios make up testdata/bundles/demo: several failures in one bundle.
var demoScenarios = []string{"crash-exit-1", "image-pull-dns", "oom-killed", "quota-exceeded"}

// scenarioRun is what one scenario measured, for the summary.
type scenarioRun struct {
	s          *scenario.Scenario
	reproduced time.Duration
	collected  time.Duration
	size       int64    // cluster bundle, compressed
	trimmed    int64    // recorded fixture, uncompressed
	got        string   // the root finding podflow reported: rule, or "none"
	sources    []string // what that finding cites
	// pastes holds the root rule podflow gave for the scenario's pasted describe and
	// events output, per variant (pasteVariants).
	pastes map[string]string
	// serve is the comparison of podflow serve of the bundle with the live API server.
	serve []serveRow
}

func selectScenarios(t *testing.T) []*scenario.Scenario {
	all, err := scenario.Load(filepath.Join(tb.repo, "testdata", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	only := os.Getenv("PODFLOW_SCENARIOS")
	if only == "" {
		return all
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != requestScenarios {
			want[n] = true
		}
	}
	var out []*scenario.Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		t.Fatalf("PODFLOW_SCENARIOS names unknown scenarios: %v", want)
	}
	return out
}

func recording() bool { return os.Getenv("PODFLOW_RECORD") == "1" }

// TestScenarios reproduces every scenario at once, then collects and checks each one.
func TestScenarios(t *testing.T) {
	all, faulted := splitNodeFaults(selectScenarios(t))
	cli := &podflowCLI{bin: tb.podflow}
	runs := map[string]*scenarioRun{}
	for _, s := range append(all, faulted...) {
		runs[s.Name] = &scenarioRun{s: s}
	}
	t.Run("reproduce", func(t *testing.T) {
		for _, s := range all {
			r := runs[s.Name]
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				r.reproduced = reproduce(t, s)
			})
		}
	})
	if t.Failed() {
		// Collecting is still useful: the bundles show what did happen.
		t.Log("some scenarios did not reproduce; collecting anyway for their evidence")
	}
	// The node is collected once, after every scenario has happened, so its journal and
	// CRI state cover them all; each scenario's cluster bundle is merged with it.
	var nodeBundle string
	t.Run("collect-node", func(t *testing.T) {
		cli.require(t, "collect", "node")
		nodeBundle = collectNode(t, cli)
	})
	t.Run("rbac", func(t *testing.T) {
		cli.require(t, "collect")
		applyCollectorRBAC(t, cli)
	})
	t.Run("collect", func(t *testing.T) {
		for _, s := range all {
			r := runs[s.Name]
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				cli.require(t, "collect")
				collectScenario(t, cli, r, collectorKubeconfig(t, s.Name), nodeBundle)
			})
		}
	})
	if recording() {
		t.Run("record-demo", func(t *testing.T) {
			cli.require(t, "collect")
			recordDemo(t, cli, all, nodeBundle)
		})
	}
	runNodeFaults(t, cli, faulted, runs)
	logSummary(t, append(all, faulted...), runs)
	compared := map[string][]serveRow{}
	for _, r := range runs {
		if r.serve != nil {
			compared[r.s.Name] = r.serve
		}
	}
	writeServeComparison(t, compared)
	var pasted []*scenarioRun
	for _, s := range all {
		pasted = append(pasted, runs[s.Name])
	}
	logPasteSummary(t, pasted)
}

// reproduce applies a scenario and waits for its until conditions; it returns how long
// the failure took to happen.
func reproduce(t *testing.T, s *scenario.Scenario) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), s.TimeoutOrDefault()+2*time.Minute)
	defer cancel()
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := tb.installSeccomp(s); err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	if err := tb.apply(ctx, objs); err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	if err := tb.deleteStep(ctx, s); err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	var last *scenario.Snapshot
	err = waitFor(ctx, "scenario "+s.Name, s.TimeoutOrDefault(), []*proc{tb.apiserver, tb.containerd, tb.kubelet}, func(ctx context.Context) (bool, error) {
		snap, err := liveSnapshot(ctx, s.Name, s.Expect.Until)
		if err != nil {
			return false, err
		}
		last = snap
		if err := snap.EvalAll(s.Expect.Until); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("scenario %s did not reproduce: %v%s", s.Name, err, describePods(last))
	}
	took := time.Since(t0)
	t.Logf("scenario %s reproduced in %s", s.Name, took.Round(100*time.Millisecond))
	return took
}

// liveSnapshot reads what until conditions test from the API server.
func liveSnapshot(ctx context.Context, ns string, until []scenario.Check) (*scenario.Snapshot, error) {
	pods, err := tb.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	events, err := tb.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	slices, err := tb.client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list endpointslices: %w", err)
	}
	objects, err := liveObjects(ctx, ns, until)
	if err != nil {
		return nil, err
	}
	return &scenario.Snapshot{Namespace: ns, Pods: pods.Items, Events: events.Items, EndpointSlices: slices.Items, Objects: objects, Now: time.Now()}, nil
}

// liveObjects lists the controllers that until's object checks look at, each object as
// its JSON fields, as a bundle's list holds them.
func liveObjects(ctx context.Context, ns string, until []scenario.Check) (map[string][]map[string]any, error) {
	out := map[string][]map[string]any{}
	for _, c := range until {
		if c.File != scenario.FileObject || out[c.Kind] != nil {
			continue
		}
		var list any
		var err error
		switch c.Kind {
		case "deployments":
			list, err = tb.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		case "replicasets":
			list, err = tb.client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		case "jobs":
			list, err = tb.client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		default:
			return nil, fmt.Errorf("object kind %q cannot be checked live", c.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", c.Kind, err)
		}
		data, err := json.Marshal(list)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", c.Kind, err)
		}
		var items struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, fmt.Errorf("decode %s: %w", c.Kind, err)
		}
		out[c.Kind] = append(make([]map[string]any, 0, len(items.Items)), items.Items...)
	}
	return out, nil
}

// describePods summarizes pods and events for a failure message.
func describePods(s *scenario.Snapshot) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.Pods {
		fmt.Fprintf(&b, "\n  pod %s: %s", p.Name, p.Status.Phase)
		for _, c := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "; %s restarts=%d %s", c.Name, c.RestartCount, stateText(c.State))
		}
	}
	for _, e := range s.Events {
		fmt.Fprintf(&b, "\n  event %s %s/%s: %s", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
	}
	return b.String()
}

func stateText(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %s (%d)", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	return "unknown"
}

// collectNode runs the node collector as root against the real runtime and journal.
func collectNode(t *testing.T, cli *podflowCLI) string {
	return collectNodeTo(t, cli, tb.path("bundles", "node.tar.gz"), tb.startedAt)
}

// collectNodeTo collects the node into the bundle out, its journals from from on.
func collectNodeTo(t *testing.T, cli *podflowCLI, out string, from time.Time) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Bound the journal to this run (the machine's journal holds earlier runs, whose
	// pods had the same names), or to a node fault's scenario (earlier faults' kubelets
	// exited with errors of their own).
	since := time.Since(from).Truncate(time.Second) + 2*time.Second
	args := []string{"collect", "node", "--node-name", nodeName,
		"--runtime-endpoint", "unix://" + tb.containerdSock,
		"--kubelet-config", tb.path("kubelet", "config.yaml"),
		"--since", since.String(), "-o", out, "--force"}
	if tb.journal == "" {
		args = append(args, "--kubelet-log-file", tb.path("logs", "kubelet.log"), "--runtime-log-file", tb.path("logs", "containerd.log"))
	}
	// Crash-looping scenarios make the kubelet remove containers continually, so one can
	// vanish between the runtime's list and its inspection. Such a collection is retried,
	// twice at most; any other incomplete source fails at once.
	var r result
	for attempt := 1; ; attempt++ {
		var err error
		if r, err = cli.run(ctx, args...); err != nil {
			t.Fatal(err)
		}
		vanished := vanishedContainers(out)
		if r.code != 4 || vanished == "" || attempt == 3 {
			break
		}
		t.Logf("attempt %d: %s; collecting again", attempt, vanished)
	}
	cli.checkCollected(t, ctx, r, out)
	t.Logf("node collected in %s, %d bytes", r.duration.Round(time.Millisecond), fileSize(out))
	return out
}

// vanishedContainers returns the errors of a node bundle whose only incomplete source is
// the CRI one, failing with NotFound for containers the kubelet removed meanwhile, or "".
func vanishedContainers(path string) string {
	b, err := bundle.Open(path, bundle.DefaultLimits())
	if err != nil || b.Manifest == nil {
		return ""
	}
	var errs []string
	for _, s := range b.Manifest.Sources {
		if s.Status != bundle.StatusFailed && s.Status != bundle.StatusPartial {
			continue
		}
		// Every runtime error in it must be a NotFound.
		n := strings.Count(s.Error, "code = NotFound")
		if n == 0 || n != strings.Count(s.Error, "rpc error:") {
			return ""
		}
		errs = append(errs, s.Name+": "+s.Error)
	}
	return strings.Join(errs, "; ")
}

// applyCollectorRBAC applies the printed least-privilege RBAC once: its ClusterRole and
// ClusterRoleBinding are cluster-wide, so every scenario collects as the same
// ServiceAccount, each with its own token.
func applyCollectorRBAC(t *testing.T, cli *podflowCLI) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := cli.run(ctx, "collect", "--print-rbac", "--rbac-namespace", collectorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		t.Fatalf("print RBAC: %s", r)
	}
	objs, err := scenario.DecodeManifests([]byte(r.stdout))
	if err != nil {
		t.Fatalf("podflow collect --print-rbac printed something that is not manifests: %v\n%s", err, r.stdout)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": collectorNamespace},
	}}
	if err := tb.apply(ctx, append([]*unstructured.Unstructured{ns}, objs...)); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" {
			collectorSA = o.GetName()
		}
	}
	if collectorSA == "" {
		t.Fatalf("podflow collect --print-rbac printed no ServiceAccount:\n%s", r.stdout)
	}
}

var collectorSA string

// collectorKubeconfig writes a kubeconfig holding a fresh token of the collector's
// ServiceAccount (TokenRequest API), so collection runs with exactly the printed RBAC.
func collectorKubeconfig(t *testing.T, name string) string {
	if collectorSA == "" {
		t.Fatal("the collector RBAC was not applied")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exp := int64(3600)
	tr, err := tb.client.CoreV1().ServiceAccounts(collectorNamespace).CreateToken(ctx, collectorSA,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request a token for %s/%s: %v", collectorNamespace, collectorSA, err)
	}
	path := tb.path("bundles", name+".kubeconfig")
	server := fmt.Sprintf("https://127.0.0.1:%d", tb.ports.apiserver)
	if err := writeKubeconfig(path, server, tb.pki.CAFile, "system:serviceaccount:"+collectorNamespace+":"+collectorSA, tr.Status.Token); err != nil {
		t.Fatal(err)
	}
	return path
}

// collectScenario collects one scenario's namespace, merges it with the node bundle,
// checks the evidence and the diagnosis, and records the fixture when asked.
func collectScenario(t *testing.T, cli *podflowCLI, r *scenarioRun, kubeconfig, nodeBundle string) {
	s := r.s
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := tb.path("bundles", s.Name+".tar.gz")
	// What a client is answered while the scenario runs, before and after the bundle is
	// taken, as the collector: podflow serve of the bundle must answer the same.
	liveBefore := liveProbe(t, ctx, kubeconfig, s.Name)
	res, err := cli.run(ctx, "collect", "--kubeconfig", kubeconfig, "-n", s.Name, "-o", out, "--force")
	if err != nil {
		t.Fatal(err)
	}
	cli.checkCollected(t, ctx, res, out)
	liveAfter := liveProbe(t, ctx, kubeconfig, s.Name)
	r.collected, r.size = res.duration, fileSize(out)
	if capturing() && containsString(pasteScenarios, s.Name) {
		capturePastes(t, ctx, s.Name)
	}
	t.Logf("scenario %s collected in %s, %d bytes", s.Name, res.duration.Round(time.Millisecond), r.size)
	if nodeBundle == "" {
		t.Fatal("no node bundle to merge with (collect-node failed or was skipped)")
	}
	cli.require(t, "bundle", "merge")
	merged := tb.path("bundles", s.Name+"-merged.tar.gz")
	res, err = cli.run(ctx, "bundle", "merge", out, nodeBundle, "-o", merged, "--force")
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 {
		t.Fatalf("merge: %s", res)
	}
	cli.verify(t, ctx, merged)
	checkNoLeaks(t, s, out, nodeBundle, merged)
	mb, err := bundle.Open(merged, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := record.Trim(mb, []string{s.Name})
	if err != nil {
		t.Fatal(err)
	}
	r.trimmed = trimmed.Size()
	tbundle, err := trimmed.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := scenario.FromBundle(tbundle, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.EvalAll(s.Expect.Evidence); err != nil {
		t.Errorf("scenario %s: the bundle lacks evidence:\n%v", s.Name, err)
	}
	if recording() {
		dir := filepath.Join(tb.repo, "testdata", "bundles", s.Name)
		if err := record.Write(dir, trimmed); err != nil {
			t.Fatalf("record %s: %v", dir, err)
		}
		t.Logf("recorded %s (%d bytes)", dir, r.trimmed)
	}
	owners, err := scenario.OwnersFromBundle(mb, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("analyze", func(t *testing.T) {
		r.got, r.sources = checkDiagnosis(t, ctx, cli, s, merged, owners)
	})
	t.Run("pastes", func(t *testing.T) {
		checkPastes(t, ctx, cli, r)
	})
	t.Run("serve", func(t *testing.T) {
		cli.require(t, "serve")
		rows := compareServeWithLive(t, ctx, cli.bin, s.Name, merged, liveBefore, liveAfter)
		if diffs := unexplainedDiffs(rows); len(diffs) > 0 {
			// The live cluster moves while it is read: a probe flips READY, a container
			// restarts, a controller replaces an object, and can change back before the
			// second live read, so the two reads around a collection do not always show
			// the state it took. A difference is checked once more on a new collection
			// between new reads: serve's own defects show both times.
			t.Logf("serve differs from the live reads around the first collection; collecting again:\n  %s", strings.Join(diffs, "\n  "))
			before, bundle, after := collectWindow(t, ctx, cli, kubeconfig, nodeBundle, s.Name+"-again")
			rows = compareServeWithLive(t, ctx, cli.bin, s.Name, bundle, before, after)
			for _, d := range unexplainedDiffs(rows) {
				t.Errorf("serve differs from the live server: %s", d)
			}
		}
		r.serve = rows
	})
}

// collectWindow reads the live server as the collector, collects the scenario's
// namespace, reads the live server again and merges the collection with the node bundle:
// the merged bundle and the live reads around it, for a second serve comparison.
func collectWindow(t *testing.T, ctx context.Context, cli *podflowCLI, kubeconfig, nodeBundle, name string) (before *probeSet, merged string, after *probeSet) {
	t.Helper()
	ns := strings.TrimSuffix(name, "-again")
	out := tb.path("bundles", name+".tar.gz")
	before = liveProbe(t, ctx, kubeconfig, ns)
	res, err := cli.run(ctx, "collect", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "--force")
	if err != nil {
		t.Fatal(err)
	}
	cli.checkCollected(t, ctx, res, out)
	after = liveProbe(t, ctx, kubeconfig, ns)
	merged = tb.path("bundles", name+"-merged.tar.gz")
	res, err = cli.run(ctx, "bundle", "merge", out, nodeBundle, "-o", merged, "--force")
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 {
		t.Fatalf("merge: %s", res)
	}
	return before, merged, after
}

// checkNoLeaks searches the bytes of every bundle a scenario went into (its cluster
// bundle, the node bundle and their merge) for the canaries of its no-leak checks, so a
// secret that redaction missed fails the scenario, naming the file inside the bundle.
func checkNoLeaks(t *testing.T, s *scenario.Scenario, bundles ...string) {
	t.Helper()
	values := scenario.NoLeakValues(s.Expect.Evidence)
	if len(values) == 0 {
		return
	}
	for _, p := range bundles {
		leaks, err := scenario.FindLeaks(p, values)
		if err != nil {
			t.Errorf("scenario %s: %v", s.Name, err)
		}
		if len(leaks) > 0 {
			t.Errorf("scenario %s: %v", s.Name, &scenario.LeakError{Bundle: p, Leaks: leaks})
		}
	}
}

// checkDiagnosis runs `podflow analyze` on the merged bundle and looks for the root-cause
// finding expect.yaml names and the findings it explains (or, for a healthy scenario, for
// no finding about its namespace). A finding about an object the expected subject owns
// (a Deployment's Pod) counts. A rule podflow does not have fails with
// PODFLOW_E2E_STRICT=1 (as e2e.sh sets it) and is skipped otherwise.
//
// It returns the root finding it found (its rule, "none" when podflow reported nothing
// about the namespace) and the kinds of evidence that finding cites, for the summary.
func checkDiagnosis(t *testing.T, ctx context.Context, cli *podflowCLI, s *scenario.Scenario, merged string, owners scenario.Owners) (got string, sources []string) {
	got = "?"
	cli.require(t, "analyze")
	res, err := cli.run(ctx, "analyze", merged, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 && res.code != 3 {
		t.Fatalf("analyze: %s", res)
	}
	var a analysis
	if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
		t.Fatalf("analyze -o json printed invalid JSON: %v\n%s", err, res.stdout)
	}
	var about []analysisFinding
	var seen []string
	for _, f := range a.Findings {
		for _, sub := range f.Subjects {
			if sub.Namespace == s.Name {
				about = append(about, f)
				seen = append(seen, f.String())
				break
			}
		}
	}
	d := s.Expect.Diagnosis
	got = "none"
	for _, f := range about {
		if !f.Root {
			continue
		}
		if got == "none" || (!d.None && f.Rule == d.Rule) {
			got, sources = f.Rule, f.sources()
		}
	}
	if d.None {
		if len(about) > 0 {
			t.Errorf("scenario %s is healthy but podflow reports:\n  %s", s.Name, strings.Join(seen, "\n  "))
		}
		return got, sources
	}
	var missingRules []string
	for i, want := range append([]scenario.Finding{d.Root()}, d.Also...) {
		if !cli.hasRule(want.Rule) {
			missingRules = append(missingRules, want.Rule)
			continue
		}
		root := i == 0
		if !reported(about, want, root, owners) {
			what := "finding"
			if root {
				what = "root cause"
			}
			if want.Cause != "" {
				what += fmt.Sprintf(" whose cause says %q,", want.Cause)
			}
			t.Errorf("scenario %s: podflow did not report the %s %s (%s) about %s; it reports:\n  %s",
				s.Name, what, want.Rule, want.Stage, want.Subject, strings.Join(seen, "\n  "))
		}
	}
	if len(missingRules) > 0 {
		msg := fmt.Sprintf("scenario %s: podflow has no rule %s", s.Name, strings.Join(missingRules, ", "))
		if os.Getenv("PODFLOW_E2E_STRICT") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set PODFLOW_E2E_STRICT=1 to make this a failure)")
	}
	return got, sources
}

// reported reports whether a finding matches want, marked root when root is asked.
func reported(findings []analysisFinding, want scenario.Finding, root bool, owners scenario.Owners) bool {
	for _, f := range findings {
		if f.Rule != want.Rule || f.Stage != want.Stage || (root && !f.Root) || !strings.Contains(f.Cause, want.Cause) {
			continue
		}
		for _, sub := range f.Subjects {
			if owners.Covers(sub.Kind+"/"+sub.Namespace+"/"+sub.Name, want.Subject) {
				return true
			}
		}
	}
	return false
}

// recordDemo writes testdata/bundles/demo: one bundle with several failures, collected
// across all namespaces (as a user triaging a cluster would) and trimmed to a few.
func recordDemo(t *testing.T, cli *podflowCLI, all []*scenario.Scenario, nodeBundle string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var names []string
	for _, s := range all {
		if containsString(demoScenarios, s.Name) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		t.Skip("none of the demo scenarios ran")
	}
	kc := collectorKubeconfig(t, "demo")
	out := tb.path("bundles", "all.tar.gz")
	res, err := cli.run(ctx, "collect", "--kubeconfig", kc, "-A", "-o", out, "--force")
	if err != nil {
		t.Fatal(err)
	}
	cli.checkCollected(t, ctx, res, out)
	merged := tb.path("bundles", "all-merged.tar.gz")
	if res, err = cli.run(ctx, "bundle", "merge", out, nodeBundle, "-o", merged, "--force"); err != nil || res.code != 0 {
		t.Fatalf("merge: %v %s", err, res)
	}
	mb, err := bundle.Open(merged, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := record.Trim(mb, names)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tb.repo, "testdata", "bundles", "demo")
	if err := record.Write(dir, trimmed); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s with %v (%d bytes)", dir, names, trimmed.Size())
}

func logSummary(t *testing.T, all []*scenario.Scenario, runs map[string]*scenarioRun) {
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %12s %12s %12s %14s\n", "scenario", "reproduced", "collected", "bundle (gz)", "fixture (raw)")
	for _, n := range names {
		r := runs[n]
		fmt.Fprintf(&b, "%-28s %12s %12s %12d %14d\n", n, r.reproduced.Round(100*time.Millisecond), r.collected.Round(time.Millisecond), r.size, r.trimmed)
	}
	// The diagnosis table, in Markdown so it can be pasted as it is.
	b.WriteString("\n| scenario | expected root | got | evidence cited |\n|---|---|---|---|\n")
	for _, n := range names {
		r := runs[n]
		want := "none"
		if d := r.s.Expect.Diagnosis; !d.None {
			want = d.Rule
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", n, want, r.got, strings.Join(r.sources, ", "))
	}
	t.Logf("summary:\n%s", b.String())
	if err := os.WriteFile(filepath.Join(tb.dir, "summary.md"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("write the summary: %v", err)
	}
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return st.Size()
}
