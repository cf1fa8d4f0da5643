//go:build unix

package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "input")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// A FIFO nobody writes to: the open waits for a writer, and a cancelled context (a
// Ctrl-C) must end that wait instead of being ignored.
func TestOpenStreamCancelledWhileNoWriter(t *testing.T) {
	p := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		s, err := OpenStream(ctx, p)
		if s != nil {
			_ = s.Close()
		}
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenStream after cancel: %v, want context.Canceled", err)
	}
	// Opening the whole bundle goes the same way.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := OpenReadOnce(ctx2, p, Limits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenReadOnce of a FIFO without writer after cancel: %v, want context.Canceled", err)
	}
}

// A writer that sent part of its input and went quiet: the read waiting for more ends
// with the context.
func TestStreamReadCancelledWhileWriterQuiet(t *testing.T) {
	p := mkfifo(t)
	w := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			w <- nil
			return
		}
		_, _ = f.Write([]byte("partial"))
		w <- f
	}()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := OpenStream(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writer := <-w
	if writer == nil {
		t.Fatal("writer could not open the FIFO")
	}
	defer writer.Close()
	got := make([]byte, len("partial"))
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "partial" {
		t.Fatalf("read %q, %v", got, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 1))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
}

// An archive written into a FIFO is read as it comes, as from a file.
func TestOpenArchiveFromFIFO(t *testing.T) {
	p := mkfifo(t)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	body := []byte(`{"kind":"PodList","items":[]}`)
	if err := tw.WriteHeader(&tar.Header{Name: "cluster-resources/pods/default.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(body)
	_ = tw.Close()
	_ = zw.Close()
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.Write(buf.Bytes())
		_ = f.Close()
	}()
	b, err := OpenReadOnce(context.Background(), p, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadFile("cluster-resources/pods/default.json")
	if err != nil || !bytes.Equal(data, body) {
		t.Fatalf("read back %q, %v", data, err)
	}
}
