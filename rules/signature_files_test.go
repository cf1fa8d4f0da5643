package rules

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

const validUserSignature = `- id: vendor-widget-crash
  stage: runtime
  title: t
  component: widget
  printedBy: f
  patterns: ['widget crashed: (?P<why>\w+)']
  cause: '{why}'
  fix: f
  examples: {fires: ['widget crashed: oom'], quiet: [widget]}
`

// TestSignatureFilesReadLikeBundleFiles: a signature folder's links are not followed
// (one pointing out of the folder is refused, not read), a FIFO is refused without
// being opened, and a file over the cap is refused before it is read.
func TestSignatureFilesReadLikeBundleFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(outside, []byte(validUserSignature), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSignatures([]string{outside}); err != nil {
		t.Fatalf("a valid file named on the command line: %v", err)
	}

	linkDir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(linkDir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSignatures([]string{linkDir}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("link out of the folder: %v, want it refused", err)
	}

	fifoDir := t.TempDir()
	fifo := filepath.Join(fifoDir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifoDir, fifo} {
		if _, err := LoadSignatures([]string{p}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO via %s: %v, want it refused", p, err)
		}
	}

	bigDir := t.TempDir()
	big := filepath.Join(bigDir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	_ = f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = LoadSignatures([]string{bigDir})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("256 MiB file: %v, want it refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("refusing a 256 MiB file allocated %d bytes: it was read", alloc)
	}
}
