//go:build !unix

package bundle

// unblockOpen has nothing to do where an open does not wait for a writer.
func unblockOpen(string) {}
