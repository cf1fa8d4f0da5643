//go:build !linux

package node

import (
	"context"
	"fmt"
)

// readKmsg is Linux-only: other kernels have no /dev/kmsg.
func readKmsg(_ context.Context, path string, _ int64) ([]byte, error) {
	return nil, fmt.Errorf("read %s: the kernel log device exists only on Linux", path)
}
