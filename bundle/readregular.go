package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadRegular reads a file a user names that is not a bundle (a signature file, an
// incident's evidence) by the rules bundles are read by: only a regular file (a FIFO
// would block, a device never ends), its size checked before a byte is read, and a
// file that grows while read stopped at max. With follow false a symbolic link is
// refused rather than followed, for files found by walking a folder.
func ReadRegular(p string, max int64, follow bool) ([]byte, error) {
	stat := os.Stat
	if !follow {
		stat = os.Lstat
	}
	fi, err := stat(p)
	if err != nil {
		return nil, err
	}
	if err := regularWithin(p, fi, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil {
		return nil, err
	} else if !os.SameFile(fi, fi2) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("changed while opened")}
	} else if err := regularWithin(p, fi2, max); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("larger than %d bytes", max)}
	}
	return data, nil
}

func regularWithin(p string, fi fs.FileInfo, max int64) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "read", Path: p, Err: errors.New("a symbolic link: podflow does not follow links found in a folder")}
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	if fi.Size() > max {
		return &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("%d bytes, larger than %d", fi.Size(), max)}
	}
	return nil
}
