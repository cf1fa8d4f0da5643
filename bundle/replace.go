package bundle

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// NotReplaceableError is returned for an output that exists and that podflow will
// not replace, --force or not: it is not a bundle podflow wrote, or it is one of the
// inputs of the run, or it holds the working directory. Its message gives the reason
// and never suggests --force.
type NotReplaceableError struct {
	Target string
	Reason string
}

func (e *NotReplaceableError) Error() string {
	return fmt.Sprintf("output %q exists and %s; podflow replaces only a bundle it wrote: choose another output", e.Target, e.Reason)
}

// maxManifestBytes bounds the podflow.json read to recognize a bundle.
const maxManifestBytes = 64 << 20

// checkReplaceable says whether an existing target may be replaced by a bundle: it
// must be a podflow bundle (a directory holding only the files its manifest lists, or
// a regular .tar/.tar.gz file whose archive ends with a readable podflow.json), never
// a link, device, FIFO or other file, never one of inputs or a folder holding one,
// and never a folder holding the working directory. A target that does not exist is
// replaceable.
func checkReplaceable(target string, inputs []string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create bundle %q: %w", target, err)
	}
	refuse := func(reason string) error { return &NotReplaceableError{Target: target, Reason: reason} }
	abs, err := filepath.Abs(target)
	if err != nil {
		return fmt.Errorf("create bundle %q: %w", target, err)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ifi, err := os.Stat(in); err == nil && os.SameFile(fi, ifi) {
			return refuse("is an input of this run")
		}
		if inAbs, err := filepath.Abs(in); err == nil && within(abs, inAbs) {
			return refuse("holds an input of this run")
		}
	}
	if wd, err := os.Getwd(); err == nil && within(abs, wd) {
		return refuse("holds the working directory")
	}
	switch {
	case fi.Mode().IsDir():
		if reason := ownBundleDir(target); reason != "" {
			return refuse(reason)
		}
	case fi.Mode().IsRegular():
		if isArchive, _ := archiveFor(target); !isArchive {
			return refuse("is a file, and a bundle written under this name is a directory")
		}
		if reason := ownBundleArchive(target); reason != "" {
			return refuse(reason)
		}
	default:
		return refuse("is not a regular file or directory (" + fi.Mode().Type().String() + ")")
	}
	return nil
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ownBundleDir returns "" for a directory bundle podflow wrote: a readable manifest,
// and nothing but directories and the regular files the manifest lists.
func ownBundleDir(dir string) string {
	data, err := readCapped(filepath.Join(dir, ManifestPath))
	if err != nil {
		return "is a directory without a podflow manifest (" + ManifestPath + ")"
	}
	m, err := ParseManifest(data)
	if err != nil {
		return "is a directory whose " + ManifestPath + " is not readable"
	}
	listed := map[string]bool{ManifestPath: true}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	reason := ""
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			reason = "is a directory podflow cannot list in full"
			return fs.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || !listed[rel] {
			reason = "is a directory holding " + rel + ", which is not part of the bundle its manifest lists"
			return fs.SkipAll
		}
		return nil
	})
	return reason
}

// ownBundleArchive returns "" for a .tar or .tar.gz podflow wrote: its entries are
// one top directory's and the last of them is a readable podflow.json. The headers
// are read in one pass; the members' contents are skipped.
func ownBundleArchive(p string) string {
	const notOurs = "is not a podflow bundle archive"
	f, err := os.Open(p)
	if err != nil {
		return notOurs
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return notOurs
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	var manifest *Manifest
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return notOurs
		}
		manifest = nil
		if _, rest, ok := strings.Cut(path.Clean(h.Name), "/"); ok && rest == ManifestPath && h.Typeflag == tar.TypeReg && h.Size <= maxManifestBytes {
			data, err := io.ReadAll(tr)
			if err != nil {
				return notOurs
			}
			if manifest, err = ParseManifest(data); err != nil {
				return notOurs
			}
		}
	}
	if manifest == nil {
		return notOurs
	}
	return ""
}

func readCapped(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifestBytes {
		return nil, errors.New("not a manifest")
	}
	return io.ReadAll(io.LimitReader(f, maxManifestBytes))
}
