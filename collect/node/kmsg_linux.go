//go:build linux

package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// readKmsg reads every record /dev/kmsg holds now, keeping at most max bytes (the newest).
// The device hands out one record per read and blocks at the end unless opened
// non-blocking, so it is read with raw syscalls: Go's poller would wait for more records
// instead of reporting the end.
func readKmsg(ctx context.Context, path string, max int64) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	out := &tailBuffer{max: max}
	// A record is at most 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX); a smaller buffer gets EINVAL.
	buf := make([]byte, 16<<10)
	for ctx.Err() == nil {
		n, err := syscall.Read(fd, buf)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			return out.Bytes(), nil
		case errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.EINTR):
			// EPIPE: older records were overwritten while reading; carry on with the next.
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return out.Bytes(), nil
		}
		if _, err := out.Write(buf[:n]); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return nil, fmt.Errorf("read %s: %w", path, ctx.Err())
}
