package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// forceOver runs Create with --force over target and reports the error of Create or
// of Close.
func forceOver(target string, inputs ...string) error {
	w, err := Create(target, WriterOptions{Force: true, Inputs: inputs})
	if err != nil {
		return err
	}
	if err := w.WriteFile("a.txt", []byte("new\n")); err != nil {
		w.Abort()
		return err
	}
	return w.Close(&Manifest{})
}

func wantNotReplaceable(t *testing.T, what, target string, inputs ...string) {
	t.Helper()
	var nr *NotReplaceableError
	for _, force := range []bool{false, true} {
		var err error
		if force {
			err = forceOver(target, inputs...)
		} else {
			_, err = Create(target, WriterOptions{Inputs: inputs})
		}
		if !errors.As(err, &nr) {
			t.Errorf("%s (force %v): %v, want NotReplaceableError", what, force, err)
			continue
		}
		if strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: error recommends --force: %v", what, err)
		}
	}
}

func TestForceReplacesOnlyWhatPodflowWrote(t *testing.T) {
	dir := t.TempDir()

	// A folder that is not a bundle keeps its files.
	notBundle := filepath.Join(dir, "photos")
	if err := os.MkdirAll(notBundle, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notBundle, "keep.jpg"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantNotReplaceable(t, "folder that is not a bundle", notBundle)
	if _, err := os.Stat(filepath.Join(notBundle, "keep.jpg")); err != nil {
		t.Fatalf("folder's file gone: %v", err)
	}

	// A bundle folder the user added a file to.
	added := filepath.Join(dir, "added")
	writeSample(t, added)
	if err := os.WriteFile(filepath.Join(added, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantNotReplaceable(t, "bundle folder holding a file of the user's", added)

	// A file that is not a bundle archive, under an archive's name and another.
	for _, name := range []string{"data.tar.gz", "report.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		wantNotReplaceable(t, name, p)
		if data, _ := os.ReadFile(p); string(data) != "keep me" {
			t.Fatalf("%s changed", name)
		}
	}

	// A link, even to a bundle, and a FIFO.
	real := filepath.Join(dir, "real.tar.gz")
	writeSample(t, real)
	link := filepath.Join(dir, "link.tar.gz")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	wantNotReplaceable(t, "link", link)
	fifo := filepath.Join(dir, "fifo.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	wantNotReplaceable(t, "FIFO", fifo)
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("FIFO gone: %v", err)
	}

	// An input of the run, and a folder holding one.
	wantNotReplaceable(t, "the input", real, real)
	holder := filepath.Join(dir, "holder")
	writeSample(t, holder)
	wantNotReplaceable(t, "a bundle folder holding the input", holder, filepath.Join(holder, "a.txt"))

	// The working directory's folder.
	cwdBundle := filepath.Join(dir, "cwd")
	writeSample(t, cwdBundle)
	t.Chdir(cwdBundle)
	wantNotReplaceable(t, "the working directory", cwdBundle)
}

func TestForceReplacesOwnBundles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b", "b.tar.gz", "b.tar"} {
		target := filepath.Join(dir, name)
		writeSample(t, target)
		if _, err := Create(target, WriterOptions{}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s without --force: %v, want ErrExists advising --force", name, err)
		}
		if err := forceOver(target); err != nil {
			t.Errorf("%s with --force: %v", name, err)
		}
	}
}
