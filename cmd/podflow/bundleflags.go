package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
)

// openFlags are the reader limits every command that opens bundles accepts.
type openFlags struct {
	limits bundle.Limits
}

func (o *openFlags) add(fs *pflag.FlagSet) {
	o.limits = bundle.DefaultLimits()
	fs.Var((*byteSize)(&o.limits.MaxFileSize), "max-file-size", "refuse bundles with a file larger than this, uncompressed (bytes, or a size such as 2Gi or 500MiB)")
	fs.Var((*byteSize)(&o.limits.MaxTotalSize), "max-total-size", "refuse bundles larger than this in all, uncompressed (bytes, or a size such as 16Gi or 20GB)")
}

// byteSize is a flag of bytes that also takes the sizes kubectl users write: a
// Kubernetes quantity (16Gi, 500M) or the same with a trailing B (16GiB, 500MB).
type byteSize int64

func (b *byteSize) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "iB") || (len(t) > 2 && strings.HasSuffix(t, "B") && strings.ContainsAny(t[len(t)-2:len(t)-1], "kKMGTPE")) {
		t = t[:len(t)-1]
	}
	q, err := resource.ParseQuantity(t)
	if err != nil {
		return fmt.Errorf("not a size: %q (write bytes, or a size such as 16Gi or 500MiB)", s)
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return fmt.Errorf("not a positive whole number of bytes: %q", s)
	}
	*b = byteSize(n)
	return nil
}

func (b *byteSize) Type() string { return "size" }

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
