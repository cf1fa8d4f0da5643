//go:build unix

package bundle

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a running process. EPERM means it runs under
// another user: alive all the same.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// oNonblock opens a file without waiting: a FIFO swapped in after its check must not
// block the open.
const oNonblock = syscall.O_NONBLOCK
