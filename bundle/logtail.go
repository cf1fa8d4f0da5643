package bundle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/s2"
)

// LogTailBytes is how much of each container log OpenReadOnce keeps: the newest
// bytes, from the first line that starts in them. An analysis reads the last few
// hundred lines of a log and searches what it keeps; podflow collects 2 MiB of each
// log by default. A larger member (a runaway log, or an archive of compressed zeros)
// then costs one pass over its bytes and this much memory, never its size.
var LogTailBytes int64 = 16 << 20

// Trim says what OpenReadOnce left out of a file's start: that many bytes and
// newlines, so that a line of what is kept is line Lines+n of the file.
type Trim struct {
	Bytes int64
	Lines int
}

// Trimmed is what OpenReadOnce left out of the start of a file kept to its tail.
func (b *Bundle) Trimmed(name string) (Trim, bool) {
	t, ok := b.trimmed[name]
	return t, ok
}

// isContainerLog reports whether an entry name (maybe under a top directory) is a
// container log of podflow's layout.
func isContainerLog(name string) bool {
	const logs = ClusterResources + "/pods/logs/"
	return path.Ext(name) == ".log" && (strings.HasPrefix(name, logs) || strings.Contains(name, "/"+logs))
}

// readTail reads r to its end, keeping the last keep bytes (from the first line
// that starts in them), and returns them with the digest of the whole stream and
// what was left out. Memory is twice keep, whatever the stream's length.
func readTail(buf *[]byte, r io.Reader, size, keep, max int64) ([]byte, Digest, Trim, error) {
	if size > keep {
		return readKnownTail(buf, r, size, keep)
	}
	h := sha256.New()
	window := int(2 * keep)
	if cap(*buf) < window {
		*buf = make([]byte, 0, window)
	}
	data := (*buf)[:0]
	var total, dropped int64
	droppedLines := 0
	lineStart := true // the last byte left out ends a line
	for {
		if len(data) == window {
			// Slide: keep the newest keep bytes.
			cut := len(data) - int(keep)
			droppedLines += bytes.Count(data[:cut], []byte{'\n'})
			dropped += int64(cut)
			lineStart = data[cut-1] == '\n'
			data = data[:copy(data, data[cut:])]
		}
		n, err := r.Read(data[len(data):window])
		h.Write(data[len(data) : len(data)+n])
		data = data[:len(data)+n]
		total += int64(n)
		if total > max {
			return nil, Digest{}, Trim{}, fmt.Errorf("larger than the limit of %d bytes", max)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Digest{}, Trim{}, err
		}
	}
	*buf = data
	if int64(len(data)) > keep {
		cut := len(data) - int(keep)
		droppedLines += bytes.Count(data[:cut], []byte{'\n'})
		dropped += int64(cut)
		lineStart = data[cut-1] == '\n'
		data = data[cut:]
	}
	if dropped > 0 && !lineStart {
		// Start on a line of its own: the partial line before it is left out too.
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			dropped += int64(nl + 1)
			droppedLines++
			data = data[nl+1:]
		} else {
			dropped += int64(len(data))
			data = data[len(data):]
		}
	}
	d := Digest{Size: total}
	h.Sum(d.SHA256[:0])
	return data, d, Trim{Bytes: dropped, Lines: droppedLines}, nil
}

// addTail keeps a container log larger than LogTailBytes to its tail, packed, with
// the digest of the whole member so that Verify still checks it.
func (b *Bundle) addTail(name string, size int64, r io.Reader, limits Limits) error {
	data, d, trim, err := readTail(&b.buf, r, size, LogTailBytes, limits.MaxFileSize)
	if err != nil {
		return fmt.Errorf("read entry %q: %w", name, err)
	}
	if err := limits.check(name, int64(len(data)), b.size); err != nil {
		return err
	}
	b.size += int64(len(data))
	if trim.Bytes == 0 {
		b.keepPacked(name, data)
		return nil
	}
	if b.trimmed == nil {
		b.trimmed = map[string]Trim{}
	}
	b.trimmed[name] = trim
	if b.packed == nil {
		b.packed = map[string]packedFile{}
	}
	if n := s2.MaxEncodedLen(len(data)); cap(b.scratch) < n {
		b.scratch = make([]byte, n)
	}
	block := s2.Encode(b.scratch[:0], data)
	var p packedFile
	b.keepSum(name, d)
	if b.packedBytes+len(block) <= packedInMemory || !b.spill(block, &p) {
		p.block = bytes.Clone(block)
		b.packedBytes += len(block)
	}
	b.packed[name] = p
	return nil
}

// readKnownTail is readTail for a member of known size: the bytes before its tail
// go through one small buffer, hashed and counted, and the tail is read into place.
func readKnownTail(buf *[]byte, r io.Reader, size, keep int64) ([]byte, Digest, Trim, error) {
	h := sha256.New()
	if int64(cap(*buf)) < keep {
		*buf = make([]byte, 0, keep)
	}
	head := size - keep
	chunk := (*buf)[:min(keep, 1<<20)]
	var trim Trim
	lineStart := true
	for trim.Bytes < head {
		n, err := io.ReadFull(r, chunk[:min(int64(len(chunk)), head-trim.Bytes)])
		h.Write(chunk[:n])
		trim.Lines += bytes.Count(chunk[:n], []byte{'\n'})
		trim.Bytes += int64(n)
		if n > 0 {
			lineStart = chunk[n-1] == '\n'
		}
		if err != nil {
			return nil, Digest{}, Trim{}, fmt.Errorf("shorter than its declared %d bytes: %w", size, err)
		}
	}
	data := (*buf)[:keep]
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, Digest{}, Trim{}, fmt.Errorf("shorter than its declared %d bytes: %w", size, err)
	}
	h.Write(data)
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, Digest{}, Trim{}, fmt.Errorf("longer than its declared %d bytes", size)
	}
	if !lineStart {
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			trim.Bytes += int64(nl + 1)
			trim.Lines++
			data = data[nl+1:]
		} else {
			trim.Bytes += int64(len(data))
			data = data[len(data):]
		}
	}
	d := Digest{Size: size}
	h.Sum(d.SHA256[:0])
	return data, d, trim, nil
}
