// Command mkimage writes a single-layer container image as an OCI image layout tar that
// `ctr images import` accepts. The test bed has no registry and no docker, so its images
// (busybox and the sandbox pause image) are built from local binaries. Output is
// reproducible: the same inputs give the same digests, so image IDs in recorded bundles
// do not churn between recordings.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "mkimage: %v\n", err)
		os.Exit(1)
	}
}

// fileFlag collects repeated -file SRC=DST[:MODE] arguments.
type fileFlag []string

func (f *fileFlag) String() string     { return strings.Join(*f, ",") }
func (f *fileFlag) Set(v string) error { *f = append(*f, v); return nil }

func run(args []string) error {
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	name := fs.String("name", "", "image reference, e.g. podflow.test/busybox:1")
	out := fs.String("o", "", "output tar")
	busybox := fs.String("busybox", "", "static busybox binary: installed as /bin/busybox with a link per applet")
	entrypoint := fs.String("entrypoint", "", "entrypoint, space-separated")
	cmd := fs.String("cmd", "", "default command, space-separated")
	var files fileFlag
	fs.Var(&files, "file", "SRC=DST: add a local file at DST (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *out == "" {
		return errors.New("-name and -o are required")
	}
	spec := ImageSpec{Name: *name, Entrypoint: strings.Fields(*entrypoint), Cmd: strings.Fields(*cmd)}
	if *busybox != "" {
		entries, err := BusyboxEntries(*busybox)
		if err != nil {
			return err
		}
		spec.Entries = append(spec.Entries, entries...)
	}
	for _, f := range files {
		src, dst, ok := strings.Cut(f, "=")
		if !ok || dst == "" {
			return fmt.Errorf("-file %q: want SRC=DST", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("read %q: %w", src, err)
		}
		spec.Entries = append(spec.Entries, Entry{Path: dst, Mode: 0o755, Data: data})
	}
	return WriteFile(*out, spec)
}
