package main

import (
	"context"

	"github.com/spf13/pflag"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
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

// addRedactFlags registers the redaction flags of a command that writes a bundle.
func addRedactFlags(fs *pflag.FlagSet, f *redact.Flags) {
	addRedactPolicyFlags(fs, f)
	fs.BoolVar(&f.NoRedact, redact.FlagNoRedact, false, "write secrets as found, unmasked; requires --"+redact.FlagContainsSecrets)
	fs.BoolVar(&f.ContainsSecrets, redact.FlagContainsSecrets, false, "confirm that --"+redact.FlagNoRedact+" is meant and the bundle will hold secrets")
	fs.BoolVar(&f.SkipLeakScan, redact.FlagSkipLeakScan, false, "keep the bundle even when the leak scan after writing still finds secrets")
}

// addRedactPolicyFlags registers only the flags that shape the policy, for commands
// where turning redaction off makes no sense (podflow redact).
func addRedactPolicyFlags(fs *pflag.FlagSet, f *redact.Flags) {
	fs.StringVar(&f.ConfigFile, redact.FlagConfig, "", "YAML file of extra redaction rules: literal values, regexes, fields per kind")
	fs.StringVar(&f.Key, redact.FlagKey, "", "fixed key for the digests in masks, for reproducible output and digests comparable across bundles (default: a random key per bundle)")
}
