package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mholt/archiver/v3"
)

// Limits cap what a reader accepts, so a hostile or runaway archive cannot exhaust memory.
type Limits struct {
	MaxFileSize  int64
	MaxTotalSize int64
	// SkipLinks leaves symbolic and hard links out, listed in Bundle.Skipped, instead of
	// refusing the input: a sosreport links many of its files (hostname, ps, ...) to their
	// sos_commands output. Links are never followed either way.
	SkipLinks bool
}

// DefaultLimits are generous: far above any bundle podflow writes.
func DefaultLimits() Limits {
	return Limits{MaxFileSize: 1 << 30, MaxTotalSize: 8 << 30}
}

// Bundle is a bundle loaded into memory: a read-only set of files keyed by bundle path.
// Archives are read as streams; nothing is extracted to disk.
type Bundle struct {
	// Source is the path the bundle was opened from.
	Source string
	// Root is the top directory that was stripped from every entry, if any.
	Root string
	// Manifest is nil when the bundle has no podflow.json (a bundle from another tool).
	Manifest *Manifest
	// Skipped lists the links left out under Limits.SkipLinks, with what they point at.
	Skipped []SkippedEntry
	files   map[string][]byte
	names   []string
	size    int64
}

// SkippedEntry is an input entry that was not read, and why.
type SkippedEntry struct {
	Name   string
	Reason string
}

// New builds a bundle from files already in memory (tests, importers, merges).
func New(source string, files map[string][]byte) (*Bundle, error) {
	b := &Bundle{Source: source, files: map[string][]byte{}}
	for name, data := range files {
		if err := checkName(name); err != nil {
			return nil, err
		}
		b.files[name] = data
		b.size += int64(len(data))
	}
	return b, b.finish()
}

// Open reads a bundle from a .tar.gz, .tgz or .tar archive or from a directory.
func Open(p string, limits Limits) (*Bundle, error) {
	if limits.MaxFileSize <= 0 || limits.MaxTotalSize <= 0 {
		skip := limits.SkipLinks
		limits = DefaultLimits()
		limits.SkipLinks = skip
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	b := &Bundle{Source: p, files: map[string][]byte{}}
	if st.IsDir() {
		err = b.readDir(p, limits)
	} else {
		err = b.readArchive(p, limits)
	}
	if err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	if err := b.finish(); err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	return b, nil
}

func (b *Bundle) finish() error {
	b.stripRoot()
	b.names = b.names[:0]
	for n := range b.files {
		b.names = append(b.names, n)
	}
	sort.Strings(b.names)
	if data, ok := b.files[ManifestPath]; ok {
		m, err := ParseManifest(data)
		if err != nil {
			return err
		}
		b.Manifest = m
	}
	return nil
}

// stripRoot removes a single top directory shared by every entry, so that
// podflow-x-2026.../cluster-resources/... reads as cluster-resources/....
func (b *Bundle) stripRoot() {
	root := ""
	for n := range b.files {
		first, _, ok := strings.Cut(n, "/")
		if !ok || (root != "" && first != root) {
			return
		}
		root = first
	}
	if root == "" || root == ClusterResources || root == NodesDir {
		return
	}
	stripped := make(map[string][]byte, len(b.files))
	for n, d := range b.files {
		stripped[strings.TrimPrefix(n, root+"/")] = d
	}
	for i := range b.Skipped {
		b.Skipped[i].Name = strings.TrimPrefix(b.Skipped[i].Name, root+"/")
	}
	b.files, b.Root = stripped, root
}

func (b *Bundle) add(name string, r io.Reader, limits Limits) error {
	if _, dup := b.files[name]; dup {
		return &UnsafeEntryError{Entry: name, Reason: "duplicate entry"}
	}
	data, err := io.ReadAll(io.LimitReader(r, limits.MaxFileSize+1))
	if err != nil {
		return fmt.Errorf("read entry %q: %w", name, err)
	}
	if int64(len(data)) > limits.MaxFileSize {
		return &LimitError{Entry: name, Limit: limits.MaxFileSize}
	}
	b.size += int64(len(data))
	if b.size > limits.MaxTotalSize {
		return &LimitError{Entry: name, Limit: limits.MaxTotalSize, Total: true}
	}
	b.files[name] = data
	return nil
}

func (b *Bundle) readArchive(p string, limits Limits) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(6) // a short file simply matches no magic below
	var rd archiver.Reader
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		rd = &archiver.TarGz{Tar: &archiver.Tar{}, SingleThreaded: true}
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		rd = &archiver.TarXz{Tar: &archiver.Tar{}}
	default:
		rd = &archiver.Tar{}
	}
	if err := rd.Open(br, 0); err != nil {
		return fmt.Errorf("not a tar, tar.gz or tar.xz archive: %w", err)
	}
	defer rd.Close()
	for {
		af, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		hdr, ok := af.Header.(*tar.Header)
		if !ok {
			return fmt.Errorf("read archive: entry without a tar header")
		}
		name, skip, err := entryName(hdr)
		var ue *UnsafeEntryError
		if limits.SkipLinks && (hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink) && errors.As(err, &ue) &&
			checkName(strings.TrimPrefix(hdr.Name, "./")) == nil {
			b.Skipped = append(b.Skipped, SkippedEntry{Name: strings.TrimPrefix(hdr.Name, "./"), Reason: ue.Reason})
			continue
		}
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if err := b.add(name, af, limits); err != nil {
			return err
		}
	}
	if len(b.files) == 0 {
		return fmt.Errorf("archive holds no files")
	}
	return nil
}

// entryName validates one tar header and returns the cleaned name; skip is true for
// directories and metadata entries that carry no file.
func entryName(hdr *tar.Header) (string, bool, error) {
	switch hdr.Typeflag {
	case tar.TypeReg:
	case tar.TypeDir, tar.TypeXGlobalHeader:
		return "", true, checkName(strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/"))
	case tar.TypeSymlink:
		return "", false, &UnsafeEntryError{Entry: hdr.Name, Reason: "symbolic link to " + hdr.Linkname}
	case tar.TypeLink:
		return "", false, &UnsafeEntryError{Entry: hdr.Name, Reason: "hard link to " + hdr.Linkname}
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return "", false, &UnsafeEntryError{Entry: hdr.Name, Reason: "device or fifo"}
	default:
		return "", false, &UnsafeEntryError{Entry: hdr.Name, Reason: fmt.Sprintf("unsupported entry type %q", hdr.Typeflag)}
	}
	name := strings.TrimPrefix(hdr.Name, "./")
	return name, false, checkName(name)
}

// checkName refuses names that could escape a directory or are not plain relative paths.
func checkName(name string) error {
	if name == "." || name == "" {
		return nil
	}
	switch {
	case strings.ContainsRune(name, 0):
		return &UnsafeEntryError{Entry: name, Reason: "NUL byte in name"}
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || (len(name) > 1 && name[1] == ':'):
		return &UnsafeEntryError{Entry: name, Reason: "absolute path"}
	case strings.Contains(name, `\`):
		return &UnsafeEntryError{Entry: name, Reason: "backslash in name"}
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return &UnsafeEntryError{Entry: name, Reason: "parent directory reference"}
		}
	}
	if path.Clean(name) != name {
		return &UnsafeEntryError{Entry: name, Reason: "name is not clean"}
	}
	return nil
}

func (b *Bundle) readDir(root string, limits Limits) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return nil
		}
		if limits.SkipLinks && d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p) // only shown, never followed
			b.Skipped = append(b.Skipped, SkippedEntry{Name: rel, Reason: "symbolic link to " + target})
			return nil
		}
		if !d.Type().IsRegular() {
			return &UnsafeEntryError{Entry: rel, Reason: "not a regular file (" + d.Type().String() + ")"}
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return b.add(rel, f, limits)
	})
}

// ReadFile returns a file's bytes; a missing file is fs.ErrNotExist.
func (b *Bundle) ReadFile(name string) ([]byte, error) {
	data, ok := b.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return data, nil
}

// Has reports whether the bundle holds name.
func (b *Bundle) Has(name string) bool {
	_, ok := b.files[name]
	return ok
}

// Names lists every file, sorted.
func (b *Bundle) Names() []string { return b.names }

// Size is the uncompressed size of all files.
func (b *Bundle) Size() int64 { return b.size }

// Files returns the bundle's contents; callers must not modify the map or its slices.
func (b *Bundle) Files() map[string][]byte { return b.files }
