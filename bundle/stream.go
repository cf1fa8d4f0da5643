package bundle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"podflow.dev/podflow/internal/checkpoint"
)

// IsStream reports whether an input is read as a stream, once, from its start to its
// end: a FIFO (a named pipe, the /dev/fd/N of a shell's process substitution `<(cmd)`,
// /dev/stdin on a pipe), a character device (a terminal) or a socket. Such an input
// has no size to check before reading, cannot be read twice, and may keep the reader
// waiting for a writer.
func IsStream(fi fs.FileInfo) bool {
	return fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice|fs.ModeSocket) != 0
}

// Stream is an input opened with OpenStream. Its reads end with ctx's error once ctx
// is done, however long the writer keeps it waiting.
type Stream struct {
	*bufio.Reader
	f      *os.File
	ctx    context.Context
	stop   func() bool
	closed sync.Once
}

// OpenStream opens a stream input (see IsStream). Opening a FIFO waits for its writer:
// OpenStream returns ctx's error as soon as ctx is done instead (a Ctrl-C while
// nothing writes), and so do the Stream's reads later.
func OpenStream(ctx context.Context, p string) (*Stream, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(p)
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	default:
		// The open waits for a writer: the step a test signals podflow at.
		checkpoint.Reach("stream")
		select {
		case o = <-ch:
		case <-ctx.Done():
			unblockOpen(p)
			go func() {
				if o := <-ch; o.f != nil {
					_ = o.f.Close()
				}
			}()
			return nil, fmt.Errorf("open %q: %w", p, context.Cause(ctx))
		}
	}
	if o.err != nil {
		return nil, o.err
	}
	s := &Stream{Reader: bufio.NewReaderSize(nil, 64<<10), f: o.f, ctx: ctx}
	s.Reader.Reset(readerFunc(s.read))
	// A read blocked on the writer ends once ctx is done: the deadline wakes it (a
	// pipe, a terminal and a socket are read through the runtime's poller).
	s.stop = context.AfterFunc(ctx, func() { _ = o.f.SetReadDeadline(time.Unix(1, 0)) })
	return s, nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func (s *Stream) read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, context.Cause(s.ctx)
	}
	n, err := s.f.Read(p)
	if err != nil && s.ctx.Err() != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed)) {
		return n, context.Cause(s.ctx)
	}
	return n, err
}

// Close closes the stream.
func (s *Stream) Close() error {
	var err error
	s.closed.Do(func() {
		s.stop()
		err = s.f.Close()
	})
	return err
}

// OpenArchiveStream reads a .tar, .tar.gz or .tar.xz archive from a stream, in one pass,
// as Open reads an archive file; readOnce is OpenReadOnce's mode.
func OpenArchiveStream(ctx context.Context, name string, r io.Reader, limits Limits, readOnce bool) (*Bundle, error) {
	if limits.MaxFileSize <= 0 || limits.MaxTotalSize <= 0 {
		skipLinks, skipUnreadable := limits.SkipLinks, limits.SkipUnreadable
		limits = DefaultLimits()
		limits.SkipLinks, limits.SkipUnreadable = skipLinks, skipUnreadable
	}
	b := &Bundle{Source: name, files: map[string][]byte{}, pack: readOnce, readOnce: readOnce}
	err := b.readArchiveFrom(ctx, r, limits)
	b.buf, b.scratch = nil, nil
	if err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", name, err)
	}
	if err := b.finish(); err != nil {
		return nil, fmt.Errorf("open bundle %q: %w", name, err)
	}
	return b, nil
}
