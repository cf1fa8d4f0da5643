package bundle

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"

	"github.com/klauspost/compress/s2"
)

// OpenReadOnce is OpenContext for one consumer that decodes each file once (one
// analysis): the bundle is marked ReadOnce, and since that is known before reading,
// every file of packMin bytes or more is kept as an s2 block instead of raw. ReadFile
// and Take decode a block; Take drops it. Memory after opening is then about the
// compressed size instead of the raw size (a tenth to a fifth of it for journals and
// JSON lists), and while opening the largest file twice more: its raw bytes and the
// buffer it is compressed into. Limits, Names, Verify and errors are as for Open.
func OpenReadOnce(ctx context.Context, p string, limits Limits) (*Bundle, error) {
	return openWith(ctx, p, limits, openMode{pack: true})
}

// packMin is the smallest file OpenReadOnce compresses: below it the saving is a few
// hundred bytes, and every read would still cost a decode and an allocation.
const packMin = 4 << 10

// packedFile is a file kept as an s2 block, with its newlines counted while it was
// still raw.
type packedFile struct {
	block    []byte
	newlines int
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
			b.packed[name] = packedFile{block: bytes.Clone(block), newlines: bytes.Count(data, []byte{'\n'})}
			return
		}
	}
	b.files[name] = bytes.Clone(data)
}

// unpack decodes a file's s2 block into dst when it is large enough, or into a new
// slice of exactly the file's size.
func unpack(name string, block, dst []byte) ([]byte, error) {
	data, err := s2.Decode(dst, block)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("decode in-memory copy: %w", err)}
	}
	return data, nil
}

// unpackAll moves every packed file to files, for callers that want the whole map.
// Blocks come from s2.Encode in keepPacked alone, so failing to decode one means the
// process's memory is corrupt.
func (b *Bundle) unpackAll() {
	for name, p := range b.packed {
		data, err := unpack(name, p.block, nil)
		if err != nil {
			panic(err)
		}
		b.files[name] = data
		delete(b.packed, name)
	}
}

// CountNewlines is the number of newline bytes in a file, for a consumer that sizes
// what it will parse before reading it: a file OpenReadOnce keeps compressed was
// counted while it was read, so nothing is decoded.
func (b *Bundle) CountNewlines(name string) (int, error) {
	if p, ok := b.packed[name]; ok {
		return p.newlines, nil
	}
	data, err := b.ReadFile(name)
	if err != nil {
		return 0, err
	}
	return bytes.Count(data, []byte{'\n'}), nil
}
