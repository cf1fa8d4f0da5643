package scenario

import (
	"archive/tar"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FileNoLeak is the check that no canary value appears anywhere in a bundle.
const FileNoLeak = "no-leak"

// minCanary is the shortest canary accepted: a short value would match by chance.
const minCanary = 12

// maxDepth bounds nested compression (a gzip inside a tar inside a gzip ...), so a
// hostile archive cannot make the search recurse without end.
const maxDepth = 4

// Leak is one canary found in a bundle.
type Leak struct {
	// File is the bundle file (the archive member, or the file of a directory bundle)
	// that holds the canary; "tar header of X" when it is in a member's header.
	File string
	// Value is the canary, and Encoding how it was written: "plain" or a base64 variant.
	Value    string
	Encoding string
}

func (l Leak) String() string {
	return fmt.Sprintf("%s: canary %q (%s)", l.File, l.Value, l.Encoding)
}

// needle is one form a canary may take in the bytes.
type needle struct {
	value, encoding string
	b               []byte
}

// needles lists every value plainly and in base64 (padding dropped, so the value is
// found whatever follows it; URL-safe too when it differs).
func needles(values []string) []needle {
	var out []needle
	for _, v := range values {
		out = append(out, needle{v, "plain", []byte(v)})
		std := base64.RawStdEncoding.EncodeToString([]byte(v))
		out = append(out, needle{v, "base64", []byte(std)})
		if url := base64.RawURLEncoding.EncodeToString([]byte(v)); url != std {
			out = append(out, needle{v, "base64url", []byte(url)})
		}
	}
	return out
}

// NoLeakValues gathers the canaries of every no-leak check.
func NoLeakValues(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if c.File == FileNoLeak {
			out = append(out, c.Values...)
		}
	}
	return out
}

// FindLeaks searches a bundle as stored, byte for byte, for the values: a .tar.gz or
// .tar archive (its headers and every member, decompressing members that are gzip or
// bzip2 streams themselves) or a directory bundle (every file, decompressed likewise).
// It reads the bytes rather than opening the bundle, so nothing a reader would skip or
// normalize can hide a canary. Leaks are sorted by file and value.
func FindLeaks(path string, values []string) ([]Leak, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("search %q for canaries: %w", path, err)
	}
	ns := needles(values)
	var leaks []Leak
	if st.IsDir() {
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(path, p) // p is under path
			found, err := searchData(filepath.ToSlash(rel), data, ns, 0)
			leaks = append(leaks, found...)
			return err
		})
	} else {
		var data []byte
		if data, err = os.ReadFile(path); err == nil {
			leaks, err = searchArchive(data, ns, 0)
		}
	}
	if err != nil {
		return leaks, fmt.Errorf("search %q for canaries: %w", path, err)
	}
	sortLeaks(leaks)
	return leaks, nil
}

// searchArchive searches a bundle archive: decompressed when compressed, then member by
// member when it is a tar; any canary in the stream that no member accounts for (in
// padding, or past a corrupt header) is reported at its offset.
func searchArchive(data []byte, ns []needle, depth int) ([]Leak, error) {
	// A damaged archive is still searched as far as it could be read.
	raw, derr := decompress(data)
	members, terr := searchTar(raw, ns, depth)
	if derr != nil {
		terr = derr
	}
	stream := plainHits("archive stream", raw, ns)
	if len(members) == 0 && len(stream) > 0 {
		return stream, terr
	}
	return members, terr
}

// searchTar searches each member's header and contents.
func searchTar(raw []byte, ns []needle, depth int) ([]Leak, error) {
	tr := tar.NewReader(bytes.NewReader(raw))
	var leaks []Leak
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return leaks, nil
		}
		if err != nil {
			return leaks, fmt.Errorf("read tar: %w", err)
		}
		header := h.Name + "\x00" + h.Linkname
		for k, v := range h.PAXRecords {
			header += "\x00" + k + "=" + v
		}
		leaks = append(leaks, plainHits("tar header of "+h.Name, []byte(header), ns)...)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, rerr := io.ReadAll(tr)
		found, err := searchData(h.Name, data, ns, depth)
		leaks = append(leaks, found...)
		if rerr != nil {
			return leaks, fmt.Errorf("read tar member %q: %w", h.Name, rerr)
		}
		if err != nil {
			return leaks, err
		}
	}
}

// searchData searches one file, and its decompressed contents when it is compressed.
func searchData(name string, data []byte, ns []needle, depth int) ([]Leak, error) {
	leaks := plainHits(name, data, ns)
	if !compressed(data) {
		return leaks, nil
	}
	if depth >= maxDepth {
		return leaks, fmt.Errorf("%s: compressed more than %d levels deep", name, maxDepth)
	}
	inner, err := decompress(data)
	if err != nil {
		return leaks, fmt.Errorf("%s: %w", name, err)
	}
	found := plainHits(name+" (decompressed)", inner, ns)
	if tarred, terr := searchTar(inner, ns, depth+1); terr == nil && len(tarred) > 0 {
		for i := range tarred {
			tarred[i].File = name + "!" + tarred[i].File
		}
		found = tarred
	}
	return append(leaks, found...), nil
}

func plainHits(name string, data []byte, ns []needle) []Leak {
	var out []Leak
	for _, n := range ns {
		if bytes.Contains(data, n.b) {
			out = append(out, Leak{File: name, Value: n.value, Encoding: n.encoding})
		}
	}
	return out
}

func compressed(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte("BZh"))
}

// decompress undoes gzip (several members too) or bzip2, and returns anything else as is.
func decompress(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gunzip: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return out, fmt.Errorf("gunzip: %w", err)
		}
		return out, nil
	case bytes.HasPrefix(data, []byte("BZh")):
		out, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(data)))
		if err != nil {
			return out, fmt.Errorf("bunzip2: %w", err)
		}
		return out, nil
	}
	return data, nil
}

func sortLeaks(leaks []Leak) {
	sort.Slice(leaks, func(i, j int) bool {
		if leaks[i].File != leaks[j].File {
			return leaks[i].File < leaks[j].File
		}
		if leaks[i].Value != leaks[j].Value {
			return leaks[i].Value < leaks[j].Value
		}
		return leaks[i].Encoding < leaks[j].Encoding
	})
}

// LeakError lists the canaries found in one bundle.
type LeakError struct {
	Bundle string
	Leaks  []Leak
}

func (e *LeakError) Error() string {
	lines := make([]string, len(e.Leaks))
	for i, l := range e.Leaks {
		lines[i] = l.String()
	}
	return fmt.Sprintf("%s: %d canary value(s) leaked:\n    %s", e.Bundle, len(e.Leaks), strings.Join(lines, "\n    "))
}

// evalNoLeak searches every file of the snapshot's bundle, as its reader returns it.
func (s *Snapshot) evalNoLeak(c Check) error {
	ns := needles(c.Values)
	var leaks []Leak
	var errs []error
	for _, name := range s.Bundle.Names() {
		data, err := s.Bundle.ReadFile(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
			continue
		}
		found, err := searchData(name, data, ns, 0)
		leaks = append(leaks, found...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
		}
	}
	if len(leaks) > 0 {
		sortLeaks(leaks)
		errs = append(errs, fmt.Errorf("%s: %w", c, &LeakError{Bundle: "the bundle", Leaks: leaks}))
	}
	return errors.Join(errs...)
}
