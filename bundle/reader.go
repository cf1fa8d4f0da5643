package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mholt/archiver/v3"

	"podflow.dev/podflow/internal/checkpoint"
)

// Limits cap what a reader accepts, so a hostile or runaway archive cannot exhaust memory.
type Limits struct {
	MaxFileSize  int64
	MaxTotalSize int64
	// SkipLinks leaves symbolic and hard links out, listed in Bundle.Skipped, instead of
	// refusing the input: a sosreport links many of its files (hostname, ps, ...) to their
	// sos_commands output. Links are never followed either way.
	SkipLinks bool
	// SkipUnreadable leaves out, listed in Bundle.Skipped, a file of a directory that
	// cannot be read or is not a regular file (a fifo, a socket), instead of failing:
	// for loose evidence and other tools' output, where the rest is still worth reading.
	SkipUnreadable bool
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
	// packed holds the files OpenReadOnce keeps compressed; a file is in files or in
	// packed, never both.
	packed map[string]packedFile
	// sums holds the digests of the packed files, taken while they were raw, for
	// Verify; a bundle read once lets them go when its consumer takes its first file
	// (markTaken).
	sums map[string]Digest
	// packedHigh is how many files packed held when it was last made: once Take and
	// Drop have let three quarters of them go it is made again (forgetPacked).
	packedHigh int
	names      []string
	size       int64
	// digests is set for a bundle opened by Scan: every file's size, checksum and list
	// item count, read once; files then holds only the manifest.
	digests    map[string]Digest
	buf        []byte
	countItems bool
	// pack is set by OpenReadOnce: files are kept by keepPacked, through scratch.
	pack    bool
	scratch []byte
	// packedBytes counts the blocks kept in memory; spillTo holds the rest.
	packedBytes int
	spillTo     spillFile
	// visit, when set, sees every scanned file as it streams by (ScanOptions.Each).
	visit func(name string, data []byte) error
	// visitRoot is the top directory visit names are stripped of, decided on the
	// first entry; "-" once decided that there is none.
	visitRoot string
	// readOnce is set by ReadOnce; taken marks the files Take let go of, a bit for
	// each name of names: a map of the taken names was 5 MB at 20k pods, the most of
	// what a read bundle still holds while the node files load.
	readOnce bool
	taken    []uint64
	// trimmed lists the container logs OpenReadOnce kept to their tail (LogTailBytes).
	trimmed map[string]Trim
}

// ErrMixedRoot is returned by Scan with ScanOptions.Each when the archive's entries turn out not to share
// the top directory the first entry suggested: the names already handed on were
// stripped of it, so the caller must start again with Open.
var ErrMixedRoot = errors.New("archive entries do not share one top directory")

// Digest is what Scan keeps of a file instead of its bytes.
type Digest struct {
	Size   int64
	SHA256 [sha256.Size]byte
	// Items is the number of items of a cluster or namespaced list; Unreadable is true
	// when such a list is not valid JSON.
	Items      int
	Unreadable bool
}

// SkippedEntry is an input entry that was not read, and why.
type SkippedEntry struct {
	Name   string
	Reason string
	// Unreadable is true for a file that could not be read, false for a link.
	Unreadable bool
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
	return OpenContext(context.Background(), p, limits)
}

// OpenContext is Open that stops, with ctx's error, once ctx is done.
func OpenContext(ctx context.Context, p string, limits Limits) (*Bundle, error) {
	return openWith(ctx, p, limits, openMode{})
}

// ScanOptions say what Scan does with each file besides checksumming it.
type ScanOptions struct {
	// CountItems counts the items of every cluster and namespaced list (for Summarize).
	CountItems bool
	// Each, when set, is handed every file but the manifest as it streams by, under the
	// name Open would give it; data is only valid during the call. A bundle whose entries
	// do not all share the first entry's top directory then ends with ErrMixedRoot.
	Each func(name string, data []byte) error
}

// Scan reads a bundle once without keeping its files: each is checksummed as it
// streams by, and only the manifest stays in memory. Its memory is the largest file,
// whatever the bundle's size. ReadFile on a scanned bundle finds only the manifest;
// Verify and (with CountItems) Summarize work from the digests.
func Scan(p string, limits Limits, opts ScanOptions) (*Bundle, error) {
	return ScanContext(context.Background(), p, limits, opts)
}

// ScanContext is Scan that stops, with ctx's error, once ctx is done.
func ScanContext(ctx context.Context, p string, limits Limits, opts ScanOptions) (*Bundle, error) {
	return openWith(ctx, p, limits, openMode{scan: &opts})
}

// openMode says how openWith keeps what it reads: everything raw (Open), digests
// (Scan), or compressed for one read (OpenReadOnce).
type openMode struct {
	scan *ScanOptions
	pack bool
}

func openWith(ctx context.Context, p string, limits Limits, mode openMode) (*Bundle, error) {
	if limits.MaxFileSize <= 0 || limits.MaxTotalSize <= 0 {
		skipLinks, skipUnreadable := limits.SkipLinks, limits.SkipUnreadable
		limits = DefaultLimits()
		limits.SkipLinks, limits.SkipUnreadable = skipLinks, skipUnreadable
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	b := &Bundle{Source: p, files: map[string][]byte{}, pack: mode.pack, readOnce: mode.pack}
	if scan := mode.scan; scan != nil {
		b.digests = map[string]Digest{}
		b.visit, b.countItems = scan.Each, scan.CountItems
	}
	if st.IsDir() {
		// The directory the user named may itself be a link (a bundle unpacked
		// elsewhere); links inside it are still never followed.
		root, rerr := filepath.EvalSymlinks(p)
		if rerr != nil {
			return nil, fmt.Errorf("open bundle %q: %w", p, rerr)
		}
		err = b.readDir(ctx, root, limits)
	} else if IsStream(st) {
		var s *Stream
		if s, err = OpenStream(ctx, p); err == nil {
			err = b.readArchiveFrom(ctx, s, limits)
			_ = s.Close()
		}
	} else {
		err = b.readArchive(ctx, p, limits)
	}
	b.buf, b.scratch = nil, nil // as large as the largest file, and of no use once read
	if err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	if err := b.finish(); err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", p, err)
	}
	if b.visit != nil && b.visitRoot != "" && b.visitRoot != "-" && b.Root != b.visitRoot {
		return nil, fmt.Errorf("open bundle %q: %w", p, ErrMixedRoot)
	}
	b.visit = nil
	return b, nil
}

func (b *Bundle) finish() error {
	b.stripRoot()
	b.packedHigh = len(b.packed)
	b.names = b.names[:0]
	for n := range b.files {
		b.names = append(b.names, n)
	}
	for n := range b.packed {
		b.names = append(b.names, n)
	}
	for n := range b.digests {
		if _, ok := b.files[n]; !ok {
			b.names = append(b.names, n)
		}
	}
	sort.Strings(b.names)
	if !b.Has(ManifestPath) {
		return nil
	}
	data, err := b.ReadFile(ManifestPath)
	if err != nil {
		return err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return err
	}
	b.Manifest = m
	return nil
}

// stripRoot removes a single top directory shared by every entry, so that
// podflow-x-2026.../cluster-resources/... reads as cluster-resources/....
func (b *Bundle) stripRoot() {
	root := ""
	if !sharedRoot(b.files, &root) || !sharedRoot(b.packed, &root) || !sharedRoot(b.digests, &root) {
		return
	}
	if root == "" || root == ClusterResources || root == NodesDir {
		return
	}
	b.files, b.packed, b.digests = stripped(b.files, root), stripped(b.packed, root), stripped(b.digests, root)
	b.sums = stripped(b.sums, root)
	b.trimmed = stripped(b.trimmed, root)
	for i := range b.Skipped {
		b.Skipped[i].Name = strings.TrimPrefix(b.Skipped[i].Name, root+"/")
	}
	b.Root = root
}

// sharedRoot reports whether every name in m lies under the top directory *root,
// setting it from the first name seen.
func sharedRoot[V any](m map[string]V, root *string) bool {
	for name := range m {
		first, _, ok := strings.Cut(name, "/")
		if !ok || (*root != "" && first != *root) {
			return false
		}
		*root = first
	}
	return true
}

// stripped is m with root/ cut from every name; nil stays nil.
func stripped[V any](m map[string]V, root string) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for name, v := range m {
		out[strings.TrimPrefix(name, root+"/")] = v
	}
	return out
}

// add reads one entry of declared size (from the tar header or the file's stat; -1 when
// unknown). The limits are checked against the declared size before anything is read,
// so an archive that announces a huge member is refused at its header; the total counts
// only the entries kept.
func (b *Bundle) add(ctx context.Context, name string, size int64, r io.Reader, limits Limits) error {
	if b.Has(name) {
		return &UnsafeEntryError{Entry: name, Reason: "duplicate entry"}
	}
	if err := limits.check(name, size, b.size); err != nil {
		return err
	}
	r = ctxReader{ctx: ctx, r: r}
	if b.pack && LogTailBytes > 0 && (size < 0 || size > LogTailBytes) && isContainerLog(name) {
		return b.addTail(name, size, r, limits)
	}
	var data []byte
	var err error
	if b.pack || (b.digests != nil && path.Base(name) != ManifestPath) {
		// Scanning or packing: one buffer, reused for every file, as large as the largest.
		data, err = readEntryInto(&b.buf, r, size, limits.MaxFileSize)
	} else {
		data, err = readEntry(r, size, limits.MaxFileSize)
	}
	if err != nil {
		return fmt.Errorf("read entry %q: %w", name, err)
	}
	if err := limits.check(name, int64(len(data)), b.size); err != nil {
		return err // a directory file that grew after its stat
	}
	b.size += int64(len(data))
	if b.pack {
		b.keepPacked(name, data)
		return nil
	}
	if b.digests == nil {
		b.files[name] = data
		return nil
	}
	if path.Base(name) == ManifestPath {
		// The manifest (and anything named like it) is kept; it was read into its own
		// buffer above.
		b.files[name] = data
	} else {
		if strings.HasSuffix(name, ClusterResourcePath(KindNodes)) {
			// The nodes list is small and names the nodes Summarize lists.
			b.files[name] = bytes.Clone(data)
		}
		b.digests[name] = digest(name, data, b.countItems)
	}
	stripped, err := b.visitName(name)
	if err != nil || stripped == ManifestPath {
		return err
	}
	return b.visitFile(stripped, data)
}

// visitFile hands a scanned file on to ScanOptions.Each.
func (b *Bundle) visitFile(stripped string, data []byte) error {
	if b.visit == nil {
		return nil
	}
	if err := b.visit(stripped, data); err != nil {
		return fmt.Errorf("%s: %w", stripped, err)
	}
	return nil
}

// visitName strips the top directory the first entry suggested, as stripRoot will.
func (b *Bundle) visitName(name string) (string, error) {
	if b.visit == nil {
		return name, nil
	}
	first, rest, ok := strings.Cut(name, "/")
	if b.visitRoot == "" {
		b.visitRoot = "-"
		if ok && first != ClusterResources && first != NodesDir {
			b.visitRoot = first
		}
	}
	if b.visitRoot == "-" {
		return name, nil // stripRoot cannot strip anything either once such an entry exists
	}
	if !ok || first != b.visitRoot {
		return "", ErrMixedRoot
	}
	return rest, nil
}

// digest is what Scan keeps of one file. The name may still carry the archive's top
// directory, so the list test looks at the name with and without it.
func digest(name string, data []byte, count bool) Digest {
	d := Digest{Size: int64(len(data)), SHA256: sha256.Sum256(data)}
	if !count {
		return d
	}
	info := ParsePath(name)
	if _, rest, ok := strings.Cut(name, "/"); ok && info.Area == "" {
		info = ParsePath(rest)
	}
	if info.Area == "cluster" || info.Area == "namespaced" {
		n, err := countItems(data)
		d.Items, d.Unreadable = n, err != nil
	}
	return d
}

// readEntryInto is readEntry into a reused buffer.
func readEntryInto(buf *[]byte, r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 {
		return readAllInto(buf, io.LimitReader(r, max+1))
	}
	if int64(cap(*buf)) < size {
		*buf = make([]byte, size)
	}
	data := (*buf)[:size]
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("shorter than its declared %d bytes: %w", size, err)
	}
	return data, nil
}

// readAllInto reads r to its end into a reused buffer, growing it as needed.
func readAllInto(buf *[]byte, r io.Reader) ([]byte, error) {
	data := (*buf)[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		*buf = data
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// check refuses an entry of size bytes when the bundle already holds kept bytes.
func (l Limits) check(name string, size, kept int64) error {
	if size > l.MaxFileSize {
		return &LimitError{Entry: name, Size: size, Limit: l.MaxFileSize}
	}
	if size > 0 && kept+size > l.MaxTotalSize {
		return &LimitError{Entry: name, Size: size, Limit: l.MaxTotalSize, Total: true}
	}
	return nil
}

// readEntry reads a member whose size is known into one buffer of exactly that size, with
// no doubling copies; a member that turns out longer or shorter is an error. With an
// unknown size it reads up to max+1 bytes.
func readEntry(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(io.LimitReader(r, max+1))
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("shorter than its declared %d bytes: %w", size, err)
	}
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("longer than its declared %d bytes", size)
	}
	return data, nil
}

func (b *Bundle) readArchive(ctx context.Context, p string, limits Limits) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.readArchiveFrom(ctx, f, limits)
}

// readArchiveFrom reads an archive from r, in one pass: a file or a stream.
func (b *Bundle) readArchiveFrom(ctx context.Context, r io.Reader, limits Limits) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	head, _ := br.Peek(sniffLen) // a short file simply matches nothing below
	var rd archiver.Reader
	kind := SniffArchive(head)
	switch kind {
	case ArchiveGzip:
		rd = &archiver.TarGz{Tar: &archiver.Tar{}, SingleThreaded: true}
	case ArchiveXz:
		rd = &archiver.TarXz{Tar: &archiver.Tar{}}
	case ArchiveTar:
		rd = &archiver.Tar{}
	case ArchiveZip:
		return errors.New("a zip archive: podflow reads .tar, .tar.gz and .tar.xz archives and directories; unzip it and pass the directory")
	default:
		return errors.New("not a gzip, xz or tar file")
	}
	if err := rd.Open(br, 0); err != nil {
		return fmt.Errorf("not a tar, tar.gz or tar.xz archive: %w", err)
	}
	defer rd.Close()
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		af, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && first && kind != ArchiveTar {
			return fmt.Errorf("%s data that does not hold a tar archive: %w", kind, err)
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
		if err := b.add(ctx, name, hdr.Size, af, limits); err != nil {
			return err
		}
		checkpoint.Reach("read")
	}
	if len(b.files) == 0 && len(b.packed) == 0 && len(b.digests) == 0 {
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

func (b *Bundle) readDir(ctx context.Context, root string, limits Limits) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, walkErr error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if walkErr != nil {
			if !limits.SkipUnreadable || p == root {
				return walkErr
			}
			b.skipUnreadable(rel, walkErr)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if limits.SkipLinks && d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p) // only shown, never followed
			b.Skipped = append(b.Skipped, SkippedEntry{Name: rel, Reason: "symbolic link to " + target})
			return nil
		}
		if !d.Type().IsRegular() {
			unsafe := &UnsafeEntryError{Entry: rel, Reason: "not a regular file (" + d.Type().String() + ")"}
			if !limits.SkipUnreadable {
				return unsafe
			}
			b.skipUnreadable(rel, errors.New(unsafe.Reason))
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := limits.check(rel, info.Size(), b.size); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			if !limits.SkipUnreadable {
				return err
			}
			b.skipUnreadable(rel, err)
			return nil
		}
		defer f.Close()
		err = b.add(ctx, rel, -1, f, limits)
		var pe *fs.PathError
		if err != nil && limits.SkipUnreadable && errors.As(err, &pe) {
			b.skipUnreadable(rel, err)
			return nil
		}
		if err == nil {
			checkpoint.Reach("read")
		}
		return err
	})
}

func (b *Bundle) skipUnreadable(name string, err error) {
	b.Skipped = append(b.Skipped, SkippedEntry{Name: name, Reason: err.Error(), Unreadable: true})
}

// ctxReader ends a read of one large entry once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadFile returns a file's bytes; a missing file is fs.ErrNotExist. A file that
// OpenReadOnce kept compressed is decoded into new bytes at every call.
func (b *Bundle) ReadFile(name string) ([]byte, error) {
	if data, ok := b.files[name]; ok {
		return data, nil
	}
	if p, ok := b.packed[name]; ok {
		return b.unpack(name, p, nil)
	}
	if b.isTaken(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTaken}
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
}

// ReadOnce marks the bundle as read by one consumer that needs each file's bytes only
// until it has decoded them (one analysis): Take then lets go of them, so the bundle
// stops holding what is already decoded. ReadFile of a taken file fails. A bundle
// known to be read once before it is read is better opened with OpenReadOnce.
func (b *Bundle) ReadOnce() { b.readOnce = true }

// ReadsOnce reports whether the bundle was marked ReadOnce: Take then hands over the
// only reference to a file's bytes.
func (b *Bundle) ReadsOnce() bool { return b.readOnce }

// Take is ReadFile for a consumer that reads name once: on a bundle marked ReadOnce
// the bundle lets go of the bytes; the caller holds the only reference.
func (b *Bundle) Take(name string) ([]byte, error) {
	data, err := b.ReadFile(name)
	if err != nil || !b.readOnce {
		return data, err
	}
	delete(b.files, name)
	b.forgetPacked(name)
	b.markTaken(name)
	return data, nil
}

// TakeInto is Take for a consumer that is done with each file's bytes before it takes
// the next: a file OpenReadOnce keeps compressed is decoded into buf when buf's capacity
// holds it, so one buffer serves every file instead of a new slice each. The result
// may share buf's memory. On a bundle marked ReadOnce the caller owns the result and
// may pass it back as the next buf; otherwise it is the bundle's and stays unchanged.
func (b *Bundle) TakeInto(name string, buf []byte) ([]byte, error) {
	p, ok := b.packed[name]
	if !ok || !b.readOnce {
		return b.Take(name)
	}
	data, err := b.unpack(name, p, buf[:cap(buf)])
	if err != nil {
		return nil, err
	}
	b.forgetPacked(name)
	b.markTaken(name)
	return data, nil
}

// Drop lets go of a file of a bundle marked ReadOnce without decoding it, for a
// consumer that has no use for it; on any other bundle it does nothing.
func (b *Bundle) Drop(name string) {
	if !b.readOnce || !b.Has(name) {
		return
	}
	delete(b.files, name)
	b.forgetPacked(name)
	b.markTaken(name)
}

// forgetPacked removes name from packed, and makes the map again once it holds a
// quarter of what it held: a Go map keeps its room when entries are deleted, and a
// read-once consumer takes nearly every file. At 20k pods packed is 43k files, 8 MB,
// and the node files, taken last, are where an analysis's memory peaks.
func (b *Bundle) forgetPacked(name string) {
	delete(b.packed, name)
	if len(b.packed) >= b.packedHigh/4 {
		return
	}
	m := make(map[string]packedFile, len(b.packed))
	for n, p := range b.packed {
		m[n] = p
	}
	b.packed, b.packedHigh = m, len(m)
}

// ErrTaken is the error of ReadFile for a file Take handed out of a ReadOnce bundle.
var ErrTaken = errors.New("already read once and released")

// Has reports whether the bundle holds name.
func (b *Bundle) Has(name string) bool {
	_, ok := b.files[name]
	if !ok {
		_, ok = b.packed[name]
	}
	if !ok {
		_, ok = b.digests[name]
	}
	return ok || b.isTaken(name)
}

// markTaken marks name, one of names, as taken.
func (b *Bundle) markTaken(name string) {
	i, ok := slices.BinarySearch(b.names, name)
	if !ok {
		return // Take and Drop hand out only files the bundle has, all named in names
	}
	if b.taken == nil {
		b.taken = make([]uint64, (len(b.names)+63)/64)
		// Verify reads a taken file as missing: once its consumer takes files the
		// bundle is not verified again, and the digests of those still packed go (at
		// 80k pods, 260k files of 56 bytes each, held through the load's decode of
		// every list).
		b.sums = nil
	}
	b.taken[i/64] |= 1 << (i % 64)
}

// isTaken reports whether markTaken marked name.
func (b *Bundle) isTaken(name string) bool {
	if b.taken == nil {
		return false
	}
	i, ok := slices.BinarySearch(b.names, name)
	return ok && b.taken[i/64]&(1<<(i%64)) != 0
}

// Names lists every file, sorted.
func (b *Bundle) Names() []string { return b.names }

// Size is the uncompressed size of all files.
func (b *Bundle) Size() int64 { return b.size }

// Files returns the bundle's contents; callers must not modify the map or its slices.
// A bundle from OpenReadOnce first decodes every file it kept compressed, and from then
// on holds them raw.
func (b *Bundle) Files() map[string][]byte {
	b.unpackAll()
	return b.files
}
