package redact

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"
)

// syntheticContainerLog is an application log: plain and JSON lines, with a credential
// in one line of about two hundred, as in a real service's output.
func syntheticContainerLog(size int, secrets bool) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		ts := fmt.Sprintf("2026-11-29T10:%02d:%02d.%06dZ", i/60%60, i%60, r.IntN(1000000))
		switch {
		case secrets && i%211 == 7:
			fmt.Fprintf(&b, "%s INFO connecting to postgres://app:s3cr3t-%d@db.shop.svc:5432/orders\n", ts, r.IntN(1000))
		case secrets && i%197 == 11:
			fmt.Fprintf(&b, "%s DEBUG upstream call headers Authorization: Bearer tok%08x%08x\n", ts, r.Uint32(), r.Uint32())
		case i%3 == 0:
			fmt.Fprintf(&b, `{"level":"info","ts":"%s","msg":"request done","method":"GET","path":"/api/v1/items/%d","status":200,"durationMs":%d,"requestId":"%08x-%04x"}`+"\n",
				ts, r.IntN(100000), r.IntN(900), r.Uint32(), r.IntN(65536))
		case i%7 == 1:
			fmt.Fprintf(&b, "%s WARN cache miss key=items:%d ttl=300s tokenizer=bert-base\n", ts, r.IntN(100000))
		default:
			fmt.Fprintf(&b, "%s INFO http request method=POST path=/api/v1/orders status=201 duration=%dms user_agent=\"Go-http-client/1.1\" bytes=%d\n",
				ts, r.IntN(900), r.IntN(20000))
		}
	}
	return b.Bytes()
}

// syntheticKubeletJournal is a kubelet journal as journalctl prints it, with the
// messages a kubelet writes while pods fail to start.
func syntheticKubeletJournal(size int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		head := fmt.Sprintf("Nov 29 10:%02d:%02d node-1 kubelet[1234]: ", i/60%60, i%60)
		klog := fmt.Sprintf("1129 10:%02d:%02d.%06d    1234 ", i/60%60, i%60, r.IntN(1000000))
		uid := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.IntN(65536), r.IntN(65536), r.IntN(65536), r.Uint64()&0xffffffffffff)
		pod := fmt.Sprintf("shop/web-7d9f8b6c4-%05d", r.IntN(100000))
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "%sI%skubelet.go:2468] \"SyncLoop (PLEG): event for pod\" pod=%q event={\"ID\":%q,\"Type\":\"ContainerStarted\",\"Data\":\"%016x%016x\"}\n", head, klog, pod, uid, r.Uint64(), r.Uint64())
		case 1:
			fmt.Fprintf(&b, "%sE%spod_workers.go:1301] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"app\\\" with ImagePullBackOff: \\\"Back-off pulling image \\\\\\\"registry.local/app:1.0\\\\\\\"\\\"\" pod=%q podUID=%q\n", head, klog, pod, uid)
		case 2:
			fmt.Fprintf(&b, "%sI%sreconciler_common.go:245] \"operationExecutor.MountVolume started for volume \\\"kube-api-access-x2x9z\\\" (UniqueName: \\\"kubernetes.io/projected/%s-kube-api-access-x2x9z\\\") pod \\\"web\\\" (UID: \\\"%s\\\") \" pod=%q\n", head, klog, uid, uid, pod)
		case 3:
			fmt.Fprintf(&b, "%sI%skubelet_pods.go:1106] \"Unable to retrieve pull secret, the image pull may not succeed.\" pod=%q secret=\"shop/regcred\" err=\"secret \\\"regcred\\\" not found\"\n", head, klog, pod)
		case 4:
			fmt.Fprintf(&b, "%sW%sprober.go:104] \"Probe failed\" probeType=\"Readiness\" pod=%q podUID=%q containerName=\"app\" probeResult=\"failure\" output=\"Get \\\"http://10.244.%d.%d:8080/healthz\\\": dial tcp 10.244.%d.%d:8080: connect: connection refused\"\n", head, klog, pod, uid, r.IntN(255), r.IntN(255), r.IntN(255), r.IntN(255))
		default:
			fmt.Fprintf(&b, "%sI%skuberuntime_manager.go:1062] \"Creating PodSandbox for pod\" pod=%q resourceVersion=\"%d\"\n", head, klog, pod, r.IntN(10000000))
		}
	}
	return b.Bytes()
}

// syntheticPodList is a per-namespace pods list as the collector writes it: indented
// JSON, with env vars, probes, annotations and status.
func syntheticPodList(size int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	var b bytes.Buffer
	b.WriteString("{\n  \"kind\": \"PodList\",\n  \"items\": [\n")
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `    {"metadata": {"name": "web-7d9f8b6c4-%05d", "namespace": "shop", "uid": "%08x-1b2c-4d5e-8f90-%012x", "resourceVersion": "%d",
      "labels": {"app": "web", "pod-template-hash": "7d9f8b6c4"},
      "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-29T10:00:00Z", "prometheus.io/scrape": "true"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8b6c4", "uid": "%08x-0000-4000-8000-000000000001", "controller": true}]},
     "spec": {"nodeName": "node-%d", "serviceAccountName": "web", "containers": [{"name": "app", "image": "registry.local/web:1.%d",
        "args": ["--port=8080", "--log-level=info"],
        "env": [{"name": "DB_HOST", "value": "db.shop.svc"}, {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}, {"name": "API_TOKEN", "value": "tok-%08x"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "volumeMounts": [{"name": "kube-api-access-%05d", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]}],
      "volumes": [{"name": "kube-api-access-%05d", "projected": {"sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]},
     "status": {"phase": "Running", "podIP": "10.244.%d.%d", "conditions": [{"type": "Ready", "status": "True"}],
      "containerStatuses": [{"name": "app", "ready": true, "restartCount": %d, "containerID": "containerd://%016x%016x"}]}}`,
			i, r.Uint32(), r.Uint64()&0xffffffffffff, r.IntN(1000000), r.Uint32(), i%20, i%9, r.Uint32(), i, i, i%250, r.IntN(250), r.IntN(5), r.Uint64(), r.Uint64())
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

// recordedPodList is a pods list as the bundle writer writes it (indented JSON), made
// of the Pods of the recorded bundles, repeated until it is size bytes long. Each copy
// of a Pod gets its own name, UIDs, IPs, container IDs, token volume suffix and
// resource version, as the Pods of a real namespace have, so it compresses like a real
// list and not like one Pod repeated. It returns nil when the recorded bundles are not
// there.
func recordedPodList(tb testing.TB, size int) []byte {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bundles", "*", "cluster-resources", "pods", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(files)
	var pods [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, it := range list.Items {
			pods = append(pods, it)
		}
	}
	if len(pods) == 0 {
		return nil
	}
	var (
		uid       = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
		ip        = regexp.MustCompile(`"(?:podIP|hostIP|ip)": "[0-9.]+"`)
		container = regexp.MustCompile(`://[0-9a-f]{64}`)
		token     = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
		version   = regexp.MustCompile(`"resourceVersion": "[0-9]+"`)
		name      = regexp.MustCompile(`"name": "[^"]*"`)
	)
	r := rand.New(rand.NewPCG(7, 8))
	const alnum = "bcdfghjklmnpqrstvwxz2456789"
	suffix := func() string {
		b := make([]byte, 5)
		for i := range b {
			b[i] = alnum[r.IntN(len(alnum))]
		}
		return string(b)
	}
	// same gives each distinct match in one Pod one new value.
	same := func(re *regexp.Regexp, pod []byte, fresh func(old []byte) []byte) []byte {
		seen := map[string][]byte{}
		return re.ReplaceAllFunc(pod, func(old []byte) []byte {
			v, ok := seen[string(old)]
			if !ok {
				v = fresh(old)
				seen[string(old)] = v
			}
			return v
		})
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"PodList\",\n  \"metadata\": {\n    \"resourceVersion\": \"574\"\n  },\n  \"items\": [\n")
	for i := 0; b.Len() < size; i++ {
		pod := pods[i%len(pods)]
		pod = same(uid, pod, func([]byte) []byte {
			return fmt.Appendf(nil, "%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), 0x8000|r.IntN(1<<14), r.Uint64()&(1<<48-1))
		})
		pod = same(ip, pod, func(old []byte) []byte {
			k := bytes.IndexByte(old, ':')
			return fmt.Appendf(nil, "%s \"10.%d.%d.%d\"", old[:k+1], 200+r.IntN(50), r.IntN(256), 1+r.IntN(254))
		})
		pod = same(container, pod, func([]byte) []byte {
			return fmt.Appendf(nil, "://%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
		})
		pod = same(token, pod, func([]byte) []byte { return []byte("kube-api-access-" + suffix()) })
		pod = version.ReplaceAllFunc(pod, func([]byte) []byte {
			return fmt.Appendf(nil, `"resourceVersion": "%d"`, 1000+r.IntN(10000000))
		})
		// The first name is the Pod's.
		if loc := name.FindIndex(pod); loc != nil {
			pod = append(append(append([]byte(nil), pod[:loc[1]-1]...), "-"+suffix()+`"`...), pod[loc[1]:]...)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("    ")
		b.Write(pod)
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

const benchSize = 4 << 20

func benchRedact(b *testing.B, name string, data []byte) {
	p, err := New(Options{Key: []byte("bench")})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Apply(name, data); err != nil {
			b.Fatal(err)
		}
	}
}

// benchGzip compresses the same data as the bundle writer does (gzip level 6), the
// other per-byte cost of writing a bundle, so the two throughputs can be compared.
func benchGzip(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	zw, err := gzip.NewWriterLevel(io.Discard, 6)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		zw.Reset(io.Discard)
		if _, err := zw.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactContainerLog(b *testing.B) {
	benchRedact(b, "cluster-resources/pods/logs/shop/web/app.log", syntheticContainerLog(benchSize, true))
}

func BenchmarkGzipContainerLog(b *testing.B) { benchGzip(b, syntheticContainerLog(benchSize, true)) }

func BenchmarkRedactKubeletJournal(b *testing.B) {
	benchRedact(b, "nodes/node-1/kubelet.log", syntheticKubeletJournal(benchSize))
}

func BenchmarkGzipKubeletJournal(b *testing.B) { benchGzip(b, syntheticKubeletJournal(benchSize)) }

func BenchmarkRedactPodList(b *testing.B) {
	benchRedact(b, "cluster-resources/pods/shop.json", syntheticPodList(benchSize))
}

func BenchmarkGzipPodList(b *testing.B) { benchGzip(b, syntheticPodList(benchSize)) }

func BenchmarkRedactRecordedPodList(b *testing.B) {
	data := recordedPodList(b, benchSize)
	if data == nil {
		b.Skip("no recorded bundles")
	}
	benchRedact(b, "cluster-resources/pods/shop.json", data)
}

// BenchmarkRedactVsGzip redacts each kind of data and compresses the same bytes with
// gzip -6 in turns, in one run, so both see the same machine and the same load. It
// reports the wall and the CPU time of each per op (the process's CPU time, so the
// collector's work counts, and other programs on a busy machine do not), and their
// ratio in CPU time where the system tells it; the goal is a ratio of at most 1,
// redaction costing no more than the compression every bundle file gets anyway.
func BenchmarkRedactVsGzip(b *testing.B) {
	cases := []struct {
		kind, file string
		data       []byte
	}{
		{"container-log", "cluster-resources/pods/logs/shop/web/app.log", syntheticContainerLog(benchSize, true)},
		{"kubelet-journal", "nodes/node-1/kubelet.log", syntheticKubeletJournal(benchSize)},
		{"pod-list", "cluster-resources/pods/shop.json", syntheticPodList(benchSize)},
	}
	if data := recordedPodList(b, benchSize); data != nil {
		cases = append(cases, struct {
			kind, file string
			data       []byte
		}{"recorded-pod-list", "cluster-resources/pods/shop.json", data})
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%s-%dMiB", c.kind, len(c.data)>>20), func(b *testing.B) {
			p, err := New(Options{Key: []byte("bench")})
			if err != nil {
				b.Fatal(err)
			}
			zw, err := gzip.NewWriterLevel(io.Discard, 6)
			if err != nil {
				b.Fatal(err)
			}
			var redact, compress, redactCPU, compressCPU time.Duration
			_, haveCPU := processCPU()
			n := 0
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				c0, _ := processCPU()
				t0 := time.Now()
				if _, err := p.Apply(c.file, c.data); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				c1, _ := processCPU()
				zw.Reset(io.Discard)
				if _, err := zw.Write(c.data); err != nil {
					b.Fatal(err)
				}
				if err := zw.Close(); err != nil {
					b.Fatal(err)
				}
				c2, _ := processCPU()
				redact += t1.Sub(t0)
				compress += time.Since(t1)
				redactCPU += c1 - c0
				compressCPU += c2 - c1
				n++
			}
			b.ReportMetric(float64(redact.Nanoseconds())/float64(n), "redact-ns/op")
			b.ReportMetric(float64(compress.Nanoseconds())/float64(n), "gzip6-ns/op")
			if !haveCPU || compressCPU <= 0 {
				b.ReportMetric(float64(redact)/float64(compress), "redact/gzip6")
				return
			}
			b.ReportMetric(float64(redactCPU.Nanoseconds())/float64(n), "redact-cpu-ns/op")
			b.ReportMetric(float64(compressCPU.Nanoseconds())/float64(n), "gzip6-cpu-ns/op")
			b.ReportMetric(float64(redactCPU)/float64(compressCPU), "redact/gzip6")
		})
	}
}

// BenchmarkKeywordScan is the one pass every file gets, whatever it holds.
func BenchmarkKeywordScan(b *testing.B) {
	p := testPolicy(b)
	data := syntheticKubeletJournal(benchSize)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		p.matcher.scan(data)
	}
}
