package main

import (
	"context"

	"github.com/spf13/pflag"

	"podflow.dev/podflow/bundle"
)

// openFlags are the reader limits every command that opens bundles accepts.
type openFlags struct {
	limits bundle.Limits
}

func (o *openFlags) add(fs *pflag.FlagSet) {
	o.limits = bundle.DefaultLimits()
	fs.Int64Var(&o.limits.MaxFileSize, "max-file-size", o.limits.MaxFileSize, "refuse bundles with a file larger than this many bytes (uncompressed)")
	fs.Int64Var(&o.limits.MaxTotalSize, "max-total-size", o.limits.MaxTotalSize, "refuse bundles larger than this many bytes in all (uncompressed)")
}

func (o *openFlags) open(ctx context.Context, path string) (*bundle.Bundle, error) {
	return bundle.OpenContext(ctx, path, o.limits)
}

// scan reads a bundle once keeping only checksums and counts (verify, inspect): memory
// stays at the largest file, whatever the bundle's size.
func (o *openFlags) scan(ctx context.Context, path string, opts bundle.ScanOptions) (*bundle.Bundle, error) {
	return bundle.ScanContext(ctx, path, o.limits, opts)
}
