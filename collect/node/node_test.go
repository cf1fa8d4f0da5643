package node

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

func fullRunner() *fakeRunner {
	return &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl -u kubelet":    stdout(kubeletLines),
		"journalctl -u containerd": stdout("2026-11-29T10:00:00+0000 worker-1 containerd[500]: level=info msg=\"loading plugin\"\n"),
		"dmesg --time-format iso":  stdout(kernelLog),
	}}
}

const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
evictionHard:
  memory.available: 100Mi
`

func TestCollectWritesCompleteNodeBundle(t *testing.T) {
	opts := testOptions(t, fullRunner())
	opts.CommandLine = []string{"podflow", "collect", "node"}
	writeHostFile(t, opts.HostRoot, "var/lib/kubelet/config.yaml", kubeletConfig)
	serveCRI(t, opts.HostRoot, newFakeCRI())
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if inc := res.Incomplete(); len(inc) != 0 {
		t.Fatalf("Incomplete() = %+v", inc)
	}
	b := openBundle(t, res.Target)
	m := b.Manifest
	if m.Type != "node" || m.Scope.Node != "worker-1" || m.Scope.Since != "24h0m0s" || !m.CollectedAt.Equal(testClock) || m.PodflowVersion != "test" {
		t.Errorf("manifest = %+v", m)
	}
	var names []string
	for _, s := range m.Sources {
		names = append(names, s.Name+"="+s.Status)
	}
	want := []string{"kubelet-journal=ok", "runtime-journal=ok", "cri=ok", "kubelet-config=ok", "dmesg=ok"}
	if !slices.Equal(names, want) {
		t.Errorf("sources = %q, want %q", names, want)
	}
	for _, f := range []string{bundle.NodeKubeletLog, bundle.NodeRuntimeLog, bundle.NodeKubeletConfig, bundle.NodeDmesg,
		bundle.NodeCollection, bundle.NodeCRIPods, bundle.NodeCRIContainers, bundle.NodeCRIImages} {
		if !b.Has(bundle.NodePath("worker-1", f)) {
			t.Errorf("bundle lacks %s", f)
		}
	}
	cfg, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeKubeletConfig))
	if string(cfg) != kubeletConfig {
		t.Errorf("kubelet-config.yaml = %q", cfg)
	}
	coll := readCollection(t, b)
	if coll.Node != "worker-1" || coll.HostRoot != opts.HostRoot || !coll.Clock.Equal(testClock) || !coll.StartedAt.Equal(testClock) ||
		!coll.Since.Equal(testClock.Add(-24*time.Hour)) || !slices.Equal(coll.CommandLine, opts.CommandLine) {
		t.Errorf("collection = %+v", coll)
	}
	raw, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeCollection))
	mustContain(t, "collection.json", string(raw), `"clock": "2026-11-29T10:15:00Z"`, `"exitCode": 0`, `"source": "cri"`)
	for _, s := range coll.Steps {
		if s.Source == "" || (s.Command == nil && s.Read == "") {
			t.Errorf("step says neither what ran nor what was read: %+v", s)
		}
	}
}

func TestCollectMissingKubeletConfigIsSkipped(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	src := sourceOf(t, res.Manifest, SourceKubeletConfig)
	if src.Status != bundle.StatusSkipped {
		t.Fatalf("kubelet-config = %+v", src)
	}
	mustContain(t, "reason", src.Error, "no kubelet config file at "+filepath.Join(opts.HostRoot, DefaultKubeletConfig))
}

func TestCollectCancelledLeavesNoBundle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &cancellingRunner{cancel: cancel}
	opts := testOptions(t, r)
	_, err := Collect(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v, want cancellation", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(opts.Target))
	if len(entries) != 0 {
		t.Fatalf("cancelled collection left %v behind", entries)
	}
}

// cancellingRunner cancels the collection from inside the first command, as Ctrl-C would.
type cancellingRunner struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancellingRunner) Run(ctx context.Context, name string, args ...string) (Output, error) {
	c.once.Do(c.cancel)
	return Output{}, ctx.Err()
}

func TestCollectRefusesBadInput(t *testing.T) {
	for _, name := range []string{"", "..", "a/b", `a\b`} {
		opts := testOptions(t, &fakeRunner{})
		opts.NodeName = name
		if _, err := Collect(context.Background(), opts); err == nil {
			t.Errorf("node name %q accepted", name)
		}
	}
	opts := testOptions(t, &fakeRunner{})
	opts.HostRoot = filepath.Join(opts.HostRoot, "missing")
	if _, err := Collect(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "host root") {
		t.Errorf("missing host root: %v", err)
	}
	opts = testOptions(t, &fakeRunner{})
	if err := os.WriteFile(opts.Target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		opts.Force = force
		if _, err := Collect(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "replaces only a bundle it wrote") {
			t.Errorf("existing file podflow did not write (force %v): %v", force, err)
		}
	}
	if err := os.Remove(opts.Target); err != nil {
		t.Fatal(err)
	}
	opts.Force = false
	if _, err := Collect(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing output without force: %v", err)
	}
	opts.Force = true
	if _, err := Collect(context.Background(), opts); err != nil {
		t.Errorf("existing output with force: %v", err)
	}
}

// secretFilter stands in for the redaction policy: it masks one token and counts.
type secretFilter struct {
	mu sync.Mutex
	r  bundle.Redaction
}

func (f *secretFilter) Apply(name string, data []byte) ([]byte, error) {
	n := bytes.Count(data, []byte("s3cr3t"))
	f.mu.Lock()
	f.r.Add(name, "test-token", n)
	f.mu.Unlock()
	return bytes.ReplaceAll(data, []byte("s3cr3t"), []byte("[REDACTED]")), nil
}

// Redaction reports what was masked, as the policy's does.
func (f *secretFilter) Redaction() bundle.Redaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.r
}

func (f *secretFilter) RedactString(file, s string) string {
	out, _ := f.Apply(file, []byte(s))
	return string(out)
}

func TestCollectAppliesFilterAndRecordsRedaction(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"journalctl -u kubelet":    stdout("2026-11-29T10:00:00+0000 worker-1 kubelet[1]: pulling with token=s3cr3t\n"),
		"journalctl -u containerd": {out: Output{Stderr: []byte("cannot connect with password s3cr3t"), ExitCode: 1}},
	}}
	opts := testOptions(t, r)
	f := &secretFilter{r: bundle.Redaction{Policy: "test", Enabled: true}}
	opts.Filter = f
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeKubeletLog))
	if strings.Contains(string(got), "s3cr3t") || !strings.Contains(string(got), "token=[REDACTED]") {
		t.Fatalf("kubelet.log = %q", got)
	}
	rt := sourceOf(t, b.Manifest, SourceRuntimeJournal)
	if strings.Contains(rt.Error, "s3cr3t") || !strings.Contains(rt.Error, "password [REDACTED]") {
		t.Errorf("runtime source error = %q, want the stderr excerpt masked", rt.Error)
	}
	coll, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeCollection))
	if strings.Contains(string(coll), "s3cr3t") {
		t.Errorf("collection.json leaks the secret: %s", coll)
	}
	red := b.Manifest.Redaction
	if red.Policy != "test" || red.Total != 3 || red.ByFile["nodes/worker-1/kubelet.log"]["test-token"] != 1 || red.ByFile[bundle.ManifestPath]["test-token"] != 1 {
		t.Fatalf("redaction = %+v", red)
	}
}
