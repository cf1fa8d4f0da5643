package analyze_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

func TestLoadMalformedFilesWarnAndTheRestLoads(t *testing.T) {
	journal := strings.Join([]string{
		`2026-11-29T10:00:01+0000 n1 kubelet[9]: I1129 10:00:01.000000       9 kubelet.go:1] "ok" pod="shop/good"`,
		`2026-11-29T10:00:0`,
		`2026-11-29T10:00:02+0000 n1 kubelet[9]: I1129 10:00:02.000000       9 kubelet.go:1] "still ok" pod="shop/good"`,
		"\x00\x00\x00",
	}, "\n") + "\n"
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(podObj("shop", "good", "n1", nil)),
		"cluster-resources/pods/bad.json":  "{\n  \"items\": [\n    {\"metadata\": {\"name\": \"x\"}\n",
		"cluster-resources/events/shop.json": list(
			obj{"metadata": obj{"name": "e1", "namespace": "shop"}, "involvedObject": obj{"kind": "Pod", "name": "good", "namespace": "shop"}, "reason": "Scheduled", "message": "ok"},
			obj{"metadata": obj{"name": "e2", "namespace": "shop"}, "involvedObject": obj{"kind": "Pod", "name": "good"}, "count": "many"},
		),
		"nodes/n1/kubelet.log": journal,
	})
	want := []analyze.Warning{
		{Path: "cluster-resources/events/shop.json", Pointer: "/items/1", Message: "unreadable item: json: cannot unmarshal string into Go struct field rawEvent.count of type int32"},
		{Path: "cluster-resources/pods/bad.json", Line: 4, Message: "not a readable JSON list: unexpected end of JSON input"},
		{Path: "nodes/n1/kubelet.log", Line: 2, Message: "2 unreadable line(s), first at line 2: unreadable timestamp"},
	}
	if got := g.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %#v\nwant %#v", got, want)
	}
	if g.PodCount() != 1 || g.FindPod("shop", "good") == nil {
		t.Errorf("the readable pod did not load")
	}
	rep := analyze.Run(g, []*analyze.Rule{{
		ID: "journal-probe", Stage: analyze.StageNode, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods, analyze.KubeletJournal, analyze.Events}},
		Run: func(v *analyze.View) []analyze.Finding {
			p := v.Pod("shop", "good")
			var lines []string
			for _, e := range v.JournalFor(p) {
				lines = append(lines, e.Loc().String()+" "+e.Message)
			}
			for _, e := range v.EventsFor(p.Ref()) {
				lines = append(lines, e.Loc.String()+" "+e.Reason)
			}
			return []analyze.Finding{{Subjects: []analyze.ObjectRef{p.Ref()}, Cause: strings.Join(lines, "; "), Remediation: "none",
				Evidence: []analyze.Evidence{p.Loc.Evidence("x", v.CollectedAt())}}}
		},
	}}, analyze.Options{})
	// The rule's sentence names no pod: the engine closes it with the pod it is about.
	wantCause := "nodes/n1/kubelet.log:1 ok; nodes/n1/kubelet.log:3 still ok; cluster-resources/events/shop.json:/items/0 Scheduled (pod shop/good)"
	if len(rep.Findings) != 1 || rep.Findings[0].Cause != wantCause {
		t.Errorf("findings = %+v, want the cause %q", rep.Findings, wantCause)
	}
}

func TestMissingOptionalFileIsNoEvidence(t *testing.T) {
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(podObj("shop", "a", "", nil))})
	if len(g.Warnings()) != 0 {
		t.Errorf("warnings for missing files: %v", g.Warnings())
	}
	if g.Has(analyze.Events) || g.Has(analyze.KubeletJournal) || !g.Has(analyze.Pods) {
		t.Errorf("Has: events %t journal %t pods %t", g.Has(analyze.Events), g.Has(analyze.KubeletJournal), g.Has(analyze.Pods))
	}
	rep := analyze.Run(g, []*analyze.Rule{{ID: "needs-journal", Stage: analyze.StageNode, Title: "t", Severity: analyze.SeverityError,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods, analyze.KubeletJournal}},
		Run:   func(*analyze.View) []analyze.Finding { t.Error("a skipped rule ran"); return nil }}}, analyze.Options{})
	want := []analyze.SkippedRule{{Rule: "needs-journal", Reason: "needs kubelet journal: not in bundle (nodes/<node>/kubelet.log)", Missing: []analyze.Kind{analyze.KubeletJournal}}}
	if !reflect.DeepEqual(rep.Skipped, want) {
		t.Errorf("skipped = %+v, want %+v", rep.Skipped, want)
	}
}

func TestCollectionFailureIsTheSkipReason(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json":     list(podObj("shop", "a", "", nil)),
		"cluster-resources/events-errors.json": []string{"events is forbidden"},
	})
	rep := analyze.Run(g, []*analyze.Rule{{ID: "needs-events", Stage: analyze.StageImage, Title: "t", Severity: analyze.SeverityError,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Events}}, Run: func(*analyze.View) []analyze.Finding { return nil }}}, analyze.Options{})
	want := "needs events: collection failed (see cluster-resources/events-errors.json)"
	if len(rep.Skipped) != 1 || rep.Skipped[0].Reason != want {
		t.Errorf("skipped = %+v, want reason %q", rep.Skipped, want)
	}
}

func TestCoverageWithoutNodeEvidence(t *testing.T) {
	p := pullFailing("shop", "web-1", "n1", "boom")
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json":   list(p),
		"cluster-resources/events/shop.json": list(),
	})
	rep := analyze.Run(g, nil, analyze.Options{Timelines: true})
	if len(rep.Pods) != 1 {
		t.Fatalf("pods = %d", len(rep.Pods))
	}
	got := map[analyze.Stage]analyze.StageCoverage{}
	for _, c := range rep.Pods[0].Coverage {
		got[c.Stage] = c
	}
	want := map[analyze.Stage]analyze.StageCoverage{
		analyze.StageNode: {Stage: analyze.StageNode, Status: analyze.CoverageNone,
			Missing: []string{"node n1: not in bundle", "kubelet journal for node n1: not in bundle"}},
		analyze.StageSandbox: {Stage: analyze.StageSandbox, Status: analyze.CoverageNone,
			Missing: []string{"container runtime state for node n1: not in bundle", "kubelet journal for node n1: not in bundle",
				"events: none for this pod, they expire after about an hour"}},
		analyze.StageImage: {Stage: analyze.StageImage, Status: analyze.CoveragePartial, Sources: []string{"container statuses"},
			Missing: []string{"events: none for this pod, they expire after about an hour", "kubelet journal for node n1: not in bundle"}},
		analyze.StageController: {Stage: analyze.StageController, Status: analyze.CoverageNotApplicable},
	}
	for st, w := range want {
		if !reflect.DeepEqual(got[st], w) {
			t.Errorf("coverage of %s:\n got %+v\nwant %+v", st, got[st], w)
		}
	}
	var nodeGap *analyze.CoverageGap
	for i := range rep.Gaps {
		if rep.Gaps[i].Stage == analyze.StageNode {
			nodeGap = &rep.Gaps[i]
		}
	}
	wantGap := &analyze.CoverageGap{Stage: analyze.StageNode, PodsWithoutEvidence: 1, PodsWithoutEvidenceNames: []string{"shop/web-1"}, Missing: []analyze.ReasonCount{
		{Reason: "kubelet journal for node n1: not in bundle", Pods: 1, PodNames: []string{"shop/web-1"}},
		{Reason: "node n1: not in bundle", Pods: 1, PodNames: []string{"shop/web-1"}}}}
	if !reflect.DeepEqual(nodeGap, wantGap) {
		t.Errorf("node gap = %+v, want %+v", nodeGap, wantGap)
	}
}

func TestNodeEvidenceLinksToPods(t *testing.T) {
	uid := "7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"
	cid := strings.Repeat("ab", 32)
	p := podObj("batch", "worker", "n1", nil)
	p["metadata"].(obj)["uid"] = uid
	g := load(t, map[string]any{
		"cluster-resources/pods/batch.json": list(p),
		"nodes/n1/crictl/pods.json": obj{"items": []any{obj{"id": "sb1", "metadata": obj{"name": "worker", "uid": uid, "namespace": "batch", "attempt": 0},
			"state": "SANDBOX_READY", "createdAt": "1796032800000000000", "labels": obj{"io.kubernetes.pod.uid": uid}}}},
		"nodes/n1/crictl/ps.json": obj{"containers": []any{obj{"id": cid, "podSandboxId": "sb1", "metadata": obj{"name": "worker", "attempt": 2},
			"image": obj{"image": "registry.example/w:1"}, "state": "CONTAINER_EXITED", "createdAt": "1796032860000000000",
			"labels": obj{"io.kubernetes.container.name": "worker"}}}},
		"nodes/n1/crictl/inspect/" + cid + ".json": obj{"status": obj{"id": cid, "metadata": obj{"name": "worker", "attempt": 2},
			"state": "CONTAINER_EXITED", "exitCode": 137, "reason": "OOMKilled", "labels": obj{"io.kubernetes.pod.uid": uid, "io.kubernetes.container.name": "worker"}}, "info": obj{}},
		"nodes/n1/dmesg.log": "[ 812.1] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/kubepods/burstable/pod" + uid +
			",task_memcg=/kubepods/burstable/pod" + uid + "/" + cid + ",task=worker,pid=4242,uid=0\n" +
			"[ 812.2] Memory cgroup out of memory: Killed process 4242 (worker) total-vm:1kB, anon-rss:65000kB, file-rss:0kB\n",
	})
	var got []string
	rep := analyze.Run(g, []*analyze.Rule{{ID: "probe", Stage: analyze.StageRuntime, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods, analyze.CRI, analyze.Dmesg}},
		Run: func(v *analyze.View) []analyze.Finding {
			pod := v.Pod("batch", "worker")
			for _, s := range v.SandboxesFor(pod) {
				got = append(got, "sandbox "+s.ID+" "+s.State+" "+s.Loc.String())
			}
			for _, c := range v.ContainersFor(pod) {
				got = append(got, "container "+c.Name+" "+c.State+" "+c.Reason+" "+c.Loc.String()+" inspect "+c.InspectLoc.String())
			}
			for _, k := range v.OOMKillsFor(pod) {
				got = append(got, "oom "+k.Process+" "+k.ContainerID[:4]+" "+k.Loc.String()+" "+k.Text)
			}
			return nil
		}}}, analyze.Options{})
	if len(rep.Violations) > 0 || len(g.Warnings()) > 0 {
		t.Fatalf("violations %v warnings %v", rep.Violations, g.Warnings())
	}
	want := []string{
		"sandbox sb1 SANDBOX_READY nodes/n1/crictl/pods.json:/items/0",
		"container worker CONTAINER_EXITED OOMKilled nodes/n1/crictl/ps.json:/containers/0 inspect nodes/n1/crictl/inspect/" + cid + ".json:/status",
		"oom worker abab nodes/n1/dmesg.log:1-2 Memory cgroup out of memory: Killed process 4242 (worker) total-vm:1kB, anon-rss:65000kB, file-rss:0kB",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("linked evidence:\n got %q\nwant %q", got, want)
	}
}

// A bundle marked ReadOnce, or opened read once and so kept compressed, lets go of
// every file the load decodes, and the analysis of it is the same.
func TestLoadOfAReadOnceBundleReleasesFilesAndFindsTheSame(t *testing.T) {
	cat, err := rules.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo", "crash-exit-1", "image-pull-dns"} {
		report := func(mode string) ([]byte, *bundle.Bundle) {
			p := filepath.Join("..", "testdata", "bundles", name)
			b, err := bundle.Open(p, bundle.DefaultLimits())
			switch mode {
			case "marked":
				b.ReadOnce()
			case "opened":
				b, err = bundle.OpenReadOnce(context.Background(), p, bundle.DefaultLimits())
			}
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), cat, analyze.Options{Unexplained: true})
			data, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			return data, b
		}
		want, _ := report("plain")
		for _, mode := range []string{"marked", "opened"} {
			got, b := report(mode)
			if string(got) != string(want) {
				t.Errorf("%s, %s: the report of the read-once bundle differs:\n%s\nwant\n%s", name, mode, got, want)
			}
			for _, n := range b.Names() {
				if info := bundle.ParsePath(n); info.Kind == bundle.KindPods || info.NodeFile == bundle.NodeKubeletLog || info.Area == "log" {
					if _, err := b.ReadFile(n); !errors.Is(err, bundle.ErrTaken) {
						t.Errorf("%s, %s: %s still held after the load: %v", name, mode, n, err)
					}
				}
			}
		}
	}
}

// TroubleOnly leaves out the kubelet's informational lines about healthy pods, and only
// those: warnings, lines about other pods or no pod, and the journal's last line stay.
func TestTroubleOnlyLeavesOutOnlyTheRoutineHistoryOfHealthyPods(t *testing.T) {
	c1, c2, s1 := strings.Repeat("c1", 32), strings.Repeat("c2", 32), strings.Repeat("a1", 32)
	running := obj{"status": obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}},
		"containerStatuses": []any{obj{"name": "app", "ready": true, "restartCount": 0, "containerID": "containerd://" + c1, "state": obj{"running": obj{}}}}}}
	crashing := obj{"status": obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "False"}},
		"containerStatuses": []any{obj{"name": "app", "restartCount": 4, "state": obj{"waiting": obj{"reason": "CrashLoopBackOff"}}}}}}
	line := func(sev, msg, fields string) string {
		return `2026-11-29T10:00:01+0000 n1 kubelet[9]: ` + sev + `1129 10:00:01.000000       9 kubelet.go:1] "` + msg + `" ` + fields
	}
	journal := strings.Join([]string{
		line("I", "SyncLoop ADD healthy", `pod="shop/good"`),
		line("I", "probe ok by uid", `podUID="uid-good"`),
		line("I", "both pods", `pods=["shop/good" "shop/bad"]`),
		line("E", "error about the healthy pod", `pod="shop/good"`),
		line("I", "about the crashing pod", `pod="shop/bad"`),
		line("I", "about no pod", `node="n1"`),
		line("I", "about a pod not in the bundle", `pod="shop/gone"`),
		line("I", "routine again", `pod="shop/good"`),
		line("I", "last line, healthy pod", `pod="shop/good"`),
	}, "\n") + "\n"
	rt := func(level, msg string) string {
		return `2026-11-29T10:00:01+0000 n1 containerd[7]: time="2026-11-29T10:00:01.000000000Z" level=` + level + ` msg="` + msg + `"`
	}
	runtimeJournal := strings.Join([]string{
		// The sandbox's shim starts before the line that returns its ID.
		rt("info", `starting signal loop" namespace=k8s.io path=/run/containerd/k8s.io/`+s1+` runtime="io.containerd.runc.v2`),
		rt("info", `RunPodSandbox for &PodSandboxMetadata{Name:good,Uid:uid-good,Namespace:shop,Attempt:0,} returns sandbox id \"`+s1+`\"`),
		rt("info", `CreateContainer within sandbox \"`+s1+`\" for container &ContainerMetadata{Name:app,Attempt:0,}`),
		rt("info", `StartContainer for \"`+c1+`\" returns successfully`),
		rt("info", `StartContainer for \"`+c2+`\" returns successfully`),
		rt("error", `StopContainer for \"`+c1+`\" failed`),
		rt("info", `RunPodSandbox for &PodSandboxMetadata{Name:bad,Uid:uid-bad,Namespace:shop,Attempt:0,}`),
		rt("info", `loading plugin`),
		rt("info", `TaskExit event in podsandbox handler container_id:\"`+c1+`\"`),
	}, "\n") + "\n"
	files := map[string]any{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): list(podObj("shop", "good", "n1", running), podObj("shop", "bad", "n1", crashing)),
		bundle.NodePath("n1", bundle.NodeKubeletLog):           journal,
		bundle.NodePath("n1", bundle.NodeRuntimeLog):           runtimeJournal,
		bundle.LogPath("shop", "good", "app", false):           "serving\n",
		bundle.LogPath("shop", "bad", "app", false):            "panic: no config\n",
	}
	texts := func(opts analyze.LoadOptions) []string {
		g, err := analyze.LoadWith(t.Context(), []*bundle.Bundle{memBundle(t, files)}, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		// What the journals hold, as a rule reads them.
		var out []string
		reader := &analyze.Rule{ID: "test-journal-reader", Stage: analyze.StageNode, Title: "reads the journals",
			Needs: analyze.Needs{Required: []analyze.Kind{analyze.KubeletJournal, analyze.RuntimeJournal, analyze.Pods, analyze.ContainerLogs}},
			Run: func(v *analyze.View) []analyze.Finding {
				for _, p := range v.Pods() {
					if c := v.Log(p, "app", false); c != nil {
						out = append(out, "log of "+p.Obj.Name+": "+strings.TrimSpace(c.Text()))
					}
				}
				for _, e := range append(v.Journal("n1"), v.RuntimeJournal("n1")...) {
					text := e.Message
					if i := strings.Index(text, `msg="`); i >= 0 {
						text = text[i+len(`msg="`):] // the runtime's lines keep their logrus text
						text = strings.NewReplacer(c1, "C1", c2, "C2", s1, "S1", `\"`, "").Replace(strings.TrimSuffix(text, `"`))
					}
					out = append(out, text)
				}
				return nil
			}}
		analyze.Run(g, []*analyze.Rule{reader}, analyze.Options{})
		// Whatever was kept, no line of evidence text is made about the healthy pod.
		bad := 0
		for _, l := range g.Lines() {
			switch {
			case l.Pod != nil && l.Pod.Obj.Name == "good":
				t.Errorf("a line about the healthy pod: %q", l.Text)
			case l.Pod != nil && l.Pod.Obj.Name == "bad":
				bad++
			}
		}
		if bad == 0 {
			t.Error("no line about the crashing pod")
		}
		return out
	}
	all := texts(analyze.LoadOptions{})
	if len(all) != 20 {
		t.Fatalf("without the option: %d logs and journal lines, want 20: %q", len(all), all)
	}
	got := texts(analyze.LoadOptions{TroubleOnly: true})
	want := []string{"log of bad: panic: no config", "both pods", "error about the healthy pod", "about the crashing pod", "about no pod",
		"about a pod not in the bundle", "last line, healthy pod",
		"StartContainer for C2 returns successfully", "StopContainer for C1 failed",
		"RunPodSandbox for &PodSandboxMetadata{Name:bad,Uid:uid-bad,Namespace:shop,Attempt:0,}", "loading plugin",
		"TaskExit event in podsandbox handler container_id:C1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TroubleOnly kept\n%q\nwant\n%q", got, want)
	}
}

// On the recorded bundles, leaving out healthy pods' history changes no report.
func TestTroubleOnlyFindsTheSame(t *testing.T) {
	cat, err := rules.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "bundles", "*"))
	if len(dirs) < 10 {
		t.Fatalf("only %d recorded bundles", len(dirs))
	}
	fewer := 0
	for i, dir := range dirs {
		if i%8 != 1 {
			continue // an eighth of them keeps the test short; the goldens run all
		}
		report := func(opts analyze.LoadOptions) (string, int) {
			b, err := bundle.Open(dir, bundle.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			g, err := analyze.LoadWith(t.Context(), []*bundle.Bundle{b}, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(analyze.Run(g, cat, analyze.Options{Unexplained: true, Timelines: true}))
			if err != nil {
				t.Fatal(err)
			}
			return string(data), len(g.Lines())
		}
		want, nAll := report(analyze.LoadOptions{})
		got, nKept := report(analyze.LoadOptions{TroubleOnly: true})
		if got != want {
			t.Errorf("%s: the report differs with TroubleOnly:\n%s\nwant\n%s", filepath.Base(dir), got, want)
		}
		if nKept < nAll {
			fewer++
		}
	}
	if fewer == 0 {
		t.Error("no recorded bundle had a line left out: the test compares nothing")
	}
}

// The records of crictl ps, pods, inspect and inspectp come together whatever the order
// their files are read in: the first ps or pods record of an ID is kept, the last
// inspect record's exit and times and the last inspectp record's address are merged
// into it, a pod UID the ps records give wins over one inspect gives, and a record only
// inspect or inspectp gives comes after the listed ones.
func TestCRIRecordsMergeWhateverTheOrderOfTheirFiles(t *testing.T) {
	uid := "7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"
	p := podObj("batch", "worker", "n1", nil)
	p["metadata"].(obj)["uid"] = uid
	labels := obj{"io.kubernetes.pod.uid": uid}
	ps := func(id, uid string, exit int) obj {
		c := obj{"id": id, "podSandboxId": "sb1", "metadata": obj{"name": "worker"}, "state": "CONTAINER_EXITED", "exitCode": exit,
			"labels": obj{"io.kubernetes.container.name": "worker"}}
		if uid != "" {
			c["labels"].(obj)["io.kubernetes.pod.uid"] = uid
		}
		return c
	}
	inspect := func(id, uid, reason string, exit int) obj {
		s := ps(id, uid, exit)
		s["reason"] = reason
		return obj{"status": s, "info": obj{}}
	}
	sandbox := func(id, ip string) obj {
		s := obj{"id": id, "metadata": obj{"name": "worker", "uid": uid, "namespace": "batch"}, "state": "SANDBOX_READY", "labels": labels}
		if ip != "" {
			s["network"] = obj{"ip": ip}
		}
		return s
	}
	one := map[string]any{
		"cluster-resources/pods/batch.json": list(p),
		"nodes/n1/crictl/pods.json":         obj{"items": []any{sandbox("sb1", ""), sandbox("sb1", ""), sandbox("sb2", "")}},
		// c1's ps records name no pod but through the sandbox; the second names it.
		"nodes/n1/crictl/ps.json": obj{"containers": []any{ps("c1", "", 1), ps("c2", uid, 2), ps("c1", uid, 3), ps("", uid, 4)}},
		// Read before ps.json: c1 twice (the last wins), c3 that ps does not list.
		"nodes/n1/crictl/inspect/c1.json":   []any{inspect("c1", "other-uid", "Error", 10), inspect("c1", "", "OOMKilled", 137)},
		"nodes/n1/crictl/inspect/c3.json":   inspect("c3", uid, "Completed", 0),
		"nodes/n1/crictl/inspect/c4.json":   inspect("", uid, "Unknown", 5),
		"nodes/n1/crictl/inspectp/sb1.json": []any{obj{"status": sandbox("sb1", "10.0.0.1")}, obj{"status": sandbox("sb1", "10.0.0.2")}},
		"nodes/n1/crictl/inspectp/sb3.json": obj{"status": sandbox("sb3", "10.0.0.3")},
	}
	// A second bundle of the same node: its inspect record is merged into the first
	// bundle's ps record of c2, and its ps record of c2 changes nothing.
	two := map[string]any{
		"nodes/n1/crictl/inspect/c2.json":   inspect("c2", uid, "Error", 20),
		"nodes/n1/crictl/ps.json":           obj{"containers": []any{ps("c2", uid, 21)}},
		"nodes/n1/crictl/pods.json":         obj{"items": []any{sandbox("sb2", "")}},
		"nodes/n1/crictl/inspectp/sb2.json": obj{"status": sandbox("sb2", "10.0.0.4")},
	}
	a, b := memBundle(t, one), memBundle(t, two)
	a.Source, b.Source = "one", "two"
	g := analyze.Load([]*bundle.Bundle{a, b}, nil)
	var got []string
	analyze.Run(g, []*analyze.Rule{{ID: "probe", Stage: analyze.StageRuntime, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods, analyze.CRI}},
		Run: func(v *analyze.View) []analyze.Finding {
			pod := v.Pod("batch", "worker")
			for _, s := range v.SandboxesFor(pod) {
				got = append(got, fmt.Sprintf("sandbox %s ip %q %s", s.ID, s.IP, s.Loc))
			}
			for _, c := range v.ContainersFor(pod) {
				got = append(got, fmt.Sprintf("container %q %s exit %d %s inspect %s", c.ID, c.Reason, c.ExitCode, c.Loc, c.InspectLoc))
			}
			return nil
		}}}, analyze.Options{})
	if len(g.Warnings()) > 0 {
		t.Fatalf("warnings %v", g.Warnings())
	}
	want := []string{
		`sandbox sb1 ip "10.0.0.2" one!nodes/n1/crictl/pods.json:/items/0`,
		`sandbox sb2 ip "10.0.0.4" one!nodes/n1/crictl/pods.json:/items/2`,
		`sandbox sb3 ip "10.0.0.3" one!nodes/n1/crictl/inspectp/sb3.json:/status`,
		`container "c1" OOMKilled exit 137 one!nodes/n1/crictl/ps.json:/containers/0 inspect one!nodes/n1/crictl/inspect/c1.json:/1/status`,
		`container "c2" Error exit 20 one!nodes/n1/crictl/ps.json:/containers/1 inspect two!nodes/n1/crictl/inspect/c2.json:/status`,
		`container ""  exit 4 one!nodes/n1/crictl/ps.json:/containers/3 inspect <nil>`,
		`container "c3" Completed exit 0 one!nodes/n1/crictl/inspect/c3.json:/status inspect one!nodes/n1/crictl/inspect/c3.json:/status`,
		`container "" Unknown exit 5 one!nodes/n1/crictl/inspect/c4.json:/status inspect one!nodes/n1/crictl/inspect/c4.json:/status`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CRI records:\n got %q\nwant %q", got, want)
	}
}
