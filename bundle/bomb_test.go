package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bombArchive writes a .tar.gz with a small member and then one whose header declares
// size bytes but which carries only the first body bytes (zeros, which compress to almost
// nothing) before the archive ends: a reader that trusted the stream instead of the
// header would allocate toward size, and one that read the body at all would fail on the
// truncation instead of refusing the member.
func bombArchive(t *testing.T, size, body int64) string {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "b/podflow-small.txt", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "b/cluster-resources/pods/ns.json", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n := int64(0); n < body; n += int64(len(zeros)) {
		if _, err := tw.Write(zeros[:min(int64(len(zeros)), body-n)]); err != nil {
			t.Fatal(err)
		}
	}
	tw.Flush()
	gz.Close() // no tar trailer: the member is cut short on purpose
	p := filepath.Join(t.TempDir(), "bomb.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// peakHeap samples the live heap every millisecond while f runs and returns the highest
// value, with the bytes allocated in all.
func peakHeap(f func()) (peak, allocated uint64) {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(samples)
	base, allocs0 := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	var max atomic.Uint64
	max.Store(base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > max.Load() {
				max.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	metrics.Read(samples)
	return max.Load() - min(base, max.Load()), samples[1].Value.Uint64() - allocs0
}

func TestBombRefusedFromItsHeaderBeforeItIsRead(t *testing.T) {
	const declared = 4 << 30 // over the default per-file limit of 1 GiB
	p := bombArchive(t, declared, 8<<20)
	var err error
	peak, allocated := peakHeap(func() { _, err = Open(p, DefaultLimits()) })
	var le *LimitError
	if !errors.As(err, &le) || le.Total || le.Entry != "b/cluster-resources/pods/ns.json" || le.Size != declared {
		t.Fatalf("Open = %v, want the per-file limit refusing the big member", err)
	}
	for _, want := range []string{"ns.json", fmt.Sprint(declared), "--max-file-size"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	const ceiling = 100 << 20
	if peak > ceiling || allocated > ceiling {
		t.Errorf("reading the bomb took %d MB of live heap and %d MB allocated, want under %d MB", peak>>20, allocated>>20, ceiling>>20)
	}
}

func TestTotalLimitCountsKeptEntriesFromTheHeader(t *testing.T) {
	mb := strings.Repeat("0", 1<<20)
	p := makeTarGz(t, []entry{
		{hdr: tar.Header{Name: "b/", Typeflag: tar.TypeDir}},
		{hdr: tar.Header{Name: "b/hostname", Typeflag: tar.TypeSymlink, Linkname: "sos_commands/host/hostname"}},
		{hdr: tar.Header{Name: "b/one"}, body: mb},
		{hdr: tar.Header{Name: "b/two"}, body: mb},
		{hdr: tar.Header{Name: "b/three"}, body: mb},
	})
	for name, open := range openers {
		limits := Limits{MaxFileSize: 1 << 20, MaxTotalSize: 5 << 19, SkipLinks: true} // 2.5 MiB
		_, err := open(p, limits)
		var le *LimitError
		if !errors.As(err, &le) || !le.Total || le.Entry != "b/three" || le.Size != 1<<20 || !strings.Contains(err.Error(), "--max-total-size") {
			t.Fatalf("%s = %v, want the total limit refusing b/three", name, err)
		}
		limits.MaxTotalSize = 3 << 20 // exactly what is kept: the directory and the skipped link count nothing
		b, err := open(p, limits)
		if err != nil {
			t.Fatalf("%s at the exact total: %v", name, err)
		}
		if b.Size() != 3<<20 || len(b.Skipped) != 1 {
			t.Fatalf("%s: size %d, skipped %v", name, b.Size(), b.Skipped)
		}
	}
}

func TestDirectoryFileOverTheLimitIsRefusedFromItsSize(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "cluster-resources", "pods", "big.json")
	if err := os.MkdirAll(filepath.Dir(big), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is all the reader may look at before refusing it.
	if err := f.Truncate(3 << 30); err != nil {
		t.Skipf("sparse files: %v", err)
	}
	f.Close()
	for name, open := range openers {
		var le *LimitError
		peak, _ := peakHeap(func() { _, err = open(dir, DefaultLimits()) })
		if !errors.As(err, &le) || le.Size != 3<<30 || le.Entry != "cluster-resources/pods/big.json" {
			t.Fatalf("%s = %v", name, err)
		}
		if peak > 100<<20 {
			t.Errorf("%s: live heap peaked at %d MB", name, peak>>20)
		}
	}
}

func TestScanVerifiesAndSummarizesLikeOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := Create(p, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{
		{"cluster-resources/pods/a.json", `{"items":[{"metadata":{"name":"x"}},{}]}`},
		{"cluster-resources/nodes.json", `{"items":[`},
		{"nodes/n1/kubelet.log", "line\n"},
	} {
		if err := w.WriteFile(f[0], []byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&Manifest{PodflowVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	opened, err := Open(p, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := Scan(p, DefaultLimits(), ScanOptions{CountItems: true})
	if err != nil {
		t.Fatal(err)
	}
	if scanned.Manifest == nil || scanned.Root == "" || scanned.Root != opened.Root || scanned.Size() != opened.Size() ||
		strings.Join(scanned.Names(), ",") != strings.Join(opened.Names(), ",") {
		t.Fatalf("scanned %q %d %v, opened %q %d %v", scanned.Root, scanned.Size(), scanned.Names(), opened.Root, opened.Size(), opened.Names())
	}
	if got := Verify(scanned); len(got) != 0 {
		t.Fatalf("Verify(scanned) = %v", got)
	}
	so, _ := json.Marshal(Summarize(opened))
	ss := Summarize(scanned)
	if got, _ := json.Marshal(ss); string(got) != string(so) || ss.Kinds["pods"] != 2 || len(ss.Unreadable) != 1 {
		t.Fatalf("Summarize: scanned %s, opened %s", got, so)
	}
	if _, err := scanned.ReadFile("nodes/n1/kubelet.log"); err == nil {
		t.Fatal("a scanned bundle keeps no file but the manifest")
	}
	// A file changed after writing is found from its digest alone.
	dir := t.TempDir()
	for _, n := range opened.Names() {
		data, _ := opened.ReadFile(n)
		if n == "nodes/n1/kubelet.log" {
			data = []byte("LINE\n")
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scanned, err = Scan(dir, DefaultLimits(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := Verify(scanned); len(got) != 1 || got[0].Kind != "checksum" || got[0].Path != "nodes/n1/kubelet.log" {
		t.Fatalf("Verify(changed) = %v", got)
	}
}

func TestScanEachHandsOnFilesUnderOpensNames(t *testing.T) {
	p := makeTarGz(t, []entry{{hdr: tar.Header{Name: "b/x/one"}, body: "1"}, {hdr: tar.Header{Name: "b/podflow.json"}, body: `{"formatVersion":"1.0"}`},
		{hdr: tar.Header{Name: "b/two"}, body: "22"}})
	var got []string
	b, err := Scan(p, DefaultLimits(), ScanOptions{Each: func(name string, data []byte) error {
		got = append(got, name+"="+string(data))
		return nil
	}})
	if err != nil || strings.Join(got, ",") != "x/one=1,two=22" || b.Root != "b" || b.Manifest == nil {
		t.Fatalf("ScanEach = %v, %v", got, err)
	}
	mixed := makeTarGz(t, []entry{{hdr: tar.Header{Name: "b/one"}, body: "1"}, {hdr: tar.Header{Name: "c/two"}, body: "2"}})
	if _, err := Scan(mixed, DefaultLimits(), ScanOptions{Each: func(string, []byte) error { return nil }}); !errors.Is(err, ErrMixedRoot) {
		t.Fatalf("mixed roots: %v", err)
	}
	flat := makeTarGz(t, []entry{{hdr: tar.Header{Name: "cluster-resources/a.json"}, body: "{}"}, {hdr: tar.Header{Name: "b/two"}, body: "2"}})
	got = nil
	if _, err := Scan(flat, DefaultLimits(), ScanOptions{Each: func(name string, _ []byte) error { got = append(got, name); return nil }}); err != nil ||
		strings.Join(got, ",") != "cluster-resources/a.json,b/two" {
		t.Fatalf("unrooted: %v, %v", got, err)
	}
}

// Every reader (OpenReadOnce for analyze, Open, Scan for verify, inspect and redact) refuses a member
// from its header, for the per-file and for the total limit, before reading its body.
func TestBombRefusedByEveryReaderFromItsHeader(t *testing.T) {
	const declared = 3 << 30
	p := bombArchive(t, declared, 8<<20)
	readers := map[string]func(Limits) error{
		"open":      func(l Limits) error { _, err := Open(p, l); return err },
		"read-once": func(l Limits) error { _, err := OpenReadOnce(context.Background(), p, l); return err },
		"scan":      func(l Limits) error { _, err := Scan(p, l, ScanOptions{CountItems: true}); return err },
		"scan-each": func(l Limits) error {
			_, err := Scan(p, l, ScanOptions{Each: func(string, []byte) error { return nil }})
			return err
		},
	}
	for _, c := range []struct {
		name   string
		limits Limits
		total  bool
		flag   string
	}{
		{"per-file", DefaultLimits(), false, "--max-file-size"},
		{"total", Limits{MaxFileSize: 4 << 30, MaxTotalSize: 2 << 30}, true, "--max-total-size"},
	} {
		for name, read := range readers {
			var err error
			peak, allocated := peakHeap(func() { err = read(c.limits) })
			var le *LimitError
			if !errors.As(err, &le) || le.Total != c.total || le.Size != declared {
				t.Fatalf("%s, %s: %v, want the %s limit refusing the big member", c.name, name, err, c.name)
			}
			for _, want := range []string{"cluster-resources/pods/ns.json", fmt.Sprint(declared), c.flag} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s, %s: error %q does not name %q", c.name, name, err, want)
				}
			}
			if peak > 100<<20 || allocated > 100<<20 {
				t.Errorf("%s, %s: %d MB of live heap and %d MB allocated, want under 100 MB", c.name, name, peak>>20, allocated>>20)
			}
		}
	}
}
