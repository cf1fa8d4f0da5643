package importer

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// aliasBomb is a Pod whose annotation list aliases one 64 KiB value n times: a few
// dozen KB on disk, n*64 KiB once its aliases are expanded.
func aliasBomb(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    big: &a \"")
	b.WriteString(strings.Repeat("x", 64<<10))
	b.WriteString("\"\nspec:\n  containers:\n  - name: app\n    image: app\n    args: [")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("*a")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestYAMLAliasBombRefused imports the alias bomb as a must-gather's pod list and as
// a pasted file: both are refused as unreadable, at a cost bounded by the file, not
// by what its aliases expand to (128 MiB here, 1 GiB in the report that found it).
func TestYAMLAliasBombRefused(t *testing.T) {
	bomb := aliasBomb(2000)
	mg := "must-gather.local.1/image/"
	t.Run("must-gather", func(t *testing.T) {
		files := map[string][]byte{
			mg + "timestamp":                                   []byte("2026-11-29 20:25:00 +0000 UTC m=+0.1\n"),
			mg + "namespaces/shop/core/pods.yaml":              bomb,
			mg + "cluster-scoped-resources/core/nodes/n1.yaml": []byte("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"),
		}
		var rep *Report
		alloc := allocatedBy(func() { _, rep = importDir(t, files, FormatAuto) })
		f := rep.File("image/namespaces/shop/core/pods.yaml")
		if f == nil || f.Status != StatusUnreadable || !strings.Contains(f.Reason, "aliases") {
			t.Errorf("bomb not refused: %+v", f)
		}
		if alloc > 48<<20 {
			t.Errorf("allocated %d bytes for a %d-byte file", alloc, len(bomb))
		}
	})
	t.Run("paste", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pod.yaml")
		if err := os.WriteFile(path, bomb, 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		alloc := allocatedBy(func() { _, _, err = Open(path, Options{}) })
		if alloc > 48<<20 {
			t.Errorf("allocated %d bytes for a %d-byte paste (err %v)", alloc, len(bomb), err)
		}
	})
}
