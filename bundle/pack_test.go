package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
)

// openers are the two ways analyze-like and other callers open a bundle: every check
// of the reader holds for both.
var openers = map[string]func(string, Limits) (*Bundle, error){
	"open":      Open,
	"read-once": func(p string, l Limits) (*Bundle, error) { return OpenReadOnce(context.Background(), p, l) },
}

// journalLines is size bytes of kubelet journal lines for node, about as repetitive
// as a real one: a few hundred pods, a handful of messages, times that move on.
func journalLines(node string, size int, rng *rand.Rand) []byte {
	msgs := []string{
		`"SyncLoop (PLEG): event for pod" pod="%s" event={"ID":"%s","Type":"ContainerStarted"}`,
		`"Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with CrashLoopBackOff" pod="%s" podUID="%s"`,
		`"operationExecutor.MountVolume started for volume \"kube-api-access\"" pod="%s" podUID="%s"`,
		`"Probe failed" probeType="Readiness" pod="%s" podUID="%s" output="HTTP probe failed with statuscode: 503"`,
	}
	pods := make([][2]string, 300)
	for i := range pods {
		pods[i] = [2]string{fmt.Sprintf("team-%03d/web-%x-%05d", i%40, rng.Uint32()&0xfffff, rng.IntN(100000)),
			fmt.Sprintf("%08x-%04x-%04x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<16), rng.Uint64()&(1<<48-1))}
	}
	var buf bytes.Buffer
	for s := 0; buf.Len() < size; s++ {
		at := fmt.Sprintf("%02d:%02d:%02d.%06d", s/36000%24, s/600%60, s/10%60, s%10*100000+rng.IntN(1000))
		fmt.Fprintf(&buf, "2026-11-29T%s+0000 %s kubelet[2211]: I1129 %s    2211 kubelet.go:%d] ", at, node, at, 100+rng.IntN(20))
		pod := pods[rng.IntN(len(pods))]
		fmt.Fprintf(&buf, msgs[rng.IntN(len(msgs))]+"\n", pod[0], pod[1])
	}
	return buf.Bytes()
}

// podList is size bytes of a JSON pod list.
func podList(size int, rng *rand.Rand) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"kind":"PodList","items":[`)
	for i := 0; buf.Len() < size; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"metadata":{"name":"web-%x-%05d","namespace":"team-%03d","uid":"%016x","resourceVersion":"%d",`+
			`"labels":{"app":"web","team":"team-%03d"}},"spec":{"nodeName":"node-%03d","restartPolicy":"Always",`+
			`"containers":[{"name":"app","image":"registry.example/app:1.%d","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]},`+
			`"status":{"phase":"Running","podIP":"10.0.%d.%d","startTime":"2026-11-29T10:%02d:%02dZ",`+
			`"conditions":[{"type":"Ready","status":"True"},{"type":"ContainersReady","status":"True"}]}}`,
			rng.Uint32()&0xfffff, rng.IntN(100000), i%40, rng.Uint64(), 100000+i, i%40, i%20, i%5,
			i/256%256, i%256, i/60%60, i%60)
	}
	buf.WriteString("]}")
	return buf.Bytes()
}

// largeNodes is how many nodes largeBundle writes: its largest file, a node's journal,
// is 3/4 of the raw size over largeNodes.
const largeNodes = 8

// largeBundle writes a podflow bundle of about raw bytes, 3/4 of it node journals,
// as a .tar.gz or a directory.
func largeBundle(t *testing.T, target string, raw int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	w, err := Create(target, WriterOptions{Root: "podflow-large"})
	if err != nil {
		t.Fatal(err)
	}
	const nodes = largeNodes
	for i := range nodes {
		node := fmt.Sprintf("node-%03d", i)
		if err := w.WriteFile(NodePath(node, NodeKubeletLog), journalLines(node, raw/nodes*3/4, rng)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFile(NamespacedResourcePath(KindPods, fmt.Sprintf("team-%03d", i)), podList(raw/nodes/4, rng)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&Manifest{PodflowVersion: "test"}); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes files as a podflow bundle with a manifest, under a top directory.
func writeFiles(t *testing.T, target string, files map[string][]byte) {
	t.Helper()
	w, err := Create(target, WriterOptions{Root: "podflow-x"})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := w.WriteFile(name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&Manifest{PodflowVersion: "test"}); err != nil {
		t.Fatal(err)
	}
}

// liveHeap is the heap the objects reachable after f hold, beyond those before it.
func liveHeap(f func()) uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	runtime.GC()
	metrics.Read(s)
	return s[0].Value.Uint64() - min(before, s[0].Value.Uint64())
}

// A bundle opened read once holds about its compressed size, not its raw size, both
// once open and while it is being read: journals and lists are kept compressed.
func TestOpenReadOnceHoldsAboutTheCompressedSize(t *testing.T) {
	const raw = 48 << 20
	p := filepath.Join(t.TempDir(), "large.tar.gz")
	largeBundle(t, p, raw)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// The archive is gzip; s2 keeps up to twice as much. While a file is read, its raw
	// bytes and the buffer it is compressed into are alive too, with those of smaller
	// files before it not yet collected.
	bound := 3*uint64(st.Size()) + 2<<20
	peakBound := bound + 3*raw/largeNodes*3/4
	if peakBound > raw*3/4 {
		t.Fatalf("the generated bundle compresses to %d bytes of %d: too little for this test to tell packed from raw", st.Size(), raw)
	}
	var once, plain *Bundle
	peak, _ := peakHeap(func() { once, err = OpenReadOnce(context.Background(), p, DefaultLimits()) })
	if err != nil {
		t.Fatal(err)
	}
	if once.Size() < raw {
		t.Fatalf("bundle of %d bytes, want %d", once.Size(), raw)
	}
	once = nil
	held := liveHeap(func() { once, err = OpenReadOnce(context.Background(), p, DefaultLimits()) })
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(once)
	once = nil
	// The measure itself: Open, which keeps every file raw, holds the raw size.
	heldRaw := liveHeap(func() { plain, err = Open(p, DefaultLimits()) })
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(plain)
	t.Logf("archive %d MB, raw %d MB: read once holds %d MB and peaked at %d MB while opening; Open holds %d MB",
		st.Size()>>20, raw>>20, held>>20, peak>>20, heldRaw>>20)
	if heldRaw < raw {
		t.Fatalf("Open holds %d MB of heap for %d MB of files: the measure is broken", heldRaw>>20, raw>>20)
	}
	if held > bound {
		t.Errorf("the bundle read once holds %d MB of heap, want under %d MB (3× the %d MB archive)", held>>20, bound>>20, st.Size()>>20)
	}
	if peak > peakBound {
		t.Errorf("opening peaked at %d MB of heap, want under %d MB", peak>>20, peakBound>>20)
	}
}

// OpenReadOnce reads what Open reads: names, bytes, sizes, line counts, manifest and
// verification are the same, for an archive and a directory, and Take lets go of each
// file whether it was kept compressed or not.
func TestOpenReadOnceReadsWhatOpenReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]byte, 3*packMin) // does not compress: kept raw
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	files := map[string][]byte{
		NamespacedResourcePath(KindPods, "shop"): podList(64<<10, rng),
		NodePath("n1", NodeKubeletLog):           journalLines("n1", 256<<10, rng),
		NodePath("n1", NodeDmesg):                noise,
		LogPath("shop", "web-1", "app", false):   []byte("small\nlog\n"),
	}
	// Blocks kept in memory read as spilled ones do (TestOpenReadOnceSpillsEveryBlock).
	saved := packedInMemory
	packedInMemory = 32 << 20
	t.Cleanup(func() { packedInMemory = saved })
	dir := t.TempDir()
	for _, target := range []string{filepath.Join(dir, "b.tar.gz"), filepath.Join(dir, "bdir")} {
		writeFiles(t, target, files)
		plain, err := Open(target, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		once, err := OpenReadOnce(context.Background(), target, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if !once.ReadsOnce() || plain.ReadsOnce() || once.Root != plain.Root || once.Size() != plain.Size() ||
			once.Manifest == nil || !slices.Equal(once.Names(), plain.Names()) {
			t.Fatalf("%s: read once %v %q %d %v, opened %q %d %v", target, once.ReadsOnce(), once.Root, once.Size(), once.Names(), plain.Root, plain.Size(), plain.Names())
		}
		if len(once.packed) != 2 || once.packed[NodePath("n1", NodeKubeletLog)].block == nil || once.files[NodePath("n1", NodeDmesg)] == nil {
			t.Fatalf("%s: packed %d files; want the journal and the list packed, the noise kept raw", target, len(once.packed))
		}
		if got := Verify(once); len(got) != 0 {
			t.Fatalf("%s: Verify = %v", target, got)
		}
		for _, name := range plain.Names() {
			want, _ := plain.ReadFile(name)
			again, err := once.ReadFile(name)
			if err != nil || !bytes.Equal(again, want) {
				t.Errorf("%s: ReadFile(%s) differs from Open's: %v", target, name, err)
			}
			got, err := once.Take(name)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: Take(%s) differs from Open's: %v", target, name, err)
			}
			if _, err := once.ReadFile(name); !errors.Is(err, ErrTaken) || !once.Has(name) {
				t.Errorf("%s: ReadFile(%s) after Take = %v, want ErrTaken", target, name, err)
			}
		}
		if len(once.packed) != 0 || len(once.files) != 0 || once.sums != nil {
			t.Errorf("%s: %d packed and %d raw files, %d digests still held after every Take", target, len(once.packed), len(once.files), len(once.sums))
		}
	}
	// A file changed after collection is found from its compressed copy.
	journal := filepath.Join(dir, "bdir", filepath.FromSlash(NodePath("n1", NodeKubeletLog)))
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(journal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	once, err := OpenReadOnce(context.Background(), filepath.Join(dir, "bdir"), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if got := Verify(once); len(got) != 1 || got[0].Kind != "checksum" || got[0].Path != NodePath("n1", NodeKubeletLog) {
		t.Fatalf("Verify(changed) = %v", got)
	}
	// Files hands over every file raw.
	all := once.Files()
	if len(once.packed) != 0 || !bytes.Equal(all[NodePath("n1", NodeKubeletLog)], data) {
		t.Fatalf("Files left %d packed", len(once.packed))
	}
}

func TestOpenReadOnceStopsWithItsContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	writeSample(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenReadOnce(ctx, p, DefaultLimits()); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "b.tar.gz") {
		t.Fatalf("OpenReadOnce with a cancelled context = %v", err)
	}
	if _, err := OpenReadOnce(context.Background(), filepath.Join(t.TempDir(), "nope"), DefaultLimits()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// TakeInto decodes a compressed file into the caller's buffer when it fits, and is Take
// otherwise; Drop lets go of a file unread. A plain bundle's bytes stay the bundle's.
func TestTakeIntoReusesTheBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	journal := journalLines("n1", 64<<10, rng)
	files := map[string][]byte{NodePath("n1", NodeKubeletLog): journal, NodePath("n2", NodeKubeletLog): journal}
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFiles(t, target, files)
	once, err := OpenReadOnce(context.Background(), target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, len(journal)+100)
	got, err := once.TakeInto(NodePath("n1", NodeKubeletLog), buf)
	if err != nil || !bytes.Equal(got, journal) || &got[0] != &buf[:1][0] {
		t.Fatalf("TakeInto with a buffer that fits: equal %v, in the buffer %v, err %v", bytes.Equal(got, journal), len(got) > 0 && &got[0] == &buf[:1][0], err)
	}
	if _, err := once.ReadFile(NodePath("n1", NodeKubeletLog)); !errors.Is(err, ErrTaken) {
		t.Fatalf("ReadFile after TakeInto = %v, want ErrTaken", err)
	}
	once.Drop(NodePath("n1", NodeKubeletLog)) // already taken: nothing changes
	if !once.Has(NodePath("n1", NodeKubeletLog)) {
		t.Fatal("a taken file is no longer listed")
	}
	small := make([]byte, 0, 10)
	if got, err := once.TakeInto(NodePath("n2", NodeKubeletLog), small); err != nil || !bytes.Equal(got, journal) {
		t.Fatalf("TakeInto with a small buffer: equal %v, err %v", bytes.Equal(got, journal), err)
	}
	dropped, err := OpenReadOnce(context.Background(), target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	dropped.Drop(NodePath("n1", NodeKubeletLog))
	if _, err := dropped.ReadFile(NodePath("n1", NodeKubeletLog)); !errors.Is(err, ErrTaken) {
		t.Fatalf("ReadFile after Drop = %v, want ErrTaken", err)
	}
	plain, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	plain.Drop(NodePath("n1", NodeKubeletLog))
	for range 2 {
		if got, err := plain.TakeInto(NodePath("n1", NodeKubeletLog), buf); err != nil || !bytes.Equal(got, journal) {
			t.Fatalf("TakeInto on a plain bundle: equal %v, err %v; it must keep the file", bytes.Equal(got, journal), err)
		}
	}
}

// Every block goes to a temporary file that is gone from its directory as soon as it is
// made: what is read back, verified and taken is what was written, the heap holds none
// of it, and nothing is left behind. Kept in memory, the first blocks read were held
// until the load took them, which for a node's files is after every list and event.
func TestOpenReadOnceSpillsEveryBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	files := map[string][]byte{
		NamespacedResourcePath(KindPods, "shop"): podList(256<<10, rng),
		NodePath("n1", NodeKubeletLog):           journalLines("n1", 4<<20, rng),
		NodePath("n2", NodeKubeletLog):           journalLines("n2", 4<<20, rng),
		LogPath("shop", "web-1", "app", false):   []byte("small\nlog\n"),
	}
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFiles(t, target, files)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	var once *Bundle
	var err error
	held := liveHeap(func() { once, err = OpenReadOnce(context.Background(), target, DefaultLimits()) })
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the temporary file is still listed: %v", left)
	}
	spilled := 0
	for _, p := range once.packed {
		if p.block == nil && p.size > 0 {
			spilled++
		}
	}
	if spilled != 3 || once.spillTo.f == nil {
		t.Fatalf("%d of %d packed files spilled, want the journals and the list", spilled, len(once.packed))
	}
	if held > 2<<20 {
		t.Errorf("the bundle holds %d KB of heap with every block spilled, want under 2 MB", held>>10)
	}
	if got := Verify(once); len(got) != 0 {
		t.Fatalf("Verify = %v", got)
	}
	if got, err := once.ReadFile(NodePath("n1", NodeKubeletLog)); err != nil || !bytes.Equal(got, files[NodePath("n1", NodeKubeletLog)]) {
		t.Fatalf("ReadFile of a spilled journal: equal %v, err %v", bytes.Equal(got, files[NodePath("n1", NodeKubeletLog)]), err)
	}
	var buf []byte
	for name, want := range files {
		got, err := once.TakeInto(name, buf)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("TakeInto(%s) of a spilled bundle: equal %v, err %v", name, bytes.Equal(got, want), err)
		}
		buf = got[:0]
	}
	runtime.KeepAlive(once)
}

// A read-once consumer takes nearly every file: the bundle's map of compressed files
// is made again as it empties, rather than keeping its room to the end of the load.
func TestTakingMostFilesShrinksThePackedMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	files := map[string][]byte{}
	for i := range 200 {
		files[NodePath(fmt.Sprintf("n%03d", i), NodeKubeletLog)] = journalLines("n", 8<<10, rng)
	}
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFiles(t, target, files)
	once, err := OpenReadOnce(context.Background(), target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	packed := len(once.packed) // the files and the manifest
	if packed < len(files) || once.packedHigh != packed {
		t.Fatalf("%d files packed (high %d), want all %d", packed, once.packedHigh, len(files))
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names[:190] {
		if _, err := once.Take(name); err != nil {
			t.Fatal(err)
		}
	}
	if len(once.packed) != packed-190 || once.packedHigh > 4*len(once.packed) {
		t.Errorf("after 190 of 200 files were taken the packed map was last made for %d files, holding %d", once.packedHigh, len(once.packed))
	}
	for _, name := range names[190:] {
		if got, err := once.Take(name); err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("Take(%s) after the map was made again: equal %v, err %v", name, bytes.Equal(got, files[name]), err)
		}
	}
	if _, err := once.ReadFile(names[0]); !errors.Is(err, ErrTaken) {
		t.Errorf("ReadFile of a taken file: %v, want ErrTaken", err)
	}
}

// A bundle read once remembers which files were taken in a bit for each: at 20k pods
// a map of their names was 5 MB, held while the node files load.
func TestTakenFilesCostABitEach(t *testing.T) {
	files := map[string][]byte{}
	for i := range 4000 {
		files[LogPath("shop", fmt.Sprintf("web-%04d", i), "app", false)] = []byte("a line\n")
	}
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFiles(t, target, files)
	once, err := OpenReadOnce(context.Background(), target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(files))
	kept := make([][]byte, 0, len(names)) // the bytes taken stay referenced: only the record of taking them counts
	grew := liveHeap(func() {
		for _, name := range names {
			data, err := once.Take(name)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, data)
		}
	})
	if grew > 16<<10 {
		t.Errorf("taking %d files grew the heap by %d KB, want under 16 KB", len(names), grew>>10)
	}
	for i, name := range names {
		if !bytes.Equal(kept[i], files[name]) {
			t.Fatalf("Take(%s) = %q", name, kept[i])
		}
		if _, err := once.ReadFile(name); !errors.Is(err, ErrTaken) {
			t.Fatalf("ReadFile(%s) once taken: %v, want ErrTaken", name, err)
		}
		if !once.Has(name) {
			t.Fatalf("Has(%s) once taken = false", name)
		}
	}
	if _, err := once.ReadFile("cluster-resources/absent.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file the bundle never had: %v, want fs.ErrNotExist", err)
	}
	runtime.KeepAlive(once)
}
