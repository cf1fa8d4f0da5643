package bundle

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestHugeLogCostsWhatIsKept is the archive of compressed zeros at a smaller scale:
// four container logs of 32 MiB of zeros (of a pod the bundle does not hold) are read
// at a cost bounded by what is kept of each (LogTailBytes, 1 MiB here), not by their
// size; the digest of each whole member is still taken, so Verify checks it.
func TestHugeLogCostsWhatIsKept(t *testing.T) {
	defer func(v int64) { LogTailBytes = v }(LogTailBytes)
	LogTailBytes = 1 << 20
	const member = 32 << 20
	target := filepath.Join(t.TempDir(), "bomb.tar.gz")
	w, err := Create(target, WriterOptions{Root: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(NamespacedResourcePath(KindPods, "shop"), []byte(`{"kind":"PodList","items":[]}`)); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, member)
	for i := range 4 {
		if err := w.WriteFile(LogPath("other", fmt.Sprint("ghost-", i), "app", false), zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&Manifest{}); err != nil {
		t.Fatal(err)
	}
	zeros = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := OpenReadOnce(context.Background(), target, Limits{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading %d bytes of logs allocated %d bytes; what is kept is %d per log", 4*member, alloc, LogTailBytes)
	}
	name := LogPath("other", "ghost-0", "app", false)
	if tr, ok := b.Trimmed(name); !ok || tr.Bytes != member || tr.Lines != 0 {
		t.Errorf("trim of a log without newlines: %+v %v, want all %d bytes left out", tr, ok, member)
	}
	if problems := Verify(b); len(problems) > 0 {
		t.Errorf("verify: %v", problems)
	}
}

// TestLogTailKeepsLineNumbers checks what is kept of a log larger than LogTailBytes:
// its newest lines, whole, and how many lines came before them.
func TestLogTailKeepsLineNumbers(t *testing.T) {
	var log strings.Builder
	for i := 1; log.Len() < 300<<10; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	for _, size := range []int64{-1, int64(log.Len())} { // stream of unknown size, member of known size
		var buf []byte
		data, d, trim, err := readTail(&buf, strings.NewReader(log.String()), size, 64<<10, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if d.Size != int64(log.Len()) {
			t.Errorf("size %d: digest size %d", size, d.Size)
		}
		if !strings.HasSuffix(log.String(), string(data)) || len(data) > 64<<10 || len(data) < 60<<10 {
			t.Errorf("size %d: kept %d bytes that are not the log's tail", size, len(data))
		}
		if want := fmt.Sprintf("line %d\n", trim.Lines+1); !strings.HasPrefix(string(data), want) {
			t.Errorf("size %d: kept text starts %q, want %q (trim %+v)", size, string(data[:12]), want, trim)
		}
		if trim.Bytes+int64(len(data)) != int64(log.Len()) {
			t.Errorf("size %d: trim %+v and %d kept do not add up to %d", size, trim, len(data), log.Len())
		}
	}
}
