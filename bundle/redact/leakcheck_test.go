package redact

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// writeUnfiltered writes a bundle the way a collector with a broken filter would: the
// secret reaches the archive.
func writeUnfiltered(t *testing.T, secretLine string) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := bundle.Create(target, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(bundle.LogPath("shop", "web", "app", false), []byte("starting\n"+secretLine+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&bundle.Manifest{}); err != nil {
		t.Fatal(err)
	}
	return target
}

func TestCheckWrittenRemovesLeakingBundle(t *testing.T) {
	const secret = "Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw"
	target := writeUnfiltered(t, secret)
	p, err := New(Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	err = (&Flags{}).CheckWritten(target, p, bundle.DefaultLimits())
	var leak *LeakError
	if !errors.As(err, &leak) || !leak.Removed {
		t.Fatalf("CheckWritten = %v, want a LeakError with the bundle removed", err)
	}
	if _, statErr := os.Stat(target); !os.IsNotExist(statErr) {
		t.Fatalf("leaking bundle still on disk: %v", statErr)
	}
	msg := err.Error()
	if !strings.Contains(msg, "cluster-resources/pods/logs/shop/web/app.log:2:") || strings.Contains(msg, "c2VjcmV0") {
		t.Fatalf("message must name file and line and never the value:\n%s", msg)
	}
}

func TestCheckWrittenKeepsCleanOrWaivedBundles(t *testing.T) {
	p, err := New(Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	disabled, err := New(Options{Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	leaky := "Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw"
	cases := []struct {
		name  string
		line  string
		flags Flags
		p     *Policy
	}{
		{"clean", "listening on :8080", Flags{}, p},
		{"waived with --skip-leak-scan", leaky, Flags{SkipLeakScan: true}, p},
		{"redaction off on purpose", leaky, Flags{NoRedact: true, ContainsSecrets: true}, disabled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := writeUnfiltered(t, c.line)
			if err := c.flags.CheckWritten(target, c.p, bundle.DefaultLimits()); err != nil {
				t.Fatalf("CheckWritten = %v", err)
			}
			if _, err := os.Stat(target); err != nil {
				t.Fatalf("bundle removed: %v", err)
			}
		})
	}
}

// The scan of a bundle while it is written finds exactly what reading it back finds,
// the manifest included, and judges the bundle the same way.
func TestLeakScanWhileWritingMatchesReadingBack(t *testing.T) {
	p, err := New(Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	leaks := (&Flags{}).LeakScan(p)
	target := filepath.Join(t.TempDir(), "b.tar.gz")
	w, err := bundle.Create(target, bundle.WriterOptions{Scan: leaks.File})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		bundle.LogPath("shop", "web", "app", false):            "starting\nAuthorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw\n",
		bundle.LogPath("shop", "api", "app", false):            "ready\npostgres://orders:hunter2hunter2@db:5432/orders\n",
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): `{"items":[{"metadata":{"annotations":{"token":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}}}]}` + "\n",
	}
	for name, data := range files {
		if err := w.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	m := &bundle.Manifest{Sources: []bundle.Source{{Name: "logs", Status: bundle.StatusFailed,
		Error: "GET with Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw failed"}}}
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
	readBack, err := scanStreaming(context.Background(), target, p, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	err = leaks.Check(target)
	var leak *LeakError
	if !errors.As(err, &leak) || !leak.Removed {
		t.Fatalf("Check = %v, want a LeakError with the bundle removed", err)
	}
	if !slices.Equal(leak.Hits, readBack) || !slices.ContainsFunc(readBack, func(h Hit) bool { return h.File == bundle.ManifestPath }) {
		t.Fatalf("while writing: %v\nreading back: %v", leak.Hits, readBack)
	}
	if _, statErr := os.Stat(target); !os.IsNotExist(statErr) {
		t.Fatalf("leaking bundle still on disk: %v", statErr)
	}
}

func TestNoLeakScanWhenWaivedOrRedactionOff(t *testing.T) {
	p, err := New(Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	disabled, err := New(Options{Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := (&Flags{SkipLeakScan: true}).LeakScan(p); s != nil {
		t.Error("--skip-leak-scan still scans")
	}
	if s := (&Flags{NoRedact: true, ContainsSecrets: true}).LeakScan(disabled); s != nil {
		t.Error("a disabled policy still scans")
	}
	var none *LeakScan
	if err := none.Check(filepath.Join(t.TempDir(), "absent.tar.gz")); err != nil {
		t.Errorf("Check without a scan = %v", err)
	}
}

// LeakScan skips the files Apply left as they came. That is sound only because a scan
// of such a file finds nothing, which every file of the recorded bundles and a few
// that do hold secrets check here; the files Apply did change scan clean afterwards.
func TestUntouchedFilesScanClean(t *testing.T) {
	p, err := New(Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"cluster-resources/pods/logs/shop/web/app.log": []byte("Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw\n"),
		"cluster-resources/pods/shop.json":             []byte(`{"items":[{"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"hunter2hunter2"}]}]}}]}`),
		"nodes/n1/kubelet.log":                         []byte("I1129 10:00:00.000000 1 kubelet.go:1] pulling with password=hunter2hunter2\n"),
	}
	root := filepath.Join("..", "..", "testdata", "bundles")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var untouched, touched int
	for name, data := range files {
		out, same := p.redactFile(name, data, counter{})
		if same {
			untouched++
		} else {
			touched++
		}
		if hits := p.ScanFile(name, out); len(hits) > 0 {
			t.Errorf("%s (left as it came: %v) scans with hits %v", name, same, hits)
		}
		if same && !bytes.Equal(out, data) {
			t.Errorf("%s: reported untouched but changed", name)
		}
	}
	if untouched < 100 || touched < 3 {
		t.Fatalf("%d files untouched, %d redacted: the corpus does not exercise both", untouched, touched)
	}
}
