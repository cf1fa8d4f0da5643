package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podflow.dev/podflow/bundle"
)

const (
	sbOld   = "5e0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
	sbNew   = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
	ctrApp  = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
	ctrInit = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
)

var (
	tOld = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC).UnixNano()
	tNew = time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC).UnixNano()
)

func podLabels(name, uid string) map[string]string {
	return map[string]string{"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "shop", "io.kubernetes.pod.uid": uid}
}

func newFakeCRI() *fakeCRI {
	return &fakeCRI{
		sandboxes: []*runtimeapi.PodSandbox{
			{Id: sbOld, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web-0", Uid: "uid-0", Namespace: "shop"},
				State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: tOld, Labels: podLabels("web-0", "uid-0")},
			{Id: sbNew, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web-1", Uid: "uid-1", Namespace: "shop", Attempt: 2},
				State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: tNew, Labels: podLabels("web-1", "uid-1"), RuntimeHandler: "runc"},
			// crictl leaves out sandboxes without metadata.
			{Id: "0000000000000000000000000000000000000000000000000000000000000000", CreatedAt: tNew},
		},
		containers: []*runtimeapi.Container{
			{Id: ctrInit, PodSandboxId: sbNew, Metadata: &runtimeapi.ContainerMetadata{Name: "init"},
				Image: &runtimeapi.ImageSpec{Image: "registry.local/init:1"}, ImageRef: "sha256:aaaa", State: runtimeapi.ContainerState_CONTAINER_CREATED,
				CreatedAt: tOld, Labels: podLabels("web-1", "uid-1")},
			{Id: ctrApp, PodSandboxId: sbNew, Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 3},
				Image: &runtimeapi.ImageSpec{Image: "registry.local/app:2"}, ImageRef: "sha256:bbbb", State: runtimeapi.ContainerState_CONTAINER_EXITED,
				CreatedAt: tNew, Labels: podLabels("web-1", "uid-1")},
		},
		images: []*runtimeapi.Image{
			{Id: "sha256:bbbb", RepoTags: []string{"registry.local/app:2"}, RepoDigests: []string{"registry.local/app@sha256:b2"}, Size: 12345678},
			{Id: "sha256:aaaa", RepoTags: []string{"registry.local/init:1"}, Size: 42, Pinned: true},
		},
		podStatus: map[string]*runtimeapi.PodSandboxStatusResponse{
			sbNew: {
				Status: &runtimeapi.PodSandboxStatus{Id: sbNew, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web-1", Uid: "uid-1", Namespace: "shop", Attempt: 2},
					State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: tNew, Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.244.0.7"}},
				Info: map[string]string{"info": `{"pid":4242,"processStatus":"running","netNamespaceClosed":false,"image":"registry.k8s.io/pause:3.10"}`},
			},
			sbOld: {
				Status: &runtimeapi.PodSandboxStatus{Id: sbOld, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web-0", Uid: "uid-0", Namespace: "shop"},
					State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: tOld},
			},
			"0000000000000000000000000000000000000000000000000000000000000000": {
				Status: &runtimeapi.PodSandboxStatus{Id: "0000000000000000000000000000000000000000000000000000000000000000", CreatedAt: tNew},
			},
		},
		ctrStatus: map[string]*runtimeapi.ContainerStatusResponse{
			ctrApp: {
				Status: &runtimeapi.ContainerStatus{Id: ctrApp, Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 3},
					State: runtimeapi.ContainerState_CONTAINER_EXITED, CreatedAt: tNew, StartedAt: tNew + 1e9, FinishedAt: tNew + 2e9,
					ExitCode: 137, Reason: "OOMKilled", Image: &runtimeapi.ImageSpec{Image: "registry.local/app:2"}, ImageRef: "sha256:bbbb",
					Labels: podLabels("web-1", "uid-1")},
				Info: map[string]string{"info": `{"sandboxID":"` + sbNew + `","pid":0,"runtimeSpec":{"process":{"args":["/app"]}}}`, "note": `"plain"`},
			},
			ctrInit: {
				Status: &runtimeapi.ContainerStatus{Id: ctrInit, Metadata: &runtimeapi.ContainerMetadata{Name: "init"},
					State: runtimeapi.ContainerState_CONTAINER_CREATED, CreatedAt: tOld, StartedAt: tOld + 5e9,
					Image: &runtimeapi.ImageSpec{Image: "registry.local/init:1"}, ImageRef: "sha256:aaaa"},
			},
		},
	}
}

func readJSON(t *testing.T, b *bundle.Bundle, p string) map[string]any {
	t.Helper()
	data, err := b.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func TestCRIWritesCrictlShapes(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	f := newFakeCRI()
	serveCRI(t, opts.HostRoot, f)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	src := sourceOf(t, b.Manifest, SourceCRI)
	if src.Status != bundle.StatusOK || src.Error != "" {
		t.Fatalf("cri source = %+v", src)
	}
	node := "worker-1"
	wantFiles := []string{
		bundle.NodeCRIInspectPath(node, ctrApp), bundle.NodeCRIInspectPath(node, ctrInit),
		bundle.NodeCRIInspectPodPath(node, "0000000000000000000000000000000000000000000000000000000000000000"),
		bundle.NodeCRIInspectPodPath(node, sbOld), bundle.NodeCRIInspectPodPath(node, sbNew),
		bundle.NodePath(node, bundle.NodeCRIImages), bundle.NodePath(node, bundle.NodeCRIPods), bundle.NodePath(node, bundle.NodeCRIContainers),
	}
	slices.Sort(wantFiles)
	if !slices.Equal(src.Files, wantFiles) {
		t.Errorf("cri files = %q\nwant %q", src.Files, wantFiles)
	}

	// crictl pods -o json
	pods := readJSON(t, b, bundle.NodePath(node, bundle.NodeCRIPods))
	items := pods["items"].([]any)
	if len(keysOf(pods)) != 1 || len(items) != 2 {
		t.Fatalf("pods.json = %v, want only items, two sandboxes with metadata", pods)
	}
	first := items[0].(map[string]any)
	wantPodKeys := []string{"annotations", "createdAt", "id", "labels", "metadata", "runtimeHandler", "state"}
	if got := keysOf(first); !slices.Equal(got, wantPodKeys) {
		t.Errorf("pod keys = %q, want %q", got, wantPodKeys)
	}
	if first["id"] != sbNew || first["state"] != "SANDBOX_READY" || first["createdAt"] != "1795946400123456789" {
		t.Errorf("newest sandbox first, int64 as a string: %v", first)
	}
	md := first["metadata"].(map[string]any)
	if md["name"] != "web-1" || md["uid"] != "uid-1" || md["namespace"] != "shop" || md["attempt"] != float64(2) {
		t.Errorf("metadata = %v", md)
	}
	if items[1].(map[string]any)["metadata"].(map[string]any)["attempt"] != float64(0) {
		t.Errorf("zero attempt must be present, as crictl emits default values: %v", items[1])
	}

	// crictl ps -a -o json
	ps := readJSON(t, b, bundle.NodePath(node, bundle.NodeCRIContainers))
	ctrs := ps["containers"].([]any)
	if len(keysOf(ps)) != 1 || len(ctrs) != 2 {
		t.Fatalf("ps.json = %v", ps)
	}
	c0 := ctrs[0].(map[string]any)
	wantCtrKeys := []string{"annotations", "createdAt", "id", "image", "imageId", "imageRef", "labels", "metadata", "podSandboxId", "state"}
	if got := keysOf(c0); !slices.Equal(got, wantCtrKeys) {
		t.Errorf("container keys = %q, want %q", got, wantCtrKeys)
	}
	if c0["id"] != ctrApp || c0["state"] != "CONTAINER_EXITED" || c0["podSandboxId"] != sbNew ||
		c0["labels"].(map[string]any)["io.kubernetes.pod.uid"] != "uid-1" {
		t.Errorf("first container = %v", c0)
	}
	if len(f.listedCF) != 1 || f.listedCF[0].GetState() != nil {
		t.Errorf("ListContainers filter = %v, want no state filter (ps -a)", f.listedCF)
	}

	// crictl images -o json
	imgs := readJSON(t, b, bundle.NodePath(node, bundle.NodeCRIImages))["images"].([]any)
	i0 := imgs[0].(map[string]any)
	if len(imgs) != 2 || i0["id"] != "sha256:bbbb" || i0["size"] != "12345678" || i0["pinned"] != false {
		t.Errorf("images sorted by first tag, uint64 as a string: %v", imgs)
	}
	if i1 := imgs[1].(map[string]any); i1["pinned"] != true || len(i1["repoDigests"].([]any)) != 0 {
		t.Errorf("second image = %v", i1)
	}

	// crictl inspect
	insp := readJSON(t, b, bundle.NodeCRIInspectPath(node, ctrApp))
	if got := keysOf(insp); !slices.Equal(got, []string{"info", "note", "status"}) {
		t.Errorf("inspect keys = %q", got)
	}
	st := insp["status"].(map[string]any)
	if st["exitCode"] != float64(137) || st["reason"] != "OOMKilled" || st["state"] != "CONTAINER_EXITED" {
		t.Errorf("status = %v", st)
	}
	for field, want := range map[string]int64{"createdAt": tNew, "startedAt": tNew + 1e9, "finishedAt": tNew + 2e9} {
		at, err := time.Parse(time.RFC3339Nano, st[field].(string))
		if err != nil || at.UnixNano() != want {
			t.Errorf("status.%s = %v (%v), want the instant %d as RFC3339Nano", field, st[field], err, want)
		}
	}
	if v, ok := st["resources"]; !ok || v != nil {
		t.Errorf("unset message fields are null in crictl inspect, got resources=%v present=%v", v, ok)
	}
	info := insp["info"].(map[string]any)
	if info["sandboxID"] != sbNew || info["runtimeSpec"].(map[string]any)["process"] == nil {
		t.Errorf("info must be decoded JSON: %v", info)
	}
	if insp["note"] != "plain" {
		t.Errorf("non-object info values lose their quotes: %v", insp["note"])
	}
	created := readJSON(t, b, bundle.NodeCRIInspectPath(node, ctrInit))["status"].(map[string]any)
	if created["startedAt"] != "0001-01-01T00:00:00Z" || created["finishedAt"] != "0001-01-01T00:00:00Z" {
		t.Errorf("a created container shows zero start and finish times: %v", created)
	}

	// crictl inspectp
	inspp := readJSON(t, b, bundle.NodeCRIInspectPodPath(node, sbNew))
	if got := keysOf(inspp); !slices.Equal(got, []string{"info", "status"}) {
		t.Errorf("inspectp keys = %q", got)
	}
	if inspp["info"].(map[string]any)["pid"] != float64(4242) ||
		inspp["status"].(map[string]any)["network"].(map[string]any)["ip"] != "10.244.0.7" {
		t.Errorf("inspectp = %v", inspp)
	}
	for _, v := range f.verbose {
		if !v {
			t.Fatal("status calls must ask for verbose info, as crictl inspect does")
		}
	}

	coll := readCollection(t, b)
	if coll.Runtime == nil || coll.Runtime.RuntimeName != "containerd" || coll.Runtime.RuntimeVersion != "v2.2.0" {
		t.Errorf("runtime = %+v", coll.Runtime)
	}
}

func TestCRIOutputIsStable(t *testing.T) {
	f := newFakeCRI()
	a, err := podsJSON(f.sandboxes)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, err := podsJSON(f.sandboxes)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("pods.json differs between runs:\n%s\n%s", a, b)
		}
	}
	if !strings.HasPrefix(string(a), "{\n  \"items\": [\n    {\n") {
		t.Errorf("pods.json is not indented as crictl prints it:\n%s", a)
	}
}

func TestMissingSocketWritesPartialBundle(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{"journalctl -u kubelet": stdout(kubeletLines)}}
	opts := testOptions(t, r)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	src := sourceOf(t, b.Manifest, SourceCRI)
	if src.Status != bundle.StatusFailed || len(src.Files) != 0 {
		t.Fatalf("cri source = %+v, want failed", src)
	}
	sock := filepath.Join(opts.HostRoot, "run/containerd/containerd.sock")
	mustContain(t, "cri error", src.Error, "runtime endpoint unix:///run/containerd/containerd.sock: socket "+sock+" does not exist")
	if !slices.ContainsFunc(res.Incomplete(), func(s bundle.Source) bool { return s.Name == SourceCRI }) {
		t.Errorf("Incomplete() = %+v", res.Incomplete())
	}
	if !b.Has(bundle.NodePath("worker-1", bundle.NodeKubeletLog)) {
		t.Error("other sources must still be collected")
	}
	if b.Manifest.Type != "node" || b.Manifest.Scope.Node != "worker-1" {
		t.Errorf("manifest = %+v", b.Manifest)
	}
}

func TestCRIPartialWhenSomeCallsFail(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	f := newFakeCRI()
	f.failImages = true
	delete(f.ctrStatus, ctrInit)
	f.containers = append(f.containers, &runtimeapi.Container{Id: "../../etc", Metadata: &runtimeapi.ContainerMetadata{Name: "evil"}})
	serveCRI(t, opts.HostRoot, f)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	src := sourceOf(t, b.Manifest, SourceCRI)
	if src.Status != bundle.StatusPartial {
		t.Fatalf("cri source = %+v, want partial", src)
	}
	mustContain(t, "cri error", src.Error, "ImageService/ListImages: rpc error: code = Internal desc = image store is locked",
		`"../../etc": refusing an ID that is not a plain name`)
	if strings.Contains(src.Error, "NotFound") {
		t.Errorf("a container removed between list and inspect is not an error: %s", src.Error)
	}
	if b.Has(bundle.NodePath("worker-1", bundle.NodeCRIImages)) || b.Has(bundle.NodeCRIInspectPath("worker-1", ctrInit)) {
		t.Error("failed calls must not leave files")
	}
	if !b.Has(bundle.NodeCRIInspectPath("worker-1", ctrApp)) {
		t.Error("the containers that could be inspected must be")
	}
}

func TestCRIStepTimeoutIsPartial(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	opts.StepTimeout = 300 * time.Millisecond
	f := newFakeCRI()
	f.statusDelay = 100 * time.Millisecond
	for i := range 40 {
		id := strings.Repeat("0", 62) + string(rune('a'+i/26)) + string(rune('a'+i%26))
		f.containers = append(f.containers, &runtimeapi.Container{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "c"}})
		f.ctrStatus[id] = f.ctrStatus[ctrApp]
	}
	serveCRI(t, opts.HostRoot, f)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	src := sourceOf(t, openBundle(t, res.Target).Manifest, SourceCRI)
	if src.Status != bundle.StatusPartial || !strings.Contains(src.Error, "RuntimeService/ContainerStatus") {
		t.Fatalf("cri source = %+v, want partial with the unfinished inspections named", src)
	}
	if !strings.Contains(src.Error, "stopped after") && !strings.Contains(src.Error, "DeadlineExceeded") {
		t.Errorf("error does not say the step ran out of time: %s", src.Error)
	}
}

func TestEndpointSocket(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///run/containerd/containerd.sock": "/run/containerd/containerd.sock",
		"/var/run/crio/crio.sock":                "/var/run/crio/crio.sock",
	} {
		if got, err := endpointSocket(in); err != nil || got != want {
			t.Errorf("endpointSocket(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"tcp://127.0.0.1:1234", "unix://relative.sock", "run/x.sock"} {
		if _, err := endpointSocket(bad); err == nil {
			t.Errorf("endpointSocket(%q) accepted", bad)
		}
	}
}

func TestNotASocketIsReported(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	writeHostFile(t, opts.HostRoot, "run/containerd/containerd.sock", "")
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "cri error", sourceOf(t, res.Manifest, SourceCRI).Error, "is not a socket")
	if _, err := os.Stat(res.Target); err != nil {
		t.Fatal(err)
	}
}

func TestCRIContainerRemovedBeforeInspectIsNotAFailure(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	f := newFakeCRI()
	delete(f.ctrStatus, ctrInit) // listed, then removed by the kubelet before inspect
	serveCRI(t, opts.HostRoot, f)
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	if src := sourceOf(t, b.Manifest, SourceCRI); src.Status != bundle.StatusOK || src.Error != "" {
		t.Fatalf("cri source = %+v, want ok", src)
	}
	if b.Has(bundle.NodeCRIInspectPath("worker-1", ctrInit)) || !b.Has(bundle.NodeCRIInspectPath("worker-1", ctrApp)) {
		t.Fatal("want an inspect file for the live container only")
	}
}
