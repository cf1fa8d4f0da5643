package bundle

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSkipLinks reads an archive holding links: refused by default, left out and listed
// under SkipLinks.
func TestSkipLinks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sos.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := tar.NewWriter(f)
	data := []byte("node-1\n")
	for _, h := range []*tar.Header{
		{Name: "sosreport-node-1/sos_commands/host/hostname", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))},
		{Name: "sosreport-node-1/hostname", Typeflag: tar.TypeSymlink, Linkname: "sos_commands/host/hostname"},
		{Name: "sosreport-node-1/etc/shadow", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"},
	} {
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	f.Close()

	var ue *UnsafeEntryError
	if _, err := Open(p, DefaultLimits()); !errors.As(err, &ue) {
		t.Fatalf("links accepted by default: %v", err)
	}
	limits := DefaultLimits()
	limits.SkipLinks = true
	b, err := Open(p, limits)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Names()) != 1 || b.Names()[0] != "sos_commands/host/hostname" {
		t.Errorf("names %v", b.Names())
	}
	want := []SkippedEntry{{Name: "hostname", Reason: "symbolic link to sos_commands/host/hostname"}, {Name: "etc/shadow", Reason: "hard link to /etc/shadow"}}
	if len(b.Skipped) != 2 || b.Skipped[0] != want[0] || b.Skipped[1] != want[1] {
		t.Errorf("skipped %+v, want %+v", b.Skipped, want)
	}
}
