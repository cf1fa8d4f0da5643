package bundle

import (
	"errors"
	"fmt"
)

// ErrExists is returned when the target of a write already exists and overwrite was not asked.
var ErrExists = errors.New("target already exists (use --force to overwrite)")

// UnsafeEntryError reports an archive entry that podflow refuses to read.
type UnsafeEntryError struct {
	Entry  string
	Reason string
}

func (e *UnsafeEntryError) Error() string {
	return fmt.Sprintf("unsafe archive entry %q: %s", e.Entry, e.Reason)
}

// LimitError reports an entry that broke a size cap.
type LimitError struct {
	Entry string
	// Size is the entry's size as declared by its tar header or file system, or as read.
	Size  int64
	Limit int64
	// Total is true when the cap on the whole bundle was hit, false for the per-file cap.
	Total bool
}

func (e *LimitError) Error() string {
	what, flag := "per-file", "--max-file-size"
	if e.Total {
		what, flag = "total", "--max-total-size"
	}
	if e.Total {
		return fmt.Sprintf("entry %q of %d bytes takes the bundle over the %s size limit of %d bytes (raise it with %s)", e.Entry, e.Size, what, e.Limit, flag)
	}
	return fmt.Sprintf("entry %q of %d bytes exceeds the %s size limit of %d bytes (raise it with %s)", e.Entry, e.Size, what, e.Limit, flag)
}

// FormatVersionError reports a manifest whose format version this podflow cannot read.
type FormatVersionError struct {
	Version string
}

func (e *FormatVersionError) Error() string {
	if e.Version == "" {
		return fmt.Sprintf("%s has no formatVersion", ManifestPath)
	}
	return fmt.Sprintf("unsupported bundle format version %q: this podflow reads major version %d; upgrade podflow", e.Version, FormatMajor)
}
