package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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

// TestSignaturesCostBounded: patterns that are short but compile to large programs
// are refused one by one, and many signatures of moderate programs are refused once
// their sum passes the budget, before the rest are compiled.
func TestSignaturesCostBounded(t *testing.T) {
	sig := func(id, pattern string) string {
		return "- id: " + id + "\n  stage: runtime\n  title: t\n  component: c\n  printedBy: f\n  patterns: ['" + pattern +
			"']\n  cause: c\n  fix: f\n  examples: {fires: ['" + strings.Repeat("ab", 1) + "'], quiet: [zz]}\n"
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(sig("big-one", `a(?:b|c){0,999}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSignatures([]string{dir}); err == nil || !strings.Contains(err.Error(), "instructions") {
		t.Errorf("one pattern of a large program: %v, want it refused", err)
	}
	var many strings.Builder
	for i := range 200 {
		many.WriteString(sig("moderate-"+strings.Repeat("x", 1)+itoa3(i), `a(?:b|c){0,300}`))
	}
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadSignatures([]string{dir})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "instructions") {
		t.Errorf("200 signatures of moderate programs: %v, want the set refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
		t.Errorf("refusing the set allocated %d bytes", alloc)
	}
}

func itoa3(i int) string {
	return string(rune('a'+i/26/26%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
}

// A cause names a value outside an optional part only where every pattern captures it:
// the node, pod, namespace or container of a pasted line, or the volume a wrapper
// prints, are often not there, and the cause would read "on node <node>".
func TestCausesNameOnlyWhatTheyHave(t *testing.T) {
	optional := regexp.MustCompile(`\[\[.*?\]\]`)
	placeholder := regexp.MustCompile(`\{([a-zA-Z|]+)\}`)
	for _, s := range loadSignatures(t) {
		cause := optional.ReplaceAllString(s.Cause, "")
		for _, m := range placeholder.FindAllStringSubmatch(cause, -1) {
			name := m[1]
			for _, p := range s.Patterns {
				names := regexp.MustCompile(p).SubexpNames()
				if !slices.ContainsFunc(strings.Split(name, "|"), func(n string) bool { return slices.Contains(names, n) }) {
					t.Errorf("%s: the cause names {%s} outside [[ ]], and pattern %q does not capture it", s.ID, name, p)
				}
			}
		}
	}
}
