//go:build unix

package bundle

import (
	"os"
	"syscall"
)

// unblockOpen ends an open of the FIFO p that waits for a writer: a writer that comes
// and goes at once lets it return (and its reads see the end at once). It does
// nothing to other files, or when nothing waits.
func unblockOpen(p string) {
	if fi, err := os.Stat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		_ = w.Close()
	}
}
