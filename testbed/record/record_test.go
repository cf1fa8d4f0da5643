package record

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

const (
	uidA = "aaaaaaaa-1111-2222-3333-444444444444"
	uidB = "bbbbbbbb-1111-2222-3333-444444444444"
	ctrA = "c0a0000000000000000000000000000000000000000000000000000000000001"
	sbxA = "50a0000000000000000000000000000000000000000000000000000000000001"
	ctrB = "c0b0000000000000000000000000000000000000000000000000000000000002"
)

var kubeletLog = strings.Join([]string{
	`2026-01-01T00:00:00+0000 vm kubelet[1]: I0101 00:00:00.000000 1 kubelet.go:1] "Starting kubelet"`,
	`2026-01-01T00:00:01+0000 vm kubelet[1]: I0101 00:00:01.000000 1 kubelet.go:2] "SyncLoop ADD" pods=["shop/web"]`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]: I0101 00:00:02.000000 1 prober.go:3] "Probe failed" pod="shop/web" output=<`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]: 	cat: can't open '/tmp/healthy'`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]:  >`,
	`2026-01-01T00:00:03+0000 vm kubelet[1]: I0101 00:00:03.000000 1 prober.go:3] "Probe failed" pod="other/db" output=<`,
	`2026-01-01T00:00:03+0000 vm kubelet[1]: 	connection refused`,
	`2026-01-01T00:00:03+0000 vm kubelet[1]:  >`,
	`2026-01-01T00:00:04+0000 vm kubelet[1]: E0101 00:00:04.000000 1 configmap.go:1] Couldn't get configMap shop/web-config: configmap "web-config" not found`,
	`2026-01-01T00:00:05+0000 vm kubelet[1]: I0101 00:00:05.000000 1 kubelet.go:4] "SyncLoop ADD" pods=["shop/web-2","myshop/web"]`,
	`2026-01-01T00:00:06+0000 vm kubelet[1]: I0101 00:00:06.000000 1 kubelet.go:5] "Container started" containerID="` + ctrA + `"`,
	`2026-01-01T00:00:07+0000 vm kubelet[1]: I0101 00:00:07.000000 1 kubelet.go:5] "Container started" containerID="` + ctrB + `"`,
}, "\n") + "\n"

var wantKubeletLog = strings.Join([]string{
	`2026-01-01T00:00:01+0000 vm kubelet[1]: I0101 00:00:01.000000 1 kubelet.go:2] "SyncLoop ADD" pods=["shop/web"]`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]: I0101 00:00:02.000000 1 prober.go:3] "Probe failed" pod="shop/web" output=<`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]: 	cat: can't open '/tmp/healthy'`,
	`2026-01-01T00:00:02+0000 vm kubelet[1]:  >`,
	`2026-01-01T00:00:04+0000 vm kubelet[1]: E0101 00:00:04.000000 1 configmap.go:1] Couldn't get configMap shop/web-config: configmap "web-config" not found`,
	`2026-01-01T00:00:05+0000 vm kubelet[1]: I0101 00:00:05.000000 1 kubelet.go:4] "SyncLoop ADD" pods=["shop/web-2","myshop/web"]`,
	`2026-01-01T00:00:06+0000 vm kubelet[1]: I0101 00:00:06.000000 1 kubelet.go:5] "Container started" containerID="` + ctrA + `"`,
}, "\n") + "\n"

// The runtime logs pulls by image only: the pull that fails (an image no node has) is
// kept, the image every pod shares is not.
var runtimeLog = strings.Join([]string{
	`2026-01-01T00:00:00+0000 vm containerd[2]: time="2026-01-01T00:00:00Z" level=info msg="PullImage \"busybox:1\""`,
	`2026-01-01T00:00:01+0000 vm containerd[2]: time="2026-01-01T00:00:01Z" level=error msg="PullImage \"registry.invalid/shop/web:1\" failed" error="no such host"`,
}, "\n") + "\n"

var dmesg = strings.Join([]string{
	"[ 1.0] sh invoked oom-killer: gfp_mask=0xcc0, order=0, oom_score_adj=999",
	"[ 1.1] oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/kubepods/burstable/pod" + uidB + "/" + ctrB + ",task=sh",
	"[ 1.2] Memory cgroup out of memory: Killed process 10 (sh)",
	"[ 2.0] dd invoked oom-killer: gfp_mask=0xcc0, order=0, oom_score_adj=999",
	"[ 2.1] oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/kubepods/burstable/pod" + uidA + "/" + ctrA + ",task=dd",
	"[ 2.2] Memory cgroup out of memory: Killed process 20 (dd)",
}, "\n") + "\n"

func pods(ns, name, uid, ctr, image string) string {
	return `{"kind":"PodList","items":[{"metadata":{"name":"` + name + `","namespace":"` + ns + `","uid":"` + uid + `"},` +
		`"spec":{"containers":[{"name":"app","image":"` + image + `"}]},` +
		`"status":{"containerStatuses":[{"name":"app","containerID":"containerd://` + ctr + `","lastState":{}}]}}]}`
}

func sourceBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	m := bundle.Manifest{
		FormatVersion: bundle.FormatVersion, PodflowVersion: "test", Type: "merged",
		CollectedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Scope:       bundle.Scope{AllNamespaces: true},
		Sources: []bundle.Source{
			{Name: "pods", Status: bundle.StatusOK, Files: []string{"cluster-resources/pods/shop.json", "cluster-resources/pods/other.json"}},
			{Name: "logs/other/db/app", Status: bundle.StatusOK, Files: []string{"cluster-resources/pods/logs/other/db/app.log"}},
			{Name: "logs/other/db/init", Status: bundle.StatusSkipped, Error: "never started"},
			{Name: "logs/shop/web/init", Status: bundle.StatusSkipped, Error: "never started"},
			{Name: "kubelet-journal", Status: bundle.StatusOK, Files: []string{"nodes/n1/kubelet.log"}},
		},
		Redaction: bundle.Redaction{Policy: "default", Enabled: true, Total: 3,
			ByRule: map[string]int{"jwt": 3},
			ByFile: map[string]map[string]int{"nodes/n1/kubelet.log": {"jwt": 1}, "cluster-resources/pods/logs/other/db/app.log": {"jwt": 2}}},
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.New("src", map[string][]byte{
		bundle.ManifestPath: manifest,
		bundle.ClusterResourcePath(bundle.KindNamespaces):         []byte(`{"items":[{"metadata":{"name":"shop"}},{"metadata":{"name":"other"}}]}`),
		bundle.ClusterResourcePath(bundle.KindNodes):              []byte(`{"items":[{"metadata":{"name":"n1"},"status":{"images":[{"names":["busybox:1"]}]}}]}`),
		bundle.NodePath("n1", bundle.NodeRuntimeLog):              []byte(runtimeLog),
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"):    []byte(pods("shop", "web", uidA, ctrA, "registry.invalid/shop/web:1")),
		bundle.NamespacedResourcePath(bundle.KindPods, "other"):   []byte(pods("other", "db", uidB, ctrB, "busybox:1")),
		bundle.NamespacedResourcePath(bundle.KindEvents, "other"): []byte(`{"items":[]}`),
		bundle.LogPath("shop", "web", "app", false):               []byte("hello\n"),
		bundle.LogPath("other", "db", "app", false):               []byte("db\n"),
		bundle.NodePath("n1", bundle.NodeKubeletLog):              []byte(kubeletLog),
		bundle.NodePath("n1", bundle.NodeDmesg):                   []byte(dmesg),
		bundle.NodePath("n1", bundle.NodeKubeletConfig):           []byte("kind: KubeletConfiguration\n"),
		bundle.NodePath("n1", bundle.NodeCRIPods):                 []byte(`{"items":[{"id":"` + sbxA + `","labels":{"io.kubernetes.pod.namespace":"shop","io.kubernetes.pod.uid":"` + uidA + `"}},{"id":"sbxb","labels":{"io.kubernetes.pod.namespace":"other"}}]}`),
		bundle.NodePath("n1", bundle.NodeCRIContainers):           []byte(`{"containers":[{"id":"` + ctrA + `","podSandboxId":"` + sbxA + `","labels":{"io.kubernetes.pod.namespace":"shop"}},{"id":"` + ctrB + `","labels":{"io.kubernetes.pod.namespace":"other"}}]}`),
		bundle.NodeCRIInspectPath("n1", ctrA):                     []byte(`{"status":{}}`),
		bundle.NodeCRIInspectPath("n1", ctrB):                     []byte(`{"status":{}}`),
		bundle.NodeCRIInspectPodPath("n1", sbxA):                  []byte(`{"status":{}}`),
		bundle.NodeCRIInspectPodPath("n1", "sbxb"):                []byte(`{"status":{}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTrimKeepsOnlyTheNamespace(t *testing.T) {
	tr, err := Trim(sourceBundle(t), []string{"shop"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range tr.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{
		"cluster-resources/namespaces.json",
		"cluster-resources/nodes.json",
		"cluster-resources/pods/logs/shop/web/app.log",
		"cluster-resources/pods/shop.json",
		"nodes/n1/containerd.log",
		"nodes/n1/crictl/inspect/" + ctrA + ".json",
		"nodes/n1/crictl/inspectp/" + sbxA + ".json",
		"nodes/n1/crictl/pods.json",
		"nodes/n1/crictl/ps.json",
		"nodes/n1/dmesg.log",
		"nodes/n1/kubelet-config.yaml",
		"nodes/n1/kubelet.log",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("kept files:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if got := string(tr.Files["nodes/n1/kubelet.log"]); got != wantKubeletLog {
		t.Errorf("kubelet.log:\n%s\nwant:\n%s", got, wantKubeletLog)
	}
	if got, want := string(tr.Files["nodes/n1/containerd.log"]), strings.SplitAfter(runtimeLog, "\n")[1]; got != want {
		t.Errorf("containerd.log:\n%s\nwant:\n%s", got, want)
	}
	wantDmesg := strings.Join(strings.Split(dmesg, "\n")[3:], "\n")
	if got := string(tr.Files["nodes/n1/dmesg.log"]); got != wantDmesg {
		t.Errorf("dmesg.log:\n%s\nwant:\n%s", got, wantDmesg)
	}
	for file, want := range map[string]string{
		"cluster-resources/namespaces.json": `"name": "shop"`,
		"nodes/n1/crictl/pods.json":         sbxA,
		"nodes/n1/crictl/ps.json":           ctrA,
	} {
		got := string(tr.Files[file])
		if !strings.Contains(got, want) || strings.Contains(got, "other") {
			t.Errorf("%s kept the wrong items:\n%s", file, got)
		}
	}
	m := tr.Manifest
	if !reflect.DeepEqual(m.Scope.Namespaces, []string{"shop"}) || m.Scope.AllNamespaces {
		t.Errorf("scope %+v", m.Scope)
	}
	var sources []string
	for _, s := range m.Sources {
		sources = append(sources, s.Name+":"+strings.Join(s.Files, ","))
	}
	wantSources := []string{"pods:cluster-resources/pods/shop.json", "logs/shop/web/init:", "kubelet-journal:nodes/n1/kubelet.log"}
	if !reflect.DeepEqual(sources, wantSources) {
		t.Errorf("sources %q, want %q", sources, wantSources)
	}
	if m.Redaction.Total != 1 || m.Redaction.ByRule["jwt"] != 1 || len(m.Redaction.ByFile) != 1 || !m.Redaction.Enabled {
		t.Errorf("redaction %+v", m.Redaction)
	}
}

func TestWriteProducesAVerifiedBundle(t *testing.T) {
	tr, err := Trim(sourceBundle(t), []string{"shop", "other"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "fixture")
	for i := 0; i < 2; i++ { // the second write replaces the first
		if err := Write(dir, tr); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.Open(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if problems := bundle.Verify(b); len(problems) != 0 {
		t.Fatalf("the written fixture does not verify: %v", problems)
	}
	if b.Manifest.Type != "merged" || len(b.Manifest.Files) != len(tr.Files)+1 { // + version.yaml
		t.Errorf("manifest type %q with %d files for %d written", b.Manifest.Type, len(b.Manifest.Files), len(tr.Files))
	}
	if got := string(mustRead(t, b, "nodes/n1/kubelet.log")); !strings.Contains(got, `pod="other/db"`) || !strings.Contains(got, "connection refused") {
		t.Errorf("trimming to both namespaces dropped the other one's entries:\n%s", got)
	}
}

func TestTrimRefusesBadInput(t *testing.T) {
	noManifest, err := bundle.New("x", map[string][]byte{"version.yaml": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Trim(noManifest, []string{"shop"}); err == nil {
		t.Error("a bundle without a manifest was trimmed")
	}
	src := sourceBundle(t)
	files := map[string][]byte{}
	for _, n := range src.Names() {
		files[n] = mustRead(t, src, n)
	}
	files[bundle.NodePath("n1", bundle.NodeCRIContainers)] = []byte("{broken")
	bad, err := bundle.New("x", files)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Trim(bad, []string{"shop"}); err == nil || !strings.Contains(err.Error(), "crictl/ps.json") {
		t.Errorf("a corrupt ps.json: %v", err)
	}
}

func mustRead(t *testing.T, b *bundle.Bundle, name string) []byte {
	t.Helper()
	data, err := b.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
