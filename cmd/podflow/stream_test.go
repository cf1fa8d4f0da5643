//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// A FIFO nobody writes to yet: the first Ctrl-C or SIGTERM ends the wait for a writer
// with the signal's status, instead of being ignored.
func TestSignalEndsTheWaitForAFIFOWriter(t *testing.T) {
	bin := buildPodflow(t)
	dir := t.TempDir()
	for _, tc := range []interruptCase{
		{name: "analyze on SIGINT", args: []string{"analyze", mkfifo(t, dir, "int")}, step: "stream", signal: syscall.SIGINT},
		{name: "analyze on SIGTERM", args: []string{"analyze", mkfifo(t, dir, "term"), "-o", "json"}, step: "stream", signal: syscall.SIGTERM},
		{name: "verify on SIGINT", args: []string{"verify", mkfifo(t, dir, "verify")}, step: "stream", signal: syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) { runInterrupted(t, bin, tc) })
	}
}

// Pasted text written into a FIFO (what `podflow analyze <(kubectl describe pod x)`
// reads) is read as a stream, like standard input.
func TestAnalyzeTextFromFIFO(t *testing.T) {
	paste, err := os.ReadFile(filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed", "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := mkfifo(t, t.TempDir(), "63")
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.Write(paste)
		_ = f.Close()
	}()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"analyze", p, "-o", "json"}, streams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut})
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFindings, errOut.String())
	}
	if !bytes.Contains(out.Bytes(), []byte(`"runtime-oom-killed"`)) {
		t.Errorf("no OOM finding from the FIFO's text:\n%.2000s", out.String())
	}
}
