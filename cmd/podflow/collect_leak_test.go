package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
)

// writeUnredacted writes a bundle without a filter, as collect does with its leak scan
// (nil: none): two logs, one carrying leak in the middle of other lines.
func writeUnredacted(t *testing.T, target, leak string, leaks *redact.LeakScan) string {
	t.Helper()
	opts := bundle.WriterOptions{}
	if leaks != nil {
		opts.Scan = leaks.File
	}
	w, err := bundle.Create(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		bundle.LogPath("shop", "web", "app", false): "starting\nlistening on :8080\n",
		bundle.LogPath("shop", "api", "app", false): "starting\n" + leak + "\nready\n",
	}
	for name, data := range files {
		if err := w.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&bundle.Manifest{}); err != nil {
		t.Fatal(err)
	}
	return target
}

func TestCheckCollectedRemovesALeakingBundle(t *testing.T) {
	const secret = "Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw"
	for _, name := range []string{"b.tar.gz", "b-dir"} {
		t.Run(name, func(t *testing.T) {
			p, err := redact.New(redact.Options{Key: []byte("k")})
			if err != nil {
				t.Fatal(err)
			}
			leaks := (&redact.Flags{}).LeakScan(p)
			target := writeUnredacted(t, filepath.Join(t.TempDir(), name), secret, leaks)
			checkLeakRemoved(t, target, leaks.Check(target))
		})
	}
}

func checkLeakRemoved(t *testing.T, target string, err error) {
	t.Helper()
	var leak *redact.LeakError
	if !errors.As(err, &leak) || !leak.Removed || len(leak.Hits) == 0 {
		t.Fatalf("leak scan = %v, want a LeakError with the bundle removed", err)
	}
	if _, statErr := os.Stat(target); !os.IsNotExist(statErr) {
		t.Fatalf("leaking bundle still on disk: %v", statErr)
	}
	if msg := err.Error(); !strings.Contains(msg, "cluster-resources/pods/logs/shop/api/app.log:2:") || strings.Contains(msg, "c2VjcmV0") {
		t.Fatalf("message must name file and line and never the value:\n%s", msg)
	}
}

func TestCheckCollectedKeepsCleanOrWaivedBundles(t *testing.T) {
	p, err := redact.New(redact.Options{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	leaky := "Authorization: Bearer c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw"
	cases := []struct {
		name  string
		line  string
		flags redact.Flags
	}{
		{"clean", "connected to the database", redact.Flags{}},
		{"waived with --skip-leak-scan", leaky, redact.Flags{SkipLeakScan: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaks := tc.flags.LeakScan(p)
			target := writeUnredacted(t, filepath.Join(t.TempDir(), "b-dir"), tc.line, leaks)
			if err := leaks.Check(target); err != nil {
				t.Fatalf("leak scan = %v, want nil", err)
			}
			if _, err := os.Stat(target); err != nil {
				t.Fatalf("bundle removed: %v", err)
			}
		})
	}
}
