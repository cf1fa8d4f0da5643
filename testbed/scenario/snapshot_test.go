package scenario

import (
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

const podsJSON = `{"kind":"PodList","items":[
 {"metadata":{"name":"app","namespace":"demo","labels":{"app":"app"}},
  "spec":{"containers":[{"name":"app","image":"x","resources":{"limits":{"memory":"16Mi"}}}]},
  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"},{"type":"PodScheduled","status":"True"}],
   "containerStatuses":[{"name":"app","restartCount":3,"ready":false,"image":"x","imageID":"","state":{"waiting":{"reason":"CrashLoopBackOff"}},
    "lastState":{"terminated":{"reason":"OOMKilled","exitCode":137}}}]}},
 {"metadata":{"name":"web-1","namespace":"demo","labels":{"app":"web"}},
  "spec":{"containers":[{"name":"web","image":"x"}]},
  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],
   "containerStatuses":[{"name":"web","restartCount":0,"ready":true,"image":"x","imageID":"","state":{"running":{}}}]}}
]}`

const eventsJSON = `{"kind":"EventList","items":[
 {"metadata":{"name":"e1","namespace":"demo"},"involvedObject":{"kind":"Pod","name":"app"},"reason":"BackOff","type":"Warning","message":"Back-off restarting failed container app in pod app_demo(uid)"},
 {"metadata":{"name":"e2","namespace":"demo"},"involvedObject":{"kind":"ReplicaSet","name":"web-5d"},"reason":"FailedCreate","type":"Warning","message":"exceeded quota: compute"}
]}`

const slicesJSON = `{"kind":"EndpointSliceList","items":[
 {"metadata":{"name":"web-abc","namespace":"demo","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4",
  "endpoints":[{"addresses":["10.0.0.1"],"conditions":{"ready":true}},{"addresses":["10.0.0.2"],"conditions":{"ready":false}}]},
 {"metadata":{"name":"empty-abc","namespace":"demo","labels":{"kubernetes.io/service-name":"empty"}},"addressType":"IPv4","endpoints":null}
]}`

const psJSON = `{"containers":[
 {"id":"c0ffee0000000000000000000000000000000000000000000000000000000001","podSandboxId":"s1","metadata":{"name":"app","attempt":3},"state":"CONTAINER_EXITED",
  "labels":{"io.kubernetes.pod.namespace":"demo","io.kubernetes.pod.name":"app","io.kubernetes.container.name":"app"}},
 {"id":"other","metadata":{"name":"app"},"state":"CONTAINER_RUNNING","labels":{"io.kubernetes.pod.namespace":"elsewhere","io.kubernetes.pod.name":"app"}}
]}`

const inspectJSON = `{"status":{"id":"c0ffee","state":"CONTAINER_EXITED","exitCode":137,"reason":"OOMKilled"},"info":{}}`

func testBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	b, err := bundle.New("test", map[string][]byte{
		bundle.NamespacedResourcePath(bundle.KindPods, "demo"):                                              []byte(podsJSON),
		bundle.NamespacedResourcePath(bundle.KindEvents, "demo"):                                            []byte(eventsJSON),
		bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "demo"):                                    []byte(slicesJSON),
		bundle.NamespacedResourcePath(bundle.KindResourceQuotas, "demo"):                                    []byte(`{"items":[{"metadata":{"name":"compute"},"status":{"used":{"requests.cpu":"20m"}}}]}`),
		bundle.ClusterResourcePath(bundle.KindNodes):                                                        []byte(`{"items":[{"metadata":{"name":"n1","labels":{"podflow.test/pool":"gpu"}},"spec":{"taints":[]}}]}`),
		bundle.LogPath("demo", "app", "app", true):                                                          []byte("loading cache\nkilled\n"),
		bundle.NodePath("n1", bundle.NodeKubeletLog):                                                        []byte("I1129 kubelet.go:1 \"SyncLoop (PLEG)\" pod=\"demo/app\"\nE1129 other line\n"),
		bundle.NodePath("n1", bundle.NodeCRIContainers):                                                     []byte(psJSON),
		bundle.NodeCRIInspectPath("n1", "c0ffee0000000000000000000000000000000000000000000000000000000001"): []byte(inspectJSON),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func intp(i int) *int    { return &i }
func boolp(b bool) *bool { return &b }

func TestChecksAgainstABundle(t *testing.T) {
	s, err := FromBundle(testBundle(t), "demo")
	if err != nil {
		t.Fatal(err)
	}
	pass := []Check{
		{File: FileEvents, Reason: "BackOff", Message: "Back-off restarting failed container app"},
		{File: FileEvents, Pod: "app", Type: "Warning", Reason: "BackOff"},
		{File: FileEvents, Kind: "ReplicaSet", Reason: "FailedCreate", Message: "exceeded quota"},
		{File: FilePodStatus, Pod: "app", Container: "app", Waiting: "ImagePullBackOff|CrashLoopBackOff", LastTerminated: "OOMKilled", ExitCode: intp(137), MinRestarts: 3},
		{File: FilePodStatus, Selector: "app=web", Phase: "Running", Ready: boolp(true)},
		{File: FilePodStatus, Phase: "Running", Count: 2},
		{File: FilePodStatus, Pod: "app", Condition: "PodScheduled=True"},
		{File: FileEndpoints, Service: "web", ReadyEndpoints: intp(1), NotReadyEndpoints: intp(1)},
		{File: FileEndpoints, Service: "empty", ReadyEndpoints: intp(0), NotReadyEndpoints: intp(0)},
		{File: FileLog, Pod: "app", Container: "app", Previous: true, Contains: Strings{"loading", "cache"}},
		{File: FileKubeletJournal, Contains: Strings{"SyncLoop (PLEG)", `pod="demo/app"`}},
		{File: FileCRIContainer, Pod: "app", Container: "app", State: "CONTAINER_EXITED", Reason: "OOMKilled", ExitCode: intp(137)},
		{File: FileCRIContainer, Selector: "app=app", Container: "app"},
		{File: FileObject, Kind: bundle.KindResourceQuotas, Name: "compute", Field: `status.used.requests\.cpu`, Equals: "20m"},
		{File: FileObject, Kind: bundle.KindPods, Name: "app", Field: "spec.containers.0.resources.limits.memory", Equals: "16Mi"},
		{File: FileObject, Kind: bundle.KindPods, Selector: "app=web", Field: "spec.nodeSelector", Equals: "<none>"},
		{File: FileObject, Kind: bundle.KindNodes, Name: "n1", Field: `metadata.labels.podflow\.test/pool`, Equals: "gpu"},
		{File: FileObject, Kind: bundle.KindNodes, Name: "n1", Field: "spec.taints", Equals: "<none>"},
	}
	for _, c := range pass {
		if err := c.validate(false); err != nil {
			t.Errorf("invalid test check %s: %v", c, err)
		}
		if err := s.Eval(c); err != nil {
			t.Errorf("check should hold: %v", err)
		}
	}
	fail := map[string]Check{
		"event message":      {File: FileEvents, Reason: "BackOff", Message: "OOMKilled"},
		"event kind":         {File: FileEvents, Kind: "Deployment", Reason: "FailedCreate"},
		"waiting reason":     {File: FilePodStatus, Pod: "app", Waiting: "ErrImagePull"},
		"exit code":          {File: FilePodStatus, Pod: "app", ExitCode: intp(1)},
		"restarts":           {File: FilePodStatus, Pod: "app", MinRestarts: 4},
		"ready":              {File: FilePodStatus, Pod: "app", Ready: boolp(true)},
		"count":              {File: FilePodStatus, Phase: "Running", Count: 3},
		"missing container":  {File: FilePodStatus, Pod: "app", Container: "sidecar", MinRestarts: 1},
		"condition absent":   {File: FilePodStatus, Selector: "app=web", Condition: "PodScheduled=True"},
		"endpoints":          {File: FileEndpoints, Service: "web", ReadyEndpoints: intp(2)},
		"no slice":           {File: FileEndpoints, Service: "db", ReadyEndpoints: intp(0)},
		"current log absent": {File: FileLog, Pod: "app", Contains: Strings{"loading"}},
		"log line split":     {File: FileLog, Pod: "app", Previous: true, Contains: Strings{"loading", "killed"}},
		"journal":            {File: FileKubeletJournal, Contains: Strings{"OOMKilled"}},
		"no runtime journal": {File: FileRuntimeJournal, Contains: Strings{"x"}},
		"cri reason":         {File: FileCRIContainer, Container: "app", Reason: "Error"},
		"cri other ns":       {File: FileCRIContainer, Container: "app", State: "CONTAINER_RUNNING"},
		"object value":       {File: FileObject, Kind: bundle.KindResourceQuotas, Name: "compute", Field: "status.used.pods", Equals: "1"},
		"object missing":     {File: FileObject, Kind: bundle.KindPVCs, Name: "data", Field: "status.phase", Equals: "Pending"},
	}
	for name, c := range fail {
		err := s.Eval(c)
		if err == nil {
			t.Errorf("%s: check %s should fail", name, c)
			continue
		}
		if !strings.Contains(err.Error(), c.File) {
			t.Errorf("%s: the failure %q does not name the check", name, err)
		}
	}
	if err := s.EvalAll([]Check{pass[0], fail["journal"], fail["ready"]}); err == nil || strings.Count(err.Error(), "\n") < 1 {
		t.Errorf("EvalAll should report both failures, got %v", err)
	}
}

func TestLiveSnapshotRefusesBundleChecks(t *testing.T) {
	s := &Snapshot{Namespace: "demo"}
	if err := s.Eval(Check{File: FileLog, Contains: Strings{"x"}}); err == nil || !strings.Contains(err.Error(), "needs a bundle") {
		t.Errorf("a log check on a live snapshot: %v", err)
	}
	if err := s.Eval(Check{File: FileEvents, Reason: "Failed"}); err == nil {
		t.Error("an event check passed with no events")
	}
}

func TestFromBundleReportsCorruptLists(t *testing.T) {
	b, err := bundle.New("test", map[string][]byte{bundle.NamespacedResourcePath(bundle.KindPods, "demo"): []byte("{not json")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromBundle(b, "demo"); err == nil || !strings.Contains(err.Error(), "cluster-resources/pods/demo.json") {
		t.Errorf("a corrupt pod list: %v", err)
	}
	empty, err := bundle.New("test", map[string][]byte{"version.yaml": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromBundle(empty, "demo")
	if err != nil || len(s.Pods) != 0 {
		t.Errorf("a bundle without the namespace: %v, %d pods", err, len(s.Pods))
	}
}

func TestFieldPaths(t *testing.T) {
	if got := splitPath(`metadata.labels.app\.kubernetes\.io/name`); len(got) != 3 || got[2] != "app.kubernetes.io/name" {
		t.Errorf("splitPath: %q", got)
	}
	obj := map[string]any{"a": []any{map[string]any{"b": float64(2)}, true}, "s": ""}
	for path, want := range map[string]string{"a.0.b": "2", "a.1": "true", "a.2": "<none>", "a.x": "<none>", "s": "<none>", "a.0.b.c": "<none>"} {
		if got := fieldText(obj, path); got != want {
			t.Errorf("fieldText(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestLiveObjectChecks(t *testing.T) {
	s := &Snapshot{Namespace: "demo", Objects: map[string][]map[string]any{
		"deployments": {{"metadata": map[string]any{"name": "web"},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}}}}},
	}}
	pass := Check{File: FileObject, Kind: "deployments", Name: "web", Field: "status.conditions.0.reason", Equals: "ProgressDeadlineExceeded"}
	if err := s.Eval(pass); err != nil {
		t.Errorf("a live object check that holds: %v", err)
	}
	fail := pass
	fail.Equals = "NewReplicaSetAvailable"
	if err := s.Eval(fail); err == nil || !strings.Contains(err.Error(), "live deployments") {
		t.Errorf("a live object check that does not hold: %v", err)
	}
	if err := pass.validate(true); err != nil {
		t.Errorf("until may test a Deployment: %v", err)
	}
	pvc := Check{File: FileObject, Kind: "pvcs", Name: "data", Field: "status.phase", Equals: "Bound"}
	if err := pvc.validate(true); err == nil || !strings.Contains(err.Error(), "cannot be checked live") {
		t.Errorf("until on a kind the live snapshot does not list: %v", err)
	}
}
