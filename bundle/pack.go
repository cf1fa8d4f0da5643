package bundle

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/klauspost/compress/s2"
)

// OpenReadOnce is OpenContext for one consumer that decodes each file once (one
// analysis): the bundle is marked ReadOnce, and since that is known before reading,
// every file of packMin bytes or more is kept as an s2 block instead of raw. ReadFile
// and Take decode a block; Take drops it. The blocks are kept in a temporary file that
// is unlinked as soon as it is created, so nothing is left on disk however the process
// ends (packedInMemory). Memory after opening
// is then bounded whatever the bundle's size, and while opening the largest file
// takes twice more: its raw bytes and the buffer it is compressed into. Where a
// temporary file cannot be made (or unlinked while open), blocks stay in memory:
// about the compressed size, a tenth to a fifth of the raw size for journals and JSON
// lists. Limits, Names, Verify and errors are as for Open.
func OpenReadOnce(ctx context.Context, p string, limits Limits) (*Bundle, error) {
	return openWith(ctx, p, limits, openMode{pack: true})
}

// packMin is the smallest file OpenReadOnce compresses: below it the saving is a few
// hundred bytes, and every read would still cost a decode and an allocation.
const packMin = 4 << 10

// packedInMemory bounds the s2 blocks OpenReadOnce keeps in memory; the rest go to
// the spill file. None are: the blocks kept were the first read, and an archive's
// order is not the order a load takes its files in. At 20k pods the first 32 MB were
// pod lists and containers' inspect files, the latter taken last, so held through the
// decode of every list and event, where the load's memory peaks; at 1k and 5k pods
// they were most of the blocks (about 20 MB and 120 MB in all), held on top of the
// whole analysis. Writing them and reading them back once costs less than the decode
// that follows. Tests set a budget to keep blocks in memory.
var packedInMemory = 0

// packedFile is a file kept as an s2 block; its digest, taken while it was still raw so
// that Verify need not decode it, is in the bundle's sums. A spilled block is size
// bytes at off in the bundle's spill file, and block is nil.
type packedFile struct {
	block []byte
	off   int64
	size  int
}

// keepSum records a packed file's digest.
func (b *Bundle) keepSum(name string, d Digest) {
	if b.sums == nil {
		b.sums = map[string]Digest{}
	}
	b.sums[name] = d
}

// spillFile is where blocks beyond packedInMemory are written, in turn: an unlinked
// temporary file, read back with ReadAt, closed with the bundle's last reference.
type spillFile struct {
	f   *os.File
	end int64
	// failed is set once the file could not be made or written: blocks then stay in
	// memory.
	failed bool
}

// spill writes a block to the spill file and records where in p; false keeps the
// block in memory instead.
func (b *Bundle) spill(block []byte, p *packedFile) bool {
	s := &b.spillTo
	if s.failed {
		return false
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "podflow-read-*")
		if err != nil {
			s.failed = true
			return false
		}
		// Unlinked while open, the file goes when the process does, however it ends.
		// Where that is refused (Windows), blocks stay in memory.
		if err := os.Remove(f.Name()); err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			s.failed = true
			return false
		}
		s.f = f
	}
	if _, err := s.f.Write(block); err != nil {
		// A full disk: the blocks written so far stay readable, later ones stay in memory.
		s.failed = true
		return false
	}
	p.off, p.size = s.end, len(block)
	s.end += int64(len(block))
	return true
}

// blockBufs recycles the buffers spilled blocks are read back into.
var blockBufs = sync.Pool{New: func() any { return new([]byte) }}

// unpack decodes a packed file into dst when dst is large enough, or into a new slice
// of exactly the file's size; a spilled block is read back first.
func (b *Bundle) unpack(name string, p packedFile, dst []byte) ([]byte, error) {
	if p.block != nil {
		return unpack(name, p.block, dst)
	}
	bufp := blockBufs.Get().(*[]byte)
	defer blockBufs.Put(bufp)
	if cap(*bufp) < p.size {
		*bufp = make([]byte, p.size)
	}
	block := (*bufp)[:p.size]
	if _, err := b.spillTo.f.ReadAt(block, p.off); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("read back its temporary copy: %w", err)}
	}
	return unpack(name, block, dst)
}

// keepPacked stores a file read into a reused buffer: as an s2 block when it is large
// enough and compresses by an eighth at least, otherwise as a copy of its bytes.
//
// s2 rather than zstd, both from klauspost/compress: of the generated S bundle's
// 128 MB of journals and JSON lists s2 keeps 20 MB and zstd at SpeedFastest 13 MB,
// but s2 encodes at 350 to 500 MB/s and decodes at 1.3 GB/s on one core, against 110
// to 250 and 400 for zstd, and every file is decoded once more to verify it and once
// to load it.
func (b *Bundle) keepPacked(name string, data []byte) {
	if n := s2.MaxEncodedLen(len(data)); len(data) >= packMin && n > 0 {
		if cap(b.scratch) < n {
			b.scratch = make([]byte, n)
		}
		block := s2.Encode(b.scratch[:0], data)
		if len(block) < len(data)-len(data)/8 {
			if b.packed == nil {
				b.packed = map[string]packedFile{}
			}
			var p packedFile
			b.keepSum(name, digest(name, data, false))
			if b.packedBytes+len(block) <= packedInMemory || !b.spill(block, &p) {
				p.block = bytes.Clone(block)
				b.packedBytes += len(block)
			}
			b.packed[name] = p
			return
		}
	}
	b.files[name] = bytes.Clone(data)
}

// unpack decodes a file's s2 block into dst when it is large enough, or into a new
// slice of exactly the file's size. A dst too small for it, given to be reused
// (TakeInto), is replaced by one with a quarter more room than the file needs: files
// of a kind come in sizes a little apart, and a buffer made to each one's size was
// made again for nearly every larger one (at 20k pods, 160 MB of buffers).
func unpack(name string, block, dst []byte) ([]byte, error) {
	if n, err := s2.DecodedLen(block); err == nil && dst != nil && n > len(dst) {
		dst = make([]byte, n, n+n/4)
	}
	data, err := s2.Decode(dst, block)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("decode in-memory copy: %w", err)}
	}
	return data, nil
}

// unpackAll moves every packed file to files, for callers that want the whole map.
// Blocks come from s2.Encode in keepPacked alone, so failing to decode one means the
// process's memory, or its own temporary file, is corrupt.
func (b *Bundle) unpackAll() {
	for name, p := range b.packed {
		data, err := b.unpack(name, p, nil)
		if err != nil {
			panic(err)
		}
		b.files[name] = data
		delete(b.packed, name)
		delete(b.sums, name)
	}
}
