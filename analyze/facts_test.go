package analyze_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// Each typed fact is built from each source it can come from: a pod's status, an event
// about a pod the evidence does not hold, a kubelet journal line, a pasted fragment; and
// a View hands a rule only the pieces of the kinds it declared.

// viewOf runs one rule declaring kinds (all optional, so it runs on whatever is there)
// and returns what read makes of its View.
func viewOf[T any](t *testing.T, g *analyze.Graph, kinds []analyze.Kind, read func(*analyze.View) T) T {
	t.Helper()
	var out T
	rep := analyze.Run(g, []*analyze.Rule{{ID: "facts", Stage: analyze.StageImage, Title: "t", Severity: analyze.SeverityInfo,
		Needs: analyze.Needs{Optional: kinds},
		Run: func(v *analyze.View) []analyze.Finding {
			out = read(v)
			return nil
		}}}, analyze.Options{})
	if len(rep.Violations) > 0 {
		t.Fatalf("violations: %v", rep.Violations)
	}
	return out
}

var allKinds = []analyze.Kind{analyze.Pods, analyze.Events, analyze.KubeletJournal, analyze.RuntimeJournal, analyze.CRI,
	analyze.ContainerLogs, analyze.Dmesg, analyze.ReplicaSets, analyze.Fragments}

func event(ns, name, kind, obj, fieldPath, reason, msg, last string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "namespace": ns},
		"involvedObject": map[string]any{"kind": kind, "name": obj, "namespace": ns, "fieldPath": fieldPath},
		"type":           "Warning", "reason": reason, "message": msg, "count": 3, "lastTimestamp": last}
}

func kubelet(sev, at, file, msg string, kv string) string {
	return "2026-11-29T" + at + "+0000 n1 kubelet[9]: " + sev + "1129 " + at + ".000000       9 " + file + "] \"" + msg + "\" " + kv
}

func TestPullFailureFromEverySource(t *testing.T) {
	const image = "registry.example/app:1"
	lookup := `dial tcp: lookup registry.example on 10.96.0.10:53: no such host`
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web", "n1", "Back-off pulling image")),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "spec.containers{app}", "Failed", `Failed to pull image "`+image+`": `+lookup, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "ghost", "spec.containers{side}", "Failed", `Failed to pull image "registry.example/side:2": `+lookup, "2026-11-29T10:00:06Z"),
		),
		"nodes/n1/kubelet.log": strings.Join([]string{
			kubelet("E", "10:00:04", "remote_image.go:180", "PullImage from image service failed", `err="rpc error: `+lookup+`" image="`+image+`"`),
			kubelet("E", "10:00:05", "pod_workers.go:1300", "Error syncing pod, skipping", `err="failed to \"StartContainer\" for \"app\" with ErrImagePull: `+image+`: `+lookup+`" pod="shop/web" podUID="uid-web"`),
			kubelet("E", "10:00:06", "pod_workers.go:1300", "Error syncing pod, skipping", `err="failed to \"StartContainer\" for \"app\" with ImagePullBackOff: \"Back-off pulling image \\\"registry.example/lost:1\\\"\"" pod="shop/lost" podUID="uid-lost"`),
			kubelet("E", "10:00:07", "remote_image.go:180", "PullImage from image service failed", `err="rpc error: 403 Forbidden" image="quay.example/lone:3"`),
		}, "\n") + "\n",
		bundle.FragmentPath(bundle.FragmentText, "ticket.txt"): "  Warning  Failed  3m  kubelet  Failed to pull image \"paste.example/x:9\": rpc error: not found\n",
	})
	type row struct {
		Subject, Container, Image, Waiting string
		Event, NodeLine, Fragment          bool
		PodLines                           int
	}
	rows := func(fs []analyze.PullFailure) []row {
		var out []row
		for _, f := range fs {
			r := row{Subject: f.Subject.Ref().String(), Container: f.Container.Name, Image: f.Image,
				Event: f.Event != nil, NodeLine: f.NodeLine != nil, Fragment: f.Fragment != nil, PodLines: len(f.PodLines)}
			if f.Subject.Node != "" {
				r.Subject += " on " + f.Subject.Node
			}
			if f.Waiting != nil {
				r.Waiting = f.Waiting.Reason
			}
			out = append(out, r)
		}
		return out
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row { return rows(v.PullFailures()) })
	want := []row{
		{Subject: "Pod shop/web on n1", Container: "app", Image: image, Waiting: "ErrImagePull", Event: true, NodeLine: true, PodLines: 1},
		{Subject: "Pod shop/ghost", Container: "side", Image: "registry.example/side:2", Event: true},
		{Subject: "Pod shop/lost on n1", Container: "app", Image: "registry.example/lost:1", PodLines: 1},
		{Subject: "Pod (unknown) on n1", Image: "quay.example/lone:3", NodeLine: true},
		{Subject: "Pod (unknown)", Image: "paste.example/x:9", Fragment: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pull failures, every kind declared:\n got %+v\nwant %+v", got, want)
	}
	// Declaring pods alone gives the status with none of the other pieces, and no pull
	// known only from an event, a line or a paste.
	got = viewOf(t, g, []analyze.Kind{analyze.Pods}, func(v *analyze.View) []row { return rows(v.PullFailures()) })
	want = []row{{Subject: "Pod shop/web on n1", Container: "app", Image: image, Waiting: "ErrImagePull"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pull failures, pods declared:\n got %+v\nwant %+v", got, want)
	}
}

func TestContainerWaitAndRunFacts(t *testing.T) {
	p := podObj("shop", "web", "n1", obj{"status": obj{"phase": "Pending", "containerStatuses": []any{obj{"name": "app", "ready": false, "restartCount": 4,
		"state":     obj{"waiting": obj{"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
		"lastState": obj{"terminated": obj{"exitCode": 1, "reason": "Error", "containerID": "containerd://abc"}}}}}})
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(p),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "spec.containers{app}", "BackOff", "Back-off restarting failed container", "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "web", "spec.containers{other}", "BackOff", "not this container", "2026-11-29T10:00:06Z"),
		),
		"nodes/n1/kubelet.log": strings.Join([]string{
			kubelet("E", "10:00:04", "pod_workers.go:1300", "Error syncing pod, skipping", `err="failed to \"StartContainer\" for \"app\" with CrashLoopBackOff: back-off" pod="shop/web" podUID="uid-web"`),
			kubelet("I", "10:00:05", "prober.go:107", "Probe failed", `probeType="Liveness" pod="shop/web" podUID="uid-web" containerName="app" probeResult="failure" output=<`),
			"2026-11-29T10:00:05+0000 n1 kubelet[9]: \tHTTP probe failed with statuscode: 500",
			"2026-11-29T10:00:05+0000 n1 kubelet[9]:  >",
		}, "\n") + "\n",
		bundle.LogPath("shop", "web", "app", false): "starting\nfatal: config missing\n",
		bundle.LogPath("shop", "web", "app", true):  "starting\npanic: boom\n",
	})
	waits := viewOf(t, g, allKinds, func(v *analyze.View) []analyze.ContainerWait { return v.ContainerWaits() })
	if len(waits) != 1 || waits[0].Waiting.Reason != "CrashLoopBackOff" || len(waits[0].Events) != 1 || len(waits[0].SyncErrors) != 1 {
		t.Fatalf("container waits = %+v, want the app container's CrashLoopBackOff with its one event and one sync error", waits)
	}
	type run struct {
		Events, Journal int
		Log, Previous   string
		ProbeOutput     string
	}
	read := func(v *analyze.View) run {
		rs := slices.Collect(v.ContainerRuns())
		if len(rs) != 1 {
			t.Fatalf("container runs = %d, want 1", len(rs))
		}
		r := rs[0]
		out := run{Events: len(r.Events()), Journal: len(r.Journal)}
		if r.Log != nil {
			out.Log = r.Log.Text()
		}
		if r.PreviousLog != nil {
			out.Previous = r.PreviousLog.Text()
		}
		for _, e := range r.Journal {
			if e.Message == "Probe failed" {
				out.ProbeOutput = r.ProbeOutput(e)
			}
		}
		return out
	}
	got := viewOf(t, g, allKinds, read)
	want := run{Events: 2, Journal: 2, Log: "starting\nfatal: config missing\n", Previous: "starting\npanic: boom\n", ProbeOutput: "HTTP probe failed with statuscode: 500"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("container run:\n got %+v\nwant %+v", got, want)
	}
	if got := viewOf(t, g, []analyze.Kind{analyze.Pods}, read); got != (run{}) {
		t.Errorf("container run with pods declared only = %+v, want no events, lines or logs", got)
	}
}

func TestSandboxFailureFromEverySource(t *testing.T) {
	p := podObj("shop", "web", "n1", nil)
	p["metadata"].(obj)["uid"] = "7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"
	msg := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): connection refused`
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(p),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "FailedCreatePodSandBox", msg, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "ghost", "", "FailedCreatePodSandBox", msg, "2026-11-29T10:00:06Z"),
		),
		"nodes/n1/kubelet.log": kubelet("E", "10:00:07", "kuberuntime_sandbox.go:72", "CreatePodSandbox for pod failed",
			`err="rpc error: code = Unknown desc = failed to setup network for sandbox: newer" pod="shop/web" podUID="7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"`) + "\n",
		"nodes/n1/containerd.log":                              `2026-11-29T10:00:07+0000 n1 containerd[5]: time="2026-11-29T10:00:07Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:web,Uid:7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c,Namespace:shop,Attempt:0,} failed, error"` + "\n",
		bundle.FragmentPath(bundle.FragmentText, "ticket.txt"): "Warning  FailedCreatePodSandBox  1m  kubelet  Failed to create pod sandbox: rpc error: cni plugin not initialized\n",
	})
	type row struct {
		Subject                        string
		Event, Line, Runtime, Fragment bool
		Message                        string
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row {
		var out []row
		for _, f := range v.SandboxFailures() {
			out = append(out, row{f.Subject.Ref().String(), f.Event != nil, f.Line != nil, f.Runtime != nil, f.Fragment != nil, f.Message()})
		}
		return out
	})
	want := []row{
		{Subject: "Pod shop/web", Event: true, Line: true, Runtime: true, Message: "rpc error: code = Unknown desc = failed to setup network for sandbox: newer"},
		{Subject: "Pod shop/ghost", Event: true, Message: msg},
		{Subject: "Pod (unknown)", Fragment: true, Message: "Warning  FailedCreatePodSandBox  1m  kubelet  Failed to create pod sandbox: rpc error: cni plugin not initialized"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sandbox failures:\n got %+v\nwant %+v", got, want)
	}
}

func TestSchedulingFailureFromEverySource(t *testing.T) {
	const fit = "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 2 Insufficient cpu. preemption: 0/3 nodes are available."
	withCondition := podObj("shop", "web", "", obj{"status": obj{"phase": "Pending", "conditions": []any{obj{"type": "PodScheduled", "status": "False",
		"reason": "Unschedulable", "message": fit, "lastTransitionTime": "2026-11-29T10:00:01Z"}}}})
	eventOnly := podObj("shop", "api", "", nil)
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(eventOnly, withCondition),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "api", "", "FailedScheduling", "0/3 nodes are available: 3 Insufficient memory.", "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "ghost", "", "FailedScheduling", "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", "2026-11-29T10:00:06Z"),
		),
		bundle.FragmentPath(bundle.FragmentText, "ticket.txt"): "0/5 nodes are available: 5 node(s) had volume node affinity conflict.\n",
	})
	type row struct {
		Subject, Nodes string
		Reasons        []string
		Event          bool
	}
	read := func(v *analyze.View) []row {
		var out []row
		for _, f := range v.SchedulingFailures() {
			out = append(out, row{f.Subject.Ref().String(), f.Nodes, f.Reasons, f.Event != nil})
		}
		return out
	}
	got := viewOf(t, g, allKinds, read)
	want := []row{
		{Subject: "Pod shop/api", Nodes: "3", Reasons: []string{"3 Insufficient memory"}, Event: true},
		{Subject: "Pod shop/web", Nodes: "3", Reasons: []string{"1 node(s) had untolerated taint {gpu: true}", "2 Insufficient cpu"}},
		{Subject: "Pod shop/ghost", Nodes: "1", Reasons: []string{"1 node(s) didn't match Pod's node affinity/selector"}, Event: true},
		{Subject: "Pod (unknown)", Nodes: "5", Reasons: []string{"5 node(s) had volume node affinity conflict"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scheduling failures:\n got %+v\nwant %+v", got, want)
	}
	// Without events, the pod known from its event alone has no message.
	got = viewOf(t, g, []analyze.Kind{analyze.Pods}, read)
	want = []row{{Subject: "Pod shop/api"}, want[1]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scheduling failures, pods declared:\n got %+v\nwant %+v", got, want)
	}
}

func TestAdmissionRejectionFromEverySource(t *testing.T) {
	rs := obj{"metadata": obj{"name": "web-1", "namespace": "shop", "uid": "uid-rs"},
		"spec":   obj{"selector": obj{}, "template": obj{"spec": obj{"containers": []any{}}}},
		"status": obj{"replicas": 0, "conditions": []any{obj{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": `pods "web-1-x" is forbidden: exceeded quota: q`}}}}
	g := load(t, map[string]any{
		"cluster-resources/replicasets/shop.json": list(rs),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "ReplicaSet", "web-1", "", "FailedCreate", `Error creating: pods "web-1-y" is forbidden: exceeded quota: q`, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "StatefulSet", "db", "", "FailedCreate", `create Pod db-0 in StatefulSet db failed error: admission webhook "v.example" denied the request: no`, "2026-11-29T10:00:06Z"),
		),
		bundle.FragmentPath(bundle.FragmentText, "ticket.txt"): "Warning FailedCreate 2m replicaset-controller Error creating: pods \"p\" is forbidden: unable to validate against any pod security policy\n",
	})
	got := viewOf(t, g, allKinds, func(v *analyze.View) []string {
		var out []string
		for _, r := range v.AdmissionRejections() {
			src := "condition"
			switch {
			case r.Event != nil:
				src = "event"
			case r.Fragment != nil:
				src = "paste"
			}
			out = append(out, src+" "+r.Owner.String()+": "+r.Message)
		}
		return out
	})
	want := []string{
		`event ReplicaSet shop/web-1: pods "web-1-y" is forbidden: exceeded quota: q`,
		`event StatefulSet shop/db: admission webhook "v.example" denied the request: no`,
		`condition ReplicaSet shop/web-1: pods "web-1-x" is forbidden: exceeded quota: q`,
		`paste  : pods "p" is forbidden: unable to validate against any pod security policy`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("admission rejections:\n got %q\nwant %q", got, want)
	}
}

func TestMountFailureFromEverySource(t *testing.T) {
	uid := "7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"
	p := podObj("shop", "web", "n1", nil)
	p["metadata"].(obj)["uid"] = uid
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(p),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "web-config" not found`, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "web", "", "Pulled", `Successfully pulled image`, "2026-11-29T10:00:06Z"),
		),
		"nodes/n1/kubelet.log": strings.Join([]string{
			kubelet("E", "10:00:04", "configmap.go:199", "Couldn't get configMap shop/web-config: configmap \\\"web-config\\\" not found", ""),
			kubelet("E", "10:00:05", "nestedpendingoperations.go:348", "Operation for {volumeName:kubernetes.io/csi/x podName:"+uid+"} failed. Error: MountVolume.MountDevice failed for volume \\\"data\\\": driver name x.csi not found", ""),
		}, "\n") + "\n",
	})
	type row struct {
		Events, UIDLines int
		ObjectError      bool
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row {
		var out []row
		for _, f := range v.MountFailures() {
			out = append(out, row{len(f.Events), len(f.UIDLines), f.ObjectError("configmap", "shop", "web-config") != nil})
		}
		return out
	})
	if want := []row{{Events: 1, UIDLines: 1, ObjectError: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("mount failures:\n got %+v\nwant %+v", got, want)
	}
}

func TestEvictionAndNodeAgentFacts(t *testing.T) {
	evicted := podObj("shop", "web", "n1", obj{"status": obj{"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}})
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json":   list(evicted),
		"cluster-resources/nodes/nodes.json": list(nodeObj("n1", "Unknown")),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "Evicted", "The node was low on resource: memory.", "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "gone", "", "Evicted", "The node was low on resource: ephemeral-storage.", "2026-11-29T10:00:06Z"),
		),
		"cluster-resources/events/default.json": list(
			event("", "e3", "Node", "n1", "", "NodeNotReady", "Node n1 status is now: NodeNotReady", "2026-11-29T10:00:07Z"),
		),
		"nodes/n1/kubelet.log": strings.Join([]string{
			"2026-11-29T10:00:01+0000 n1 kubelet[7]: I1129 10:00:01.000000       7 server.go:1] \"Kubelet version\" kubeletVersion=\"v1.31.0\"",
			"2026-11-29T10:00:04+0000 n1 kubelet[9]: I1129 10:00:04.000000       9 eviction_manager.go:1] \"Eviction manager: pod is evicted successfully\" pod=\"shop/web\"",
			"2026-11-29T10:00:08+0000 n1 kubelet[9]: E1129 10:00:08.000000       9 run.go:1] \"command failed\" err=\"failed to run Kubelet: boom\"",
		}, "\n") + "\n",
	})
	type ev struct {
		Subject     string
		Event, Line bool
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []ev {
		var out []ev
		for _, f := range v.Evictions() {
			out = append(out, ev{f.Subject.Ref().String(), f.Event != nil, f.Line != nil})
		}
		return out
	})
	if want := []ev{{"Pod shop/web", true, true}, {"Pod shop/gone", true, false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("evictions:\n got %+v\nwant %+v", got, want)
	}
	agent := viewOf(t, g, allKinds, func(v *analyze.View) analyze.NodeAgent { return v.NodeAgent("n1") })
	if agent.Last == nil || agent.Last.Message != "command failed" || len(agent.LastRun) != 2 || agent.NotReady == nil {
		t.Errorf("node agent = last %v, last run %d entries, NotReady %v; want the failed command, the two entries of process 9 and the event",
			agent.Last, len(agent.LastRun), agent.NotReady)
	}
}

func TestContainerRunRuntimeLines(t *testing.T) {
	id := strings.Repeat("7e", 32)
	p := podObj("shop", "web", "n1", obj{"status": obj{"phase": "Running", "containerStatuses": []any{obj{"name": "app", "ready": false,
		"containerID": "containerd://" + id, "state": obj{"terminated": obj{"exitCode": 137, "reason": "Error"}}}}}})
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(p),
		"nodes/n1/containerd.log": strings.Join([]string{
			`2026-11-29T10:00:01+0000 n1 containerd[5]: time="2026-11-29T10:00:01Z" level=info msg="StopContainer for \"` + id + `\" with timeout 30 (s)"`,
			`2026-11-29T10:00:02+0000 n1 containerd[5]: time="2026-11-29T10:00:02Z" level=info msg="StopContainer for \"` + strings.Repeat("ab", 32) + `\""`,
			`2026-11-29T10:00:31+0000 n1 containerd[5]: time="2026-11-29T10:00:31Z" level=info msg="Kill container \"` + id + `\""`,
		}, "\n") + "\n",
	})
	n := viewOf(t, g, allKinds, func(v *analyze.View) int { return len(slices.Collect(v.ContainerRuns())[0].RuntimeLines) })
	if n != 2 {
		t.Errorf("runtime lines naming the container = %d, want 2", n)
	}
}

func TestPodWarningIsTheLatestWarningEvent(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(podObj("shop", "web", "n1", nil)),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "Unhealthy", "Readiness probe failed: 503", "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "web", "", "BackOff", "Back-off restarting failed container", "2026-11-29T10:00:09Z"),
		),
	})
	read := func(v *analyze.View) string {
		if e := v.PodWarning(v.Pod("shop", "web")); e != nil {
			return e.Reason
		}
		return ""
	}
	if got := viewOf(t, g, allKinds, read); got != "BackOff" {
		t.Errorf("pod warning = %q, want the latest, BackOff", got)
	}
	if got := viewOf(t, g, []analyze.Kind{analyze.Pods}, read); got != "" {
		t.Errorf("pod warning without events declared = %q, want none", got)
	}
}
