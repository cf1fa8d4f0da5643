package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// concurrentFiles writes n files from n goroutines at once, each a few blocks long
// with an uneven tail, so entries and their padding interleave in the archiver.
func concurrentFiles(t *testing.T, w *Writer, n int) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	for i := range n {
		want[LogPath("shop", fmt.Sprintf("web-%d", i), "app", false)] = bytes.Repeat([]byte(fmt.Sprintf("line %d of web-%d\n", i, i)), 10+i*37)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for name, data := range want {
		wg.Go(func() { errs <- w.WriteFile(name, data) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// The archive of concurrent writers is one tar stream in one gzip stream, readable by
// the standard library alone (as by tar and gzip), with every file whole.
func TestConcurrentWritesMakeOneStandardArchive(t *testing.T) {
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := Create(target, WriterOptions{Root: "podflow-test"})
	if err != nil {
		t.Fatal(err)
	}
	want := concurrentFiles(t, w, 64)
	if err := w.Close(&Manifest{Type: "cluster"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false) // one gzip member: a second one would show up as trailing data
	tr := tar.NewReader(zr)
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name, ok := strings.CutPrefix(hdr.Name, "podflow-test/")
		if !ok || hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o644 || hdr.Size != int64(len(data)) {
			t.Fatalf("entry %+v", hdr)
		}
		names = append(names, name)
		if w, ok := want[name]; ok && !bytes.Equal(data, w) {
			t.Errorf("%s: %d bytes read back, %d written", name, len(data), len(w))
		}
	}
	if rest, _ := io.ReadAll(zr); len(rest) != 0 {
		t.Errorf("%d bytes after the end of the tar stream", len(rest))
	}
	if extra, _ := io.ReadAll(f); len(extra) != 0 {
		t.Errorf("%d bytes after the gzip stream", len(extra))
	}
	if len(names) != len(want)+2 || names[len(names)-1] != ManifestPath || !slices.Contains(names, VersionMarkerPath) {
		t.Fatalf("entries %v", names)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p := Verify(b); len(p) != 0 {
		t.Fatalf("bundle does not verify: %v", p)
	}
}

// Scan sees every file as written, after the filter and the manifest included.
func TestScanSeesWhatIsWritten(t *testing.T) {
	for _, name := range []string{"b.tar.gz", "b.tar", "bdir"} {
		t.Run(name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen = map[string]string{}
			)
			target := filepath.Join(t.TempDir(), name)
			w, err := Create(target, WriterOptions{Filter: upper{}, Scan: func(name string, data []byte) {
				mu.Lock()
				defer mu.Unlock()
				seen[name] = string(data)
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteFile("a.txt", []byte("secret")); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(&Manifest{Type: "cluster"}); err != nil {
				t.Fatal(err)
			}
			b, err := Open(target, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"a.txt", VersionMarkerPath, ManifestPath} {
				data, err := b.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				if seen[n] != string(data) {
					t.Errorf("%s: scanned %q, written %q", n, seen[n], data)
				}
			}
			if seen["a.txt"] != "SECRET" {
				t.Errorf("scan saw %q before the filter", seen["a.txt"])
			}
		})
	}
}

// Aborting while writers are still at work neither hangs nor leaves anything, and the
// writes that come after fail.
func TestAbortDuringConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "b.tar.gz"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			_ = w.WriteFile(fmt.Sprintf("f%d", i), bytes.Repeat([]byte("x"), 100<<10)) // some fail: aborted
		})
	}
	w.Abort()
	wg.Wait()
	if err := w.WriteFile("late", []byte("x")); err == nil {
		t.Fatal("write after Abort succeeded")
	}
	if err := w.Close(&Manifest{}); err == nil {
		t.Fatal("Close after Abort succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("abort left %v", entries)
	}
}

// HandOver keeps the bytes it is given; WriteFile copies them, so a caller may reuse
// its buffer at once.
func TestWriteFileCopiesHandOverKeeps(t *testing.T) {
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := Create(target, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("first")
	if err := w.WriteFile("copied", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXX") // reused before the archiver may have written it
	if err := w.HandOver("kept", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Manifest{}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"copied": "first", "kept": "second"} {
		if got, err := b.ReadFile(name); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if p := Verify(b); len(p) != 0 {
		t.Fatalf("bundle does not verify: %v", p)
	}
}
