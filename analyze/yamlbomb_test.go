package analyze_test

import (
	"runtime"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// TestKubeletConfigAliasBomb loads a bundle whose kubelet-config.yaml aliases one
// 64 KiB value 2,000 times: it is a load warning, at a cost bounded by the file.
func TestKubeletConfigAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: KubeletConfiguration\nbig: &a \"" + strings.Repeat("x", 64<<10) + "\"\nlist: [")
	b.WriteString(strings.TrimSuffix(strings.Repeat("*a,", 2000), ","))
	b.WriteString("]\n")
	files := map[string]any{bundle.NodePath("n1", bundle.NodeKubeletConfig): b.String()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g := load(t, files)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Errorf("allocated %d bytes for a %d-byte kubelet config", alloc, b.Len())
	}
	warned := false
	for _, w := range g.Warnings() {
		warned = warned || strings.Contains(w.String(), "aliases")
	}
	if !warned {
		t.Errorf("no warning about the aliases: %v", g.Warnings())
	}
}

func TestSignatureFileAliasBomb(t *testing.T) {
	data := "- id: big\n  stage: image\n  title: &a \"" + strings.Repeat("x", 64<<10) + "\"\n  patterns: [" +
		strings.TrimSuffix(strings.Repeat("*a,", 2000), ",") + "]\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := analyze.ParseSignatures("sigs.yaml", []byte(data))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("alias bomb in a signature file: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
}
