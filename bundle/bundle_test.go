package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeSample(t *testing.T, target string) {
	t.Helper()
	w, err := Create(target, WriterOptions{Root: "podflow-test-20261129T000000Z"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(NamespacedResourcePath(KindPods, "shop"), []byte(`{"kind":"PodList","items":[{},{}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(LogPath("shop", "web-1", "app", true), []byte("boom\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(NodePath("n1", NodeKubeletLog), []byte("line\n")); err != nil {
		t.Fatal(err)
	}
	m := &Manifest{PodflowVersion: "test", CollectedAt: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Type: "cluster",
		Sources: []Source{{Name: "pods/shop", Status: StatusOK}}}
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	for _, name := range []string{"b.tar.gz", "b.tgz", "b.tar", "bdir"} {
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), name)
			writeSample(t, target)
			b, err := Open(target, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if problems := Verify(b); len(problems) != 0 {
				t.Fatalf("fresh bundle does not verify: %v", problems)
			}
			want := []string{"cluster-resources/pods/logs/shop/web-1/app-previous.log", "cluster-resources/pods/shop.json",
				"nodes/n1/kubelet.log", "podflow.json", "version.yaml"}
			if got := strings.Join(b.Names(), ","); got != strings.Join(want, ",") {
				t.Fatalf("names = %s, want %s", got, strings.Join(want, ","))
			}
			if b.Manifest.FormatVersion != FormatVersion || len(b.Manifest.Files) != 4 {
				t.Fatalf("manifest = %+v", b.Manifest)
			}
			s := Summarize(b)
			if s.Kinds[KindPods] != 2 || s.Logs != 1 || strings.Join(s.Nodes, ",") != "n1" {
				t.Fatalf("summary = %+v", s)
			}
			entries, _ := os.ReadDir(filepath.Dir(target))
			if len(entries) != 1 {
				t.Fatalf("temporary files left behind: %v", entries)
			}
		})
	}
}

func TestCreateRefusesExistingUnlessForce(t *testing.T) {
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	writeSample(t, target)
	if _, err := Create(target, WriterOptions{}); !errors.Is(err, ErrExists) {
		t.Fatalf("Create over existing = %v, want ErrExists", err)
	}
	w, err := Create(target, WriterOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Manifest{}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if b.Has(NodePath("n1", NodeKubeletLog)) {
		t.Fatal("forced overwrite kept old content")
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "b.tar.gz")
	w, err := Create(target, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("a.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("abort left %v", entries)
	}
}

func TestWriterRejectsDuplicatesAndUnsafeNames(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "b.tar"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.WriteFile("a", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("a", nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate write = %v", err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", `a\b`} {
		var ue *UnsafeEntryError
		if err := w.WriteFile(bad, nil); !errors.As(err, &ue) {
			t.Errorf("WriteFile(%q) = %v, want UnsafeEntryError", bad, err)
		}
	}
}

type upper struct{}

func (upper) Apply(_ string, d []byte) ([]byte, error) { return bytes.ToUpper(d), nil }

func TestFilterAppliesToFilesNotManifest(t *testing.T) {
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := Create(target, WriterOptions{Filter: upper{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("x.log", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Manifest{PodflowVersion: "lower"}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(target, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := b.ReadFile("x.log"); string(d) != "SECRET" {
		t.Fatalf("filter not applied: %q", d)
	}
	if b.Manifest.PodflowVersion != "lower" || len(Verify(b)) != 0 {
		t.Fatalf("manifest filtered or checksums wrong: %+v %v", b.Manifest, Verify(b))
	}
}

type entry struct {
	hdr  tar.Header
	body string
}

func makeTarGz(t *testing.T, entries []entry) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	p := filepath.Join(t.TempDir(), "hostile.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenRejectsHostileArchives(t *testing.T) {
	cases := []struct {
		name    string
		entries []entry
		want    string
	}{
		{"absolute", []entry{{hdr: tar.Header{Name: "/etc/cron.d/x"}, body: "x"}}, "absolute path"},
		{"parent", []entry{{hdr: tar.Header{Name: "b/../../x"}, body: "x"}}, "parent directory"},
		{"symlink", []entry{{hdr: tar.Header{Name: "b/l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}}, "symbolic link"},
		{"hardlink", []entry{{hdr: tar.Header{Name: "b/l", Typeflag: tar.TypeLink, Linkname: "b/x"}}}, "hard link"},
		{"device", []entry{{hdr: tar.Header{Name: "b/d", Typeflag: tar.TypeChar}}}, "device"},
		{"duplicate", []entry{{hdr: tar.Header{Name: "b/x"}, body: "1"}, {hdr: tar.Header{Name: "b/x"}, body: "2"}}, "duplicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := makeTarGz(t, c.entries)
			for name, open := range openers {
				_, err := open(p, DefaultLimits())
				var ue *UnsafeEntryError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s = %v, want UnsafeEntryError containing %q", name, err, c.want)
				}
			}
		})
	}
}

func TestOpenEnforcesLimits(t *testing.T) {
	p := makeTarGz(t, []entry{{hdr: tar.Header{Name: "b/a"}, body: "12345"}, {hdr: tar.Header{Name: "b/big"}, body: strings.Repeat("x", 100)}})
	for name, open := range openers {
		var le *LimitError
		_, err := open(p, Limits{MaxFileSize: 50, MaxTotalSize: 1000})
		if !errors.As(err, &le) || le.Entry != "b/big" || le.Total {
			t.Fatalf("%s, per-file cap: %v", name, err)
		}
		_, err = open(p, Limits{MaxFileSize: 1000, MaxTotalSize: 50})
		if !errors.As(err, &le) || le.Entry != "b/big" || !le.Total || !strings.Contains(err.Error(), "--max-total-size") {
			t.Fatalf("%s, total cap: %v", name, err)
		}
	}
}

func TestOpenBadInputs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.tar.gz")
	if err := os.WriteFile(garbage, []byte{0x1f, 0x8b, 1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(garbage, DefaultLimits()); err == nil || !strings.Contains(err.Error(), "garbage.tar.gz") {
		t.Fatalf("garbage archive: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "nope"), DefaultLimits()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	future := makeTarGz(t, []entry{{hdr: tar.Header{Name: "b/podflow.json"}, body: `{"formatVersion":"2.0"}`}})
	var fe *FormatVersionError
	if _, err := Open(future, DefaultLimits()); !errors.As(err, &fe) || !strings.Contains(err.Error(), "upgrade podflow") {
		t.Fatalf("future format: %v", err)
	}
}

func TestVerifyFindsEveryProblem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	writeSample(t, dir)
	for name, body := range map[string]string{
		"nodes/n1/kubelet.log": "tampered\n",
		"extra.txt":            "x",
		"version.yaml":         "a different body of same-ish size?",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "cluster-resources/pods/shop.json")); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range Verify(b) {
		got = append(got, p.Kind+":"+p.Path)
	}
	want := "missing:cluster-resources/pods/shop.json,size:nodes/n1/kubelet.log,size:version.yaml,extra:extra.txt"
	if strings.Join(got, ",") != want {
		t.Fatalf("problems = %v, want %s", got, want)
	}
}

func TestParsePath(t *testing.T) {
	cases := map[string]PathInfo{
		"cluster-resources/nodes.json":                          {Area: "cluster", Kind: "nodes"},
		"cluster-resources/pods/shop.json":                      {Area: "namespaced", Kind: "pods", Namespace: "shop"},
		"cluster-resources/pods/logs/shop/web/app-previous.log": {Area: "log", Namespace: "shop", Pod: "web", Container: "app", Previous: true},
		"nodes/n1/crictl/inspect/abc.json":                      {Area: "node", Node: "n1", NodeFile: "crictl/inspect/abc.json"},
		"cluster-resources/pods-errors.json":                    {},
		"podflow.json":                                          {},
	}
	for p, want := range cases {
		if got := ParsePath(p); got != want {
			t.Errorf("ParsePath(%q) = %+v, want %+v", p, got, want)
		}
	}
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a/b", "../a", "/a", "a/./b", "a//b", "C:/x", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkName(name) != nil {
			return
		}
		// Whatever passes must stay inside a directory when joined to it.
		joined := filepath.Join("/base", filepath.FromSlash(name))
		if joined != "/base" && !strings.HasPrefix(joined, "/base/") {
			t.Fatalf("accepted %q escapes to %q", name, joined)
		}
	})
}

func TestTakeLetsGoOnlyOfAReadOnceBundle(t *testing.T) {
	files := map[string][]byte{"cluster-resources/pods/a.json": []byte(`{"items":[]}`), "nodes/n1/kubelet.log": []byte("x\n")}
	b, err := New("mem", files)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if data, err := b.Take("cluster-resources/pods/a.json"); err != nil || string(data) != `{"items":[]}` {
			t.Fatalf("Take on a plain bundle = %q, %v; it must keep the file", data, err)
		}
	}
	b.ReadOnce()
	if data, err := b.Take("cluster-resources/pods/a.json"); err != nil || string(data) != `{"items":[]}` {
		t.Fatalf("Take = %q, %v", data, err)
	}
	if _, err := b.ReadFile("cluster-resources/pods/a.json"); !errors.Is(err, ErrTaken) {
		t.Fatalf("ReadFile after Take = %v, want ErrTaken", err)
	}
	if !b.Has("cluster-resources/pods/a.json") || len(b.Names()) != 2 || b.Size() != int64(len(`{"items":[]}`)+2) {
		t.Fatalf("a taken file is still listed: has %v, names %v, size %d", b.Has("cluster-resources/pods/a.json"), b.Names(), b.Size())
	}
	if _, err := b.ReadFile("nodes/n1/kubelet.log"); err != nil {
		t.Fatalf("a file not taken: %v", err)
	}
	if _, err := b.Take("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Take of a missing file = %v", err)
	}
}
