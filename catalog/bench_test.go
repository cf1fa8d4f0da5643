package catalog

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used: on a loaded machine the
// wall time per op says more about the other processes than about Read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if n := b.N; n > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
	}
}

// benchLines are 10,000 lines of kubelet, containerd and CNI journals and event rows from
// the incident corpus, repeated as needed.
func benchLines(b *testing.B) []string {
	b.Helper()
	files, _ := filepath.Glob("../testdata/incidents/*/*")
	var lines []string
	for _, f := range files {
		base := filepath.Base(f)
		if base == "case.yaml" {
			continue
		}
		if !strings.Contains(base, "journal") && !strings.Contains(base, "kubelet") && !strings.Contains(base, "containerd") &&
			!strings.Contains(base, "events") && !strings.Contains(base, "describe") && !strings.Contains(base, "log") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				lines = append(lines, l)
			}
		}
		fh.Close()
	}
	if len(lines) == 0 {
		b.Skip("no incident corpus lines")
	}
	out := make([]string, 0, 10000)
	for len(out) < 10000 {
		out = append(out, lines[len(out)%len(lines)])
	}
	return out
}

// BenchmarkRead reads 10k lines through the catalog (after the first pass compiled the
// matchers it needs).
func BenchmarkRead(b *testing.B) {
	lines := benchLines(b)
	c := Default()
	for _, l := range lines {
		c.Read(l)
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		for _, l := range lines {
			c.Read(l)
		}
	}
	reportCPU(b, start)
}

// BenchmarkFloorLiteralIndex is the floor under Read: the Aho-Corasick pass alone over the
// same lines.
func BenchmarkFloorLiteralIndex(b *testing.B) {
	lines := benchLines(b)
	c := Default()
	c.Candidates("warm")
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		for _, l := range lines {
			c.Candidates(l)
		}
	}
	reportCPU(b, start)
}

// BenchmarkLayers is the splitting of the same lines into layers alone.
func BenchmarkLayers(b *testing.B) {
	lines := benchLines(b)
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			Layers(l)
		}
	}
}

// BenchmarkLoad is loading the embedded catalog and building its index, once per process.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		c, err := Load(strings.NewReader(string(embedded)))
		if err != nil {
			b.Fatal(err)
		}
		c.index()
	}
}
