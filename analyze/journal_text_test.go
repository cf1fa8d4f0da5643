package analyze

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/logline"
)

// A bundle read once keeps its journal entries' text in journalText: every entry, line
// and unreadable line must read as it does from a bundle that keeps its bytes.
func TestJournalTextKeepsWhatEntriesSay(t *testing.T) {
	kubelet := strings.Join([]string{
		`2026-11-29T10:00:01+0000 n1 kubelet[9]: I1129 10:00:01.000001       9 kubelet.go:1] "Pod update" pod="shop/a" podUID="u-a"`,
		`2026-11-29T10:00:02+0000 n1 kubelet[9]: E1129 10:00:02.000002       9 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\"" pod="shop/a"`,
		`2026-11-29T10:00:03+0000 n1 kubelet[9]: I1129 10:00:03.000003       9 kubelet.go:1] "Pod update" pod="shop/b" podUID="u-b"`,
		`2026-11-29T10:00:04+0000 n1 kubelet[9]: W1129 10:00:04.000004       9 reconciler.go:7] "operationExecutor.MountVolume started for volume \"cfg\"" pod="shop/b"`,
		`	continued value`,
		`2026-11-29T10:00:0`,
		`-- Boot 3f2a --`,
		`2026-11-29T10:00:05+0000 n1 kubelet[9]: I1129 10:00:05.000005       9 server.go:3] Started kubelet`,
		`2026-11-29T10:00:06+0000 n1 kubelet[9]: I1129 10:00:06.000006       9 kubelet.go:2] "Fast updating node status as it just became ready"`,
	}, "\n")
	runtime := strings.Join([]string{
		`2026-11-29T10:00:06+0000 n1 containerd[7]: time="2026-11-29T10:00:06.000000000Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:a,Uid:u-a,Namespace:shop,Attempt:0,} failed" error="boom"`,
		`2026-11-29T10:00:07+0000 n1 containerd[7]: time="2026-11-29T10:00:07.000000000Z" level=info msg="StartContainer for \"abc\" returns successfully"`,
	}, "\n")
	files := map[string][]byte{
		bundle.NodePath("n1", bundle.NodeKubeletLog): []byte(kubelet),
		bundle.NodePath("n1", bundle.NodeRuntimeLog): []byte(runtime),
	}
	var loaded []byte // the kubelet journal's bytes as the last open loaded them
	open := func(once bool) *Graph {
		copied := map[string][]byte{}
		for k, v := range files {
			copied[k] = append([]byte(nil), v...)
		}
		loaded = copied[bundle.NodePath("n1", bundle.NodeKubeletLog)]
		b, err := bundle.New("mem", copied)
		if err != nil {
			t.Fatal(err)
		}
		if once {
			b.ReadOnce()
		}
		return Load([]*bundle.Bundle{b}, nil)
	}
	kept, compact := open(false), open(true)
	if kept.journal.len() != 6 || len(kept.runtimeJournal["n1"]) != 2 || len(kept.unparsed) != 1 {
		t.Fatalf("journal %d, runtime %d, unparsed %d entries", kept.journal.len(), len(kept.runtimeJournal["n1"]), len(kept.unparsed))
	}
	if !reflect.DeepEqual(kept.journal, compact.journal) {
		t.Errorf("kubelet entries differ:\n%+v\n%+v", kept.journal, compact.journal)
	}
	if !reflect.DeepEqual(kept.runtimeJournal, compact.runtimeJournal) {
		t.Errorf("runtime entries differ:\n%+v\n%+v", kept.runtimeJournal, compact.runtimeJournal)
	}
	if !reflect.DeepEqual(kept.unparsed, compact.unparsed) {
		t.Errorf("unparsed lines differ:\n%+v\n%+v", kept.unparsed, compact.unparsed)
	}
	if !reflect.DeepEqual(kept.journalByPod, compact.journalByPod) || !reflect.DeepEqual(kept.journalByUID, compact.journalByUID) {
		t.Errorf("journal indexes differ")
	}
	// The compact copy no longer points into the file's bytes, not even with an empty
	// string (a line without fields), and shares repeated messages and sources.
	lo, hi := uintptr(unsafe.Pointer(&loaded[0])), uintptr(unsafe.Pointer(&loaded[0]))+uintptr(len(loaded))
	for i, e := range compact.journal.entries() {
		for _, s := range []string{e.Message, e.FieldText, e.Source, e.Program, e.Host} {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
				t.Errorf("entry %d: %q points into the journal's bytes, which it would keep alive", i, s)
			}
		}
	}
	a, b := compact.journal.at(0), compact.journal.at(2)
	if _, _, same := span(a.Message, b.Message); !same || a.Source != b.Source {
		t.Errorf("repeated message %q and source %q are not shared", a.Message, a.Source)
	}
}

func TestJournalTextBlocksAreNeverRewritten(t *testing.T) {
	var jt journalText
	long := strings.Repeat("x", journalTextBlock+10)
	a := jt.copy("first")
	b := jt.copy(long)
	c := jt.copy("after")
	if a != "first" || b != long || c != "after" {
		t.Fatalf("copies changed: %q, %d bytes, %q", a, len(b), c)
	}
	if jt.copy("") != "" {
		t.Fatal("an empty string copies as empty")
	}
}

// TestEntryTextErrorUnderOtherKey: a structured line that logs its failure under a key
// of its own (exitCode=, error=) reads with that error, as one under err= does; values
// that are no error, and a message that already holds the value, add nothing.
func TestEntryTextErrorUnderOtherKey(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`I0220 19:03:52.344087 1 nfd-worker.go:332] "http server stopped" exitCode="listen tcp :8080: bind: address already in use"`,
			"http server stopped: listen tcp :8080: bind: address already in use"},
		{`E0220 19:03:52.344087 1 x.go:1] "sync failed" err="boom" error="other failure: timed out"`, "sync failed: boom"},
		{`I0220 19:03:52.344087 1 x.go:1] "pod started" pod="shop/web-1" status="Running fine"`, "pod started"},
	} {
		e, k, _ := ParseJournalLine(c.line, time.Time{})
		if k != LineEntry {
			t.Fatalf("%q: kind %v", c.line, k)
		}
		if got := entryText(&e.Entry); got != c.want {
			t.Errorf("%q: %q, want %q", c.line, got, c.want)
		}
	}
}

// An analysis keeps the runtime's journal entries in room of their own size: the parser
// grows them by appends when healthy pods' lines are left out, and the room to spare
// was a quarter of what a big cluster's runtime journals hold.
func TestRuntimeEntriesKeepNoSpareRoom(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`2026-11-29T10:00:%02d+0000 n1 containerd[7]: time="2026-11-29T10:00:%02d.000000000Z" level=error msg="StartContainer for \"%064x\" failed" error="boom"`, i, i, i))
	}
	b, err := bundle.New("mem", map[string][]byte{bundle.NodePath("n1", bundle.NodeRuntimeLog): []byte(strings.Join(lines, "\n"))})
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadWith(context.Background(), []*bundle.Bundle{b}, nil, LoadOptions{TroubleOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	entries := g.runtimeJournal["n1"]
	if len(entries) != len(lines) {
		t.Fatalf("%d runtime entries kept, want %d", len(entries), len(lines))
	}
	if cap(entries) > len(entries)+len(entries)/8 {
		t.Errorf("%d runtime entries kept in room for %d", len(entries), cap(entries))
	}
}

// An entry that says what an earlier one said keeps that entry's copy of the text: a
// kubelet repeats a pod's updates and probe failures, and a runtime its shim's lines,
// word for word under a new time.
func TestJournalTextSharesRepeatedEntries(t *testing.T) {
	var jt journalText
	parse := func(line string) logline.Entry {
		t.Helper()
		e, kind, problem := logline.ParseJournal(line, time.Time{})
		if kind != logline.KindEntry || problem != nil {
			t.Fatalf("%q: kind %v, %v", line, kind, problem)
		}
		want := e
		jt.keep(&e, line)
		if e != want {
			t.Fatalf("kept entry reads %+v, want %+v", e, want)
		}
		return e
	}
	a := parse(`2026-11-29T10:00:01+0000 n1 kubelet[9]: I1129 10:00:01.000001       9 kubelet.go:1] "Pod update" pod="shop/a" podUID="u-a"`)
	b := parse(`2026-11-29T10:00:09+0000 n1 kubelet[9]: I1129 10:00:09.000009       9 kubelet.go:1] "Pod update" pod="shop/a" podUID="u-a"`)
	c := parse(`2026-11-29T10:00:10+0000 n1 kubelet[9]: I1129 10:00:10.000010       9 kubelet.go:1] "Pod update" pod="shop/b" podUID="u-b"`)
	r1 := parse(`2026-11-29T10:00:06+0000 n1 containerd[7]: time="2026-11-29T10:00:06.000000000Z" level=info msg="starting signal loop" pid=1`)
	r2 := parse(`2026-11-29T10:00:07+0000 n2 containerd[7]: time="2026-11-29T10:00:06.000000000Z" level=info msg="starting signal loop" pid=1`)
	if _, _, same := span(a.FieldText, b.FieldText); !same {
		t.Errorf("repeated fields %q are copied twice", a.FieldText)
	}
	if _, _, same := span(a.FieldText, c.FieldText); same || c.FieldText != `pod="shop/b" podUID="u-b"` {
		t.Errorf("another pod's fields read %q", c.FieldText)
	}
	if _, _, same := span(r1.Message, r2.Message); !same {
		t.Errorf("repeated runtime message %q is copied twice", r1.Message)
	}
}

// A kubelet retries a pod's failure with the same error: the lines of those entries
// read one text, made once, rather than a copy each of the message joined to its err=.
func TestRepeatedErrorLinesShareTheirText(t *testing.T) {
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`2026-11-29T10:00:0%[1]d+0000 n1 kubelet[9]: E1129 10:00:0%[1]d.000001       9 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\"" pod="shop/a"`, i+1))
	}
	lines = append(lines, `2026-11-29T10:00:09+0000 n1 kubelet[9]: E1129 10:00:09.000001       9 pod_workers.go:1301] "Error syncing pod, skipping" err="another failure" pod="shop/a"`)
	b, err := bundle.New("mem", map[string][]byte{bundle.NodePath("n1", bundle.NodeKubeletLog): []byte(strings.Join(lines, "\n"))})
	if err != nil {
		t.Fatal(err)
	}
	b.ReadOnce()
	var texts []string
	for _, l := range Load([]*bundle.Bundle{b}, nil).Lines() {
		if l.Kind() == TextJournal {
			texts = append(texts, l.Text)
		}
	}
	want := []string{`Error syncing pod, skipping: failed to "StartContainer" for "app"`, `Error syncing pod, skipping: failed to "StartContainer" for "app"`,
		`Error syncing pod, skipping: failed to "StartContainer" for "app"`, `Error syncing pod, skipping: another failure`}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("lines read %q, want %q", texts, want)
	}
	for i := 1; i < 3; i++ {
		if unsafe.StringData(texts[i]) != unsafe.StringData(texts[0]) {
			t.Errorf("line %d's text is a copy of line 0's", i)
		}
	}
}
