package redact

import (
	"errors"
	"os"
	"path/filepath"
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
