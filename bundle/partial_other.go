//go:build !unix

package bundle

// processAlive cannot tell on this platform, so no leftover is ever taken for stale.
func processAlive(int) bool { return true }

const oNonblock = 0
