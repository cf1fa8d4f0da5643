package analyze_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

const (
	benchNamespaces   = 10
	benchNodes        = 50
	benchPods         = 5000
	benchEventsPerPod = 10
	benchJournalBytes = 200 << 20
)

// largeBundle builds a cluster of benchPods pods on benchNodes nodes with
// benchEventsPerPod events each and benchJournalBytes of kubelet journal, with some
// pods failing in each way the rules know.
func largeBundle(tb testing.TB) *bundle.Bundle {
	tb.Helper()
	files := map[string][]byte{}
	base := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	var nodes []any
	for n := 0; n < benchNodes; n++ {
		nodes = append(nodes, nodeObj(fmt.Sprintf("node-%02d", n), "True"))
	}
	files["cluster-resources/nodes.json"] = mustJSON(tb, list(nodes...))
	perNS := benchPods / benchNamespaces
	for ns := 0; ns < benchNamespaces; ns++ {
		nsName := fmt.Sprintf("team-%02d", ns)
		var pods, events []any
		for i := 0; i < perNS; i++ {
			name := fmt.Sprintf("app-%02d-7d9f8b6c5d-%05d", i%20, i)
			node := fmt.Sprintf("node-%02d", (ns*perNS+i)%benchNodes)
			var p obj
			switch i % 50 {
			case 1:
				p = pullFailing(nsName, name, node, dnsError)
			case 2:
				p = podObj(nsName, name, "", obj{"status": obj{"phase": "Pending", "conditions": []any{obj{"type": "PodScheduled", "status": "False",
					"reason": "Unschedulable", "message": "0/50 nodes are available: 50 Insufficient cpu. preemption: 0/50 nodes are available: 50 No preemption victims found for incoming pod."}}}})
			default:
				p = podObj(nsName, name, node, obj{"status": obj{"phase": "Running", "podIP": "10.244.0.1", "conditions": []any{
					obj{"type": "PodScheduled", "status": "True"}, obj{"type": "Ready", "status": "True"}},
					"containerStatuses": []any{obj{"name": "app", "image": "registry.example/app:1", "imageID": "sha256:1", "ready": true,
						"restartCount": 0, "state": obj{"running": obj{"startedAt": "2026-11-29T09:00:00Z"}}}}}})
			}
			p["metadata"].(obj)["uid"] = fmt.Sprintf("uid-%s-%s", nsName, name)
			p["metadata"].(obj)["labels"] = obj{"app": fmt.Sprintf("app-%02d", i%20)}
			pods = append(pods, p)
			for e := 0; e < benchEventsPerPod; e++ {
				t := base.Add(time.Duration(i*benchEventsPerPod+e) * time.Second).Format(time.RFC3339)
				events = append(events, obj{"metadata": obj{"name": fmt.Sprintf("%s.%d", name, e), "namespace": nsName},
					"involvedObject": obj{"kind": "Pod", "namespace": nsName, "name": name, "uid": p["metadata"].(obj)["uid"], "fieldPath": "spec.containers{app}"},
					"reason":         []string{"Scheduled", "Pulling", "Pulled", "Created", "Started"}[e%5], "message": "Successfully did step " + fmt.Sprint(e),
					"type": "Normal", "count": 1, "firstTimestamp": t, "lastTimestamp": t, "source": obj{"component": "kubelet", "host": node}})
			}
		}
		var services []any
		for s := 0; s < 20; s++ {
			services = append(services, obj{"metadata": obj{"name": fmt.Sprintf("app-%02d", s), "namespace": nsName},
				"spec": obj{"selector": obj{"app": fmt.Sprintf("app-%02d", s)}}})
		}
		files["cluster-resources/pods/"+nsName+".json"] = mustJSON(tb, list(pods...))
		files["cluster-resources/events/"+nsName+".json"] = mustJSON(tb, list(events...))
		files["cluster-resources/services/"+nsName+".json"] = mustJSON(tb, list(services...))
	}
	perNode := benchJournalBytes / benchNodes
	for n := 0; n < benchNodes; n++ {
		node := fmt.Sprintf("node-%02d", n)
		var buf bytes.Buffer
		buf.Grow(perNode + 512)
		for i := 0; buf.Len() < perNode; i++ {
			t := base.Add(time.Duration(i) * 10 * time.Millisecond)
			ns, pod := fmt.Sprintf("team-%02d", i%benchNamespaces), fmt.Sprintf("app-%02d-7d9f8b6c5d-%05d", i%20, (i*benchNodes+n)%perNS)
			switch i % 4 {
			case 0:
				fmt.Fprintf(&buf, "%s %s kubelet[812]: I%s     812 kubelet.go:2546] \"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"%s/%s\"\n",
					t.Format("2006-01-02T15:04:05-0700"), node, t.Format("0102 15:04:05.000000"), ns, pod)
			case 1:
				fmt.Fprintf(&buf, "%s %s kubelet[812]: E%s     812 pod_workers.go:1338] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"app\\\" with CrashLoopBackOff: \\\"back-off 10s restarting failed container\\\"\" pod=\"%s/%s\" podUID=\"uid-%s-%s\"\n",
					t.Format("2006-01-02T15:04:05-0700"), node, t.Format("0102 15:04:05.000000"), ns, pod, ns, pod)
			case 2:
				fmt.Fprintf(&buf, "%s %s kubelet[812]: I%s     812 reconciler_common.go:251] \"operationExecutor.VerifyControllerAttachedVolume started for volume \\\"kube-api-access-x\\\"\" pod=\"%s/%s\"\n",
					t.Format("2006-01-02T15:04:05-0700"), node, t.Format("0102 15:04:05.000000"), ns, pod)
			default:
				fmt.Fprintf(&buf, "%s %s kubelet[812]: I%s     812 kubelet_node_status.go:75] \"Attempting to register node\" node=\"%s\"\n",
					t.Format("2006-01-02T15:04:05-0700"), node, t.Format("0102 15:04:05.000000"), node)
			}
		}
		files[bundle.NodePath(node, bundle.NodeKubeletLog)] = buf.Bytes()
	}
	b, err := bundle.New("large", files)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustJSON(tb testing.TB, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// heapPeak samples the live heap while an iteration runs; runtime/metrics reads are
// cheap and do not stop the world.
type heapPeak struct {
	stop chan struct{}
	done sync.WaitGroup
	max  atomic.Uint64
}

func startHeapPeak() *heapPeak {
	h := &heapPeak{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > h.max.Load() {
				h.max.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapPeak) end() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.max.Load()
}

func BenchmarkAnalyzeLarge(b *testing.B) {
	bd := largeBundle(b)
	all := rules.All()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := startHeapPeak()
	b.ReportAllocs()
	b.ResetTimer()
	var rep *analyze.Report
	for b.Loop() {
		g := analyze.Load([]*bundle.Bundle{bd}, nil)
		rep = analyze.Run(g, all, analyze.Options{})
	}
	b.StopTimer()
	max := peak.end()
	b.ReportMetric(float64(max)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(max-min(max, before.HeapAlloc))/(1<<20), "peak-above-bundle-MB")
	b.ReportMetric(float64(bd.Size())/(1<<20), "bundle-MB")
	if rep == nil || len(rep.Findings) == 0 || len(rep.Warnings) != 0 {
		b.Fatalf("the large bundle should load cleanly and yield findings: %v", rep.Warnings)
	}
}

// BenchmarkOpenAndAnalyzeLarge measures what a user waits for: the large bundle read from
// its .tar.gz, loaded and analyzed. It also reports how long plain gzip decompression of
// the same archive takes (gunzip-s), the floor any reader of the archive pays.
func BenchmarkOpenAndAnalyzeLarge(b *testing.B) {
	archive := filepath.Join(b.TempDir(), "large.tar.gz")
	writeArchive(b, largeBundle(b), archive)
	st, err := os.Stat(archive)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	gunzip(b, archive)
	gunzipSeconds := time.Since(t0).Seconds()
	all := rules.All()
	runtime.GC()
	peak := startHeapPeak()
	b.ReportAllocs()
	b.ResetTimer()
	var rep *analyze.Report
	for b.Loop() {
		bd, err := bundle.Open(archive, bundle.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		rep = analyze.Run(analyze.Load([]*bundle.Bundle{bd}, nil), all, analyze.Options{})
	}
	b.StopTimer()
	b.ReportMetric(float64(peak.end())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(st.Size())/(1<<20), "archive-MB")
	b.ReportMetric(gunzipSeconds, "gunzip-s")
	if rep == nil || len(rep.Findings) == 0 {
		b.Fatal("the large bundle should yield findings")
	}
}

func writeArchive(tb testing.TB, bd *bundle.Bundle, target string) {
	tb.Helper()
	w, err := bundle.Create(target, bundle.WriterOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range bd.Names() {
		data, _ := bd.ReadFile(name) // listed by Names, so present
		if err := w.WriteFile(name, data); err != nil {
			w.Abort()
			tb.Fatal(err)
		}
	}
	if err := w.Close(&bundle.Manifest{PodflowVersion: "bench"}); err != nil {
		tb.Fatal(err)
	}
}

func gunzip(tb testing.TB, archive string) {
	tb.Helper()
	f, err := os.Open(archive)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		tb.Fatal(err)
	}
}
