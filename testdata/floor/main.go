// Command floor is what any reader of a bundle pays at least: it streams a .tar.gz (or
// .tar) once and, per mode, does the least work the matching podflow command needs.
//
//	floor parse BUNDLE   decode every .json member into any, split every other member into lines (analyze)
//	floor read BUNDLE    read every member once and hash it with sha256 (verify, inspect)
//	floor copy BUNDLE OUT  read every member and write it to a new .tar.gz (redact)
//
// It holds one member at a time, so its peak memory is the largest member.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: floor parse|read|copy BUNDLE [OUT]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(mode, in string, rest []string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		r = zr
	}
	var tw *tar.Writer
	if mode == "copy" {
		if len(rest) != 1 {
			return errors.New("copy needs OUT")
		}
		out, err := os.Create(rest[0])
		if err != nil {
			return err
		}
		defer out.Close()
		zw := gzip.NewWriter(out)
		defer zw.Close()
		tw = tar.NewWriter(zw)
		defer tw.Close()
	}
	tr := tar.NewReader(r)
	var members, lines, values int
	var buf []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if int64(cap(buf)) < hdr.Size {
			buf = make([]byte, hdr.Size)
		}
		data := buf[:hdr.Size]
		if _, err := io.ReadFull(tr, data); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
		members++
		switch mode {
		case "parse":
			if strings.HasSuffix(hdr.Name, ".json") {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					return fmt.Errorf("%s: %w", hdr.Name, err)
				}
				values++
			} else {
				for len(data) > 0 {
					i := bytes.IndexByte(data, '\n')
					if i < 0 {
						break
					}
					data = data[i+1:]
					lines++
				}
			}
		case "read":
			sha256.Sum256(data)
		case "copy":
			h := *hdr
			if err := tw.WriteHeader(&h); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown mode %q", mode)
		}
	}
	fmt.Printf("%d members, %d JSON documents, %d lines\n", members, values, lines)
	return nil
}
