package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testSpec() ImageSpec {
	return ImageSpec{
		Name:       "podflow.test/pause:1",
		Entrypoint: []string{"/pause"},
		Entries: []Entry{
			{Path: "/pause", Mode: 0o755, Data: []byte("binary")},
			{Path: "/usr/bin/sleep", Mode: 0o777, Link: "/bin/busybox"},
		},
	}
}

func TestLayoutIsConsistentAndReproducible(t *testing.T) {
	a, err := Layout(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Layout(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of the same spec differ")
	}
	for name, data := range a {
		if hexsum, ok := strings.CutPrefix(name, "blobs/sha256/"); ok {
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != hexsum {
				t.Errorf("blob %s does not match its digest", name)
			}
		}
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(a["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 1 {
		t.Fatalf("index has %d manifests, want 1", len(index.Manifests))
	}
	ref := index.Manifests[0]
	if got := ref.Annotations["io.containerd.image.name"]; got != "podflow.test/pause:1" {
		t.Errorf("image name annotation %q", got)
	}
	if got := ref.Annotations["org.opencontainers.image.ref.name"]; got != "1" {
		t.Errorf("ref name annotation %q", got)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(a["blobs/sha256/"+strings.TrimPrefix(ref.Digest, "sha256:")], &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config struct{ Entrypoint []string } `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(a["blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:")], &config); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(config.Config.Entrypoint, []string{"/pause"}) {
		t.Errorf("entrypoint %v", config.Config.Entrypoint)
	}
	if len(manifest.Layers) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest {
		t.Fatalf("uncompressed layer digest must equal its diff ID: %+v %v", manifest.Layers, config.RootFS.DiffIDs)
	}
	layer := a["blobs/sha256/"+strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")]
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[hdr.Name] = string(hdr.Typeflag) + hdr.Linkname
	}
	want := map[string]string{
		"pause":         string(tar.TypeReg),
		"usr/":          string(tar.TypeDir),
		"usr/bin/":      string(tar.TypeDir),
		"usr/bin/sleep": string(tar.TypeSymlink) + "/bin/busybox",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layer entries %v, want %v", got, want)
	}
}

func TestLayoutRejectsBadSpecs(t *testing.T) {
	for name, spec := range map[string]ImageSpec{
		"no tag":        {Name: "podflow.test/pause"},
		"relative path": {Name: "a:1", Entries: []Entry{{Path: "pause"}}},
		"unclean path":  {Name: "a:1", Entries: []Entry{{Path: "/bin/../pause"}}},
		"duplicate":     {Name: "a:1", Entries: []Entry{{Path: "/a"}, {Path: "/a"}}},
		"file parent":   {Name: "a:1", Entries: []Entry{{Path: "/a"}, {Path: "/a/b"}}},
	} {
		if _, err := Layout(spec); err == nil {
			t.Errorf("%s: Layout accepted %+v", name, spec)
		}
	}
}

func TestWriteFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img", "pause.tar")
	if err := run([]string{"-name", "podflow.test/pause:1", "-o", out, "-entrypoint", "/pause", "-file", bin + "=/pause"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[hdr.Name] = true
	}
	if !names["oci-layout"] || !names["index.json"] || len(names) != 5 {
		t.Errorf("image tar entries %v: want oci-layout, index.json and three blobs", names)
	}
	if err := run([]string{"-name", "a:1", "-o", out, "-file", "nosep"}); err == nil {
		t.Error("a -file without = was accepted")
	}
	if err := run([]string{"-o", out}); err == nil {
		t.Error("a missing -name was accepted")
	}
}

func TestBusyboxEntriesLinksEveryApplet(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "busybox")
	script := "#!/bin/sh\nprintf 'bin/sh\\nusr/bin/wget\\nlinuxrc\\nbin/busybox\\n'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := BusyboxEntries(fake)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Path] = e.Link
	}
	want := map[string]string{
		"/bin/busybox": "", "/etc/passwd": "", "/etc/group": "", "/tmp": "", "/root": "",
		"/bin/sh": "/bin/busybox", "/usr/bin/wget": "/bin/busybox",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	if _, err := BusyboxEntries(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing busybox was accepted")
	}
}
