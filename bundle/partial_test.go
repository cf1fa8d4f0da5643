package bundle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A SIGKILLed writer leaves its hidden partial sibling; the next Create of the same target
// removes it, and leaves alone a partial of a live process and files of other naming.
func TestCreateRemovesStalePartials(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.tar.gz")

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	deadPID := dead.Process.Pid
	stale := filepath.Join(dir, ".out.tar.gz.partial-"+strconv.Itoa(deadPID)+"-123456")
	staleDir := filepath.Join(dir, ".out.tar.gz.partial-"+strconv.Itoa(deadPID)+"-654321")
	live := filepath.Join(dir, ".out.tar.gz.partial-"+strconv.Itoa(os.Getppid())+"-42")
	other := filepath.Join(dir, ".out.tar.gz.partial-notours")
	neighbour := filepath.Join(dir, ".other.tar.gz.partial-"+strconv.Itoa(deadPID)+"-1")
	for _, p := range []string{stale, live, other, neighbour} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(staleDir, "nodes"), 0o755); err != nil {
		t.Fatal(err)
	}

	w, err := Create(target, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("nodes/n1/kubelet.log", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Manifest{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, staleDir} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("stale partial %s still there (err %v)", filepath.Base(p), err)
		}
	}
	for _, p := range []string{live, other, neighbour, target} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
