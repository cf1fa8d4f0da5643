package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// epoch stamps every entry and the image config so builds are reproducible.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// OCI media types used by the layout.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
)

// Entry is one filesystem entry of the image's only layer.
type Entry struct {
	Path string // absolute path inside the image
	Mode int64
	Data []byte
	// Link, when set, makes the entry a symbolic link to Link.
	Link string
	Dir  bool
}

// ImageSpec describes the image to write.
type ImageSpec struct {
	Name       string
	Entrypoint []string
	Cmd        []string
	Entries    []Entry
}

// BusyboxEntries installs a static busybox at /bin/busybox with one link per applet, plus
// the few files a shell image needs (/etc/passwd, /etc/group, /tmp, /root).
func BusyboxEntries(binary string) ([]Entry, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("read busybox %q: %w", binary, err)
	}
	out, err := exec.Command(binary, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("list applets of %q: %w", binary, err)
	}
	entries := []Entry{
		{Path: "/bin/busybox", Mode: 0o755, Data: data},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
		{Path: "/root", Mode: 0o700, Dir: true},
	}
	for _, applet := range strings.Fields(string(out)) {
		p := "/" + strings.TrimPrefix(applet, "/")
		if p == "/bin/busybox" || !strings.Contains(strings.TrimPrefix(p, "/"), "/") {
			continue // top-level names such as linuxrc are boot helpers, not commands
		}
		entries = append(entries, Entry{Path: p, Mode: 0o777, Link: "/bin/busybox"})
	}
	return entries, nil
}

// layerTar builds the layer: parent directories first, entries sorted by path, fixed
// owners and times.
func layerTar(entries []Entry) ([]byte, error) {
	byPath := map[string]Entry{}
	for _, e := range entries {
		if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path || e.Path == "/" {
			return nil, fmt.Errorf("image entry %q: want a clean absolute path", e.Path)
		}
		if _, dup := byPath[e.Path]; dup {
			return nil, fmt.Errorf("image entry %q: given twice", e.Path)
		}
		byPath[e.Path] = e
	}
	for p := range byPath {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = Entry{Path: d, Mode: 0o755, Dir: true}
			} else if !byPath[d].Dir {
				return nil, fmt.Errorf("image entry %q: parent %q is not a directory", p, d)
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := byPath[p]
		hdr := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: e.Mode, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.Dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case e.Link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("write layer entry %q: %w", p, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, fmt.Errorf("write layer entry %q: %w", p, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("finish layer: %w", err)
	}
	return buf.Bytes(), nil
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type blob struct {
	desc descriptor
	data []byte
}

func newBlob(mediaType string, data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{desc: descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}, data: data}
}

func jsonBlob(mediaType string, v any) (blob, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return blob{}, fmt.Errorf("encode %s: %w", mediaType, err)
	}
	return newBlob(mediaType, data), nil
}

// Layout returns the files of the OCI image layout for spec, keyed by path.
func Layout(spec ImageSpec) (map[string][]byte, error) {
	if spec.Name == "" || !strings.Contains(spec.Name, ":") {
		return nil, fmt.Errorf("image name %q: want repository:tag", spec.Name)
	}
	layerData, err := layerTar(spec.Entries)
	if err != nil {
		return nil, err
	}
	layer := newBlob(mediaLayer, layerData)
	config, err := jsonBlob(mediaConfig, map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"Entrypoint": spec.Entrypoint,
			"Cmd":        spec.Cmd,
			"WorkingDir": "/",
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{layer.desc.Digest}},
		"history": []map[string]string{{"created": epoch.Format(time.RFC3339), "created_by": "podflow testbed mkimage"}},
	})
	if err != nil {
		return nil, err
	}
	manifest, err := jsonBlob(mediaManifest, map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        config.desc,
		"layers":        []descriptor{layer.desc},
	})
	if err != nil {
		return nil, err
	}
	ref := manifest.desc
	ref.Platform = &platform{Architecture: runtime.GOARCH, OS: "linux"}
	_, tag, _ := strings.Cut(spec.Name[strings.LastIndex(spec.Name, "/")+1:], ":")
	ref.Annotations = map[string]string{
		// ctr reads the full name from the containerd annotation; the OCI one is the tag.
		"io.containerd.image.name":          spec.Name,
		"org.opencontainers.image.ref.name": tag,
	}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": []descriptor{ref}})
	if err != nil {
		return nil, fmt.Errorf("encode index: %w", err)
	}
	files := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": index,
	}
	for _, b := range []blob{layer, config, manifest} {
		files["blobs/sha256/"+strings.TrimPrefix(b.desc.Digest, "sha256:")] = b.data
	}
	return files, nil
}

// WriteFile writes spec's image layout as a tar at out, atomically.
func WriteFile(out string, spec ImageSpec) error {
	files, err := Layout(spec)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: epoch, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %q: %w", n, err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			return fmt.Errorf("write %q: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("finish %q: %w", out, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("write image %q: %w", out, err)
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write image %q: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write image %q: %w", out, err)
	}
	return nil
}
