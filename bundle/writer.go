package bundle

import (
	"archive/tar"
	"bufio"
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

	"github.com/klauspost/compress/gzip"

	"podflow.dev/podflow/internal/checkpoint"
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
	// Inputs are the paths the run reads: an existing target that is one of them, or
	// holds one, is never replaced, --force or not.
	Inputs []string
	// ModTime is stamped on archive entries; zero means now.
	ModTime time.Time
	// Scan, when set, sees every file as it goes into the bundle, after Filter and
	// manifest included: a leak scan of exactly what is written, without reading the
	// bundle back. It is called by the goroutines that write, several at once.
	Scan func(name string, data []byte)
}

// Writer writes a bundle atomically: everything goes to a temporary sibling of the
// target, which is renamed into place by Close. Until then nothing exists at the target.
// WriteFile is safe for concurrent use. An archive is written by a goroutine of its
// own: a file is checksummed and its tar header built by the goroutine that writes it,
// which hands both to the archiver and goes on, so compression (one gzip stream, whose
// window spans files) runs alongside the collection instead of holding up every writer.
type Writer struct {
	target string
	tmp    string
	opts   WriterOptions
	dir    bool

	mu      sync.Mutex
	files   map[string]File
	pending map[string]bool // being handed to the archiver
	closed  bool

	// Archives only.
	file *os.File
	gz   bool
	// entries feed the archiver; sending tracks writers between the check of closed and
	// their send, so entries is closed only once none can send any more.
	entries  chan archiveEntry
	sending  sync.WaitGroup
	stopped  bool
	archived chan struct{}
	// err is the archiver's first failure; later writes and Close return it.
	err error
}

// archiveEntry is one file on its way into the archive.
type archiveEntry struct {
	header, data []byte
}

// compressionLevel is the gzip level of .tar.gz and .tgz bundles.
const compressionLevel = 6

// queuedEntries bounds the files written but not yet archived, and so the memory they
// hold.
const queuedEntries = 8

// Archive kinds chosen from the target name.
func archiveFor(target string) (isArchive, gz bool) {
	switch {
	case strings.HasSuffix(target, ".tar.gz"), strings.HasSuffix(target, ".tgz"):
		return true, true
	case strings.HasSuffix(target, ".tar"):
		return true, false
	}
	return false, false
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
	if _, err := os.Lstat(target); err == nil {
		// Only a bundle podflow wrote may be replaced; anything else is refused with
		// a reason and no advice to force it.
		if err := checkReplaceable(target, opts.Inputs); err != nil {
			return nil, err
		}
		if !opts.Force {
			return nil, fmt.Errorf("create bundle %q: %w", target, ErrExists)
		}
	}
	w := &Writer{target: target, opts: opts, files: map[string]File{}, pending: map[string]bool{}}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create bundle %q: %w", target, err)
	}
	// Leftovers of a killed earlier run; one that cannot be removed is no reason not to
	// write this bundle, and the next run tries again.
	_, _ = RemoveStalePartials(target)
	isArchive, gz := archiveFor(target)
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
	w.tmp, w.file, w.gz = f.Name(), f, gz
	w.entries, w.archived = make(chan archiveEntry, queuedEntries), make(chan struct{})
	go w.archive()
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
	return w.add(name, data, false)
}

// HandOver is WriteFile for bytes the caller gives up: the bundle may keep data until
// it is archived, so the caller must not change it after the call. It spares a copy of
// every log and list of a collection.
func (w *Writer) HandOver(name string, data []byte) error {
	return w.add(name, data, true)
}

func (w *Writer) add(name string, data []byte, owned bool) error {
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
	return w.write(name, data, owned)
}

// WriteJSON marshals v with indentation and adds it as name.
func (w *Writer) WriteJSON(name string, v any) error {
	data, err := marshalIndent(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return w.HandOver(name, data)
}

// marshalIndent is json.MarshalIndent(v, "", "  ") and a final newline, with a faster
// indentation pass (see indentJSON).
func marshalIndent(v any) ([]byte, error) {
	compact, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Indentation about doubles a Kubernetes list; one allocation is enough for most.
	return append(indentJSON(make([]byte, 0, 2*len(compact)+1), compact), '\n'), nil
}

// write adds a file as it is; owned says the writer may keep data rather than a copy.
func (w *Writer) write(name string, data []byte, owned bool) error {
	if err := w.reserve(name); err != nil {
		return err
	}
	if w.opts.Scan != nil {
		w.opts.Scan(name, data)
	}
	sum := sha256.Sum256(data)
	var err error
	if w.dir {
		err = w.writeFile(name, data)
	} else {
		err = w.send(name, data, owned)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pending, name)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if name != ManifestPath {
		w.files[name] = File{Path: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	}
	w.mu.Unlock()
	checkpoint.Reach("write")
	w.mu.Lock() // for the deferred Unlock
	return nil
}

// reserve claims name for one write; an archive's writer is counted as sending until
// send returns.
func (w *Writer) reserve(name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return fmt.Errorf("write %s: bundle already closed", name)
	case w.err != nil:
		return fmt.Errorf("write %s: %w", name, w.err)
	case w.pending[name]:
		return fmt.Errorf("write %s: file written twice", name)
	}
	if _, dup := w.files[name]; dup {
		return fmt.Errorf("write %s: file written twice", name)
	}
	w.pending[name] = true
	if !w.dir {
		w.sending.Add(1)
	}
	return nil
}

func (w *Writer) writeFile(name string, data []byte) error {
	p := filepath.Join(w.tmp, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// send hands a file to the archiver: its tar header, and its bytes, copied unless
// owned, since a WriteFile caller may reuse them once the call returns.
func (w *Writer) send(name string, data []byte, owned bool) error {
	defer w.sending.Done()
	hdr, err := tar.FileInfoHeader(memInfo{name: path.Base(name), size: int64(len(data)), mod: w.opts.ModTime}, "")
	if err != nil {
		return err
	}
	hdr.Name = path.Join(w.opts.Root, name)
	var header bytes.Buffer
	// Only the header is written through this tar.Writer; the archiver adds the data
	// and the padding that ends its last block.
	if err := tar.NewWriter(&header).WriteHeader(hdr); err != nil {
		return err
	}
	if !owned {
		data = bytes.Clone(data)
	}
	w.entries <- archiveEntry{header: header.Bytes(), data: data}
	return nil
}

// archive writes the entries it is handed to the archive file, then the end of the tar
// stream, and stops at the first failure, which it records.
func (w *Writer) archive() {
	defer close(w.archived)
	buf := bufio.NewWriterSize(w.file, 256<<10)
	var (
		out io.Writer = buf
		zw  *gzip.Writer
		err error
	)
	if w.gz {
		if zw, err = gzip.NewWriterLevel(buf, compressionLevel); err != nil {
			w.fail(err) // and drain below
		}
		out = zw
	}
	var zeros [2 * tarBlock]byte
	for e := range w.entries {
		if err != nil || w.failed() != nil {
			continue // drain, so that no writer blocks
		}
		if _, err = out.Write(e.header); err == nil {
			if _, err = out.Write(e.data); err == nil {
				_, err = out.Write(zeros[:(tarBlock-len(e.data)%tarBlock)%tarBlock])
			}
		}
		if err != nil {
			w.fail(err)
		}
	}
	if err != nil || w.failed() != nil {
		return
	}
	// The end of a tar stream is two zero blocks.
	if _, err = out.Write(zeros[:]); err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil {
		err = buf.Flush()
	}
	if err != nil {
		w.fail(err)
	}
}

const tarBlock = 512

// errAborted stops the archiver of a bundle that is being discarded.
var errAborted = errors.New("bundle aborted")

func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stop lets the archiver finish: no write can start any more, those under way are
// handed over, and the archiver has written all it was given. It is safe to call more
// than once.
func (w *Writer) stop() {
	w.mu.Lock()
	w.closed = true
	if w.stopped || w.entries == nil {
		w.mu.Unlock()
		return
	}
	w.stopped = true
	w.mu.Unlock()
	w.sending.Wait()
	close(w.entries)
	<-w.archived
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
		if err := w.write(VersionMarkerPath, []byte(versionMarker), true); err != nil {
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
	if err := w.write(ManifestPath, append(data, '\n'), true); err != nil {
		return err
	}
	w.stop()
	if !w.dir {
		if err := w.failed(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
		if err := w.file.Sync(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
		if err := w.file.Close(); err != nil {
			return fmt.Errorf("finish bundle %q: %w", w.target, err)
		}
	}
	if w.opts.Force {
		// What is at the target now is checked again: it may have changed since Create.
		if err := checkReplaceable(w.target, w.opts.Inputs); err != nil {
			return err
		}
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
	w.fail(errAborted)
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
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
