package bundle

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// Archive kinds, told from content by SniffArchive.
const (
	ArchiveGzip = "gzip"
	ArchiveXz   = "xz"
	ArchiveZip  = "zip"
	ArchiveTar  = "tar"
)

// sniffLen is how much of a file SniffArchive needs: one tar header block.
const sniffLen = 512

// SniffArchive tells an archive from its first bytes: gzip, xz and zip by their magic
// numbers, a tar by the checksum of its first header. It returns "" for anything else,
// such as pasted text.
func SniffArchive(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return ArchiveGzip
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return ArchiveXz
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return ArchiveZip
	case tarChecksumOK(head):
		return ArchiveTar
	}
	return ""
}

// tarChecksumOK checks a tar header block: the checksum field holds, in octal, the sum
// of the block's bytes with the field itself counted as spaces.
func tarChecksumOK(block []byte) bool {
	if len(block) < sniffLen {
		return false
	}
	field := strings.Trim(string(block[148:156]), " \x00")
	want, err := strconv.ParseUint(field, 8, 32)
	if err != nil || field == "" {
		return false
	}
	var sum uint64
	for i, c := range block[:sniffLen] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += uint64(c)
	}
	return sum == want
}

// archiveNames are the endings of the archive names podflow reads and writes.
var archiveNames = []string{".tar.gz", ".tgz", ".tar", ".tar.xz", ".txz", ".zip"}

// IsArchiveFile reports whether the file at p is to be read as an archive: its content
// says so, or its name does (so that a damaged archive is reported as one rather than
// read as text).
func IsArchiveFile(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	if SniffArchive(head[:n]) != "" {
		return true, nil
	}
	lower := strings.ToLower(p)
	for _, ext := range archiveNames {
		if strings.HasSuffix(lower, ext) {
			return true, nil
		}
	}
	return false, nil
}
