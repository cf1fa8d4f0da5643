package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mholt/archiver/v3"
)

// Filter rewrites a file's bytes before they reach the bundle; redaction is a Filter.
type Filter interface {
	Apply(name string, data []byte) ([]byte, error)
}

// WriterOptions configure Create.
type WriterOptions struct {
	// Root is the top directory inside an archive, e.g. podflow-prod-20260101T000000Z.
	Root string
	// Force replaces an existing target.
	Force bool
	// Filter, when set, is applied to every file except the manifest.
	Filter Filter
	// ModTime is stamped on archive entries; zero means now.
	ModTime time.Time
}

// Writer writes a bundle atomically: everything goes to a temporary sibling of the
// target, which is renamed into place by Close. Until then nothing exists at the target.
// WriteFile is safe for concurrent use.
type Writer struct {
	target string
	tmp    string
	opts   WriterOptions
	dir    bool

	mu     sync.Mutex
	file   *os.File
	out    *errWriter
	tar    archiver.Writer
	files  map[string]File
	closed bool
}

// Archive kinds chosen from the target name.
func archiveFor(target string) (archiver.Writer, bool) {
	switch {
	case strings.HasSuffix(target, ".tar.gz"), strings.HasSuffix(target, ".tgz"):
		return &archiver.TarGz{Tar: &archiver.Tar{}, CompressionLevel: 6, SingleThreaded: true}, true
	case strings.HasSuffix(target, ".tar"):
		return &archiver.Tar{}, true
	}
	return nil, false
}

// Create starts a bundle at target. A target ending in .tar.gz, .tgz or .tar is an
// archive; anything else is written as a directory.
func Create(target string, opts WriterOptions) (*Writer, error) {
	if opts.Root == "" {
		opts.Root = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(target), ".gz"), ".tar"), ".tgz")
	}
	if opts.ModTime.IsZero() {
		opts.ModTime = time.Now().UTC()
	}
	if _, err := os.Lstat(target); err == nil && !opts.Force {
		return nil, fmt.Errorf("create bundle %q: %w", target, ErrExists)
	}
	w := &Writer{target: target, opts: opts, files: map[string]File{}}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create bundle %q: %w", target, err)
	}
	// Leftovers of a killed earlier run; one that cannot be removed is no reason not to
	// write this bundle, and the next run tries again.
	_, _ = RemoveStalePartials(target)
	tw, isArchive := archiveFor(target)
	if !isArchive {
		tmp, err := os.MkdirTemp(dir, PartialPattern(target))
		if err != nil {
			return nil, fmt.Errorf("create bundle %q: %w", target, err)
		}
		w.tmp, w.dir = tmp, true
		return w, nil
	}
	f, err := os.CreateTemp(dir, PartialPattern(target))
	if err != nil {
		return nil, fmt.Errorf("create bundle %q: %w", target, err)
	}
	w.tmp, w.file, w.tar = f.Name(), f, tw
	w.out = &errWriter{w: f}
	if err := tw.Create(w.out); err != nil {
		w.Abort()
		return nil, fmt.Errorf("create bundle %q: %w", target, err)
	}
	return w, nil
}

// Target is the path the bundle will have once closed.
func (w *Writer) Target() string { return w.target }

// Has reports whether name was already written.
func (w *Writer) Has(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.files[name]
	return ok
}

// WriteFile adds one file. Names are slash-separated bundle paths; each may be written once.
func (w *Writer) WriteFile(name string, data []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if name == ManifestPath {
		return fmt.Errorf("write %s: the manifest is written by Close", name)
	}
	if w.opts.Filter != nil {
		var err error
		if data, err = w.opts.Filter.Apply(name, data); err != nil {
			return fmt.Errorf("filter %s: %w", name, err)
		}
	}
	return w.write(name, data)
}

// WriteJSON marshals v with indentation and adds it as name.
func (w *Writer) WriteJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return w.WriteFile(name, append(data, '\n'))
}

func (w *Writer) write(name string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("write %s: bundle already closed", name)
	}
	if _, dup := w.files[name]; dup {
		return fmt.Errorf("write %s: file written twice", name)
	}
	sum := sha256.Sum256(data)
	if w.dir {
		p := filepath.Join(w.tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	} else {
		err := w.tar.Write(archiver.File{
			FileInfo: archiver.FileInfo{
				FileInfo:   memInfo{name: path.Base(name), size: int64(len(data)), mod: w.opts.ModTime},
				CustomName: path.Join(w.opts.Root, name),
			},
			ReadCloser: io.NopCloser(bytes.NewReader(data)),
		})
		if err == nil {
			err = w.out.err
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if name != ManifestPath {
		w.files[name] = File{Path: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	}
	return nil
}

// Close fills the manifest's file list and format version, writes podflow.json last and
// moves the bundle into place. On any error the partial bundle is removed.
func (w *Writer) Close(m *Manifest) (err error) {
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	if !w.Has(VersionMarkerPath) {
		if err := w.write(VersionMarkerPath, []byte(versionMarker)); err != nil {
			return err
		}
	}
	w.mu.Lock()
	m.FormatVersion = FormatVersion
	m.Files = m.Files[:0]
	for _, f := range w.files {
		m.Files = append(m.Files, f)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	w.mu.Unlock()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ManifestPath, err)
	}
	if err := w.write(ManifestPath, append(data, '\n')); err != nil {
		return err
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	if !w.dir {
		if err := w.tar.Close(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
		// archiver drops the gzip Close error; errWriter keeps any write failure.
		if w.out.err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, w.out.err)
		}
		if err := w.file.Sync(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
		if err := w.file.Close(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
	}
	if w.opts.Force {
		if err := os.RemoveAll(w.target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("replace bundle %q: %w", w.target, err)
		}
	} else if _, err := os.Lstat(w.target); err == nil {
		return fmt.Errorf("create bundle %q: %w", w.target, ErrExists)
	}
	if err := os.Rename(w.tmp, w.target); err != nil {
		return fmt.Errorf("finish bundle %q: %w", w.target, err)
	}
	w.tmp = ""
	return nil
}

// Abort discards a bundle that will not be finished. It is safe to call more than once
// and after Close.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.file != nil {
		_ = w.file.Close() // the file is being discarded; its close error changes nothing
	}
	if w.tmp != "" {
		_ = os.RemoveAll(w.tmp) // best effort: a leftover is a hidden .partial- sibling
		w.tmp = ""
	}
}

const versionMarker = `apiVersion: troubleshoot.sh/v1beta2
kind: SupportBundle
spec:
  versionNumber: podflow-bundle-v1
`

// errWriter remembers the first write error, because archiver discards the error of
// closing the gzip stream.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

type memInfo struct {
	name string
	size int64
	mod  time.Time
}

func (m memInfo) Name() string       { return m.name }
func (m memInfo) Size() int64        { return m.size }
func (m memInfo) Mode() fs.FileMode  { return 0o644 }
func (m memInfo) ModTime() time.Time { return m.mod }
func (m memInfo) IsDir() bool        { return false }
func (m memInfo) Sys() any           { return nil }
