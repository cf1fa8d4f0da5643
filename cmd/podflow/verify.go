package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted"
)

type verifyOptions struct {
	*globalOptions
	open openFlags
	path string
}

func newVerifyCmd(g *globalOptions) *cobra.Command {
	o := &verifyOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "verify BUNDLE",
		Short: "Check a bundle against its manifest: format version, checksums, missing and extra files",
		Example: `  podflow verify podflow-prod-20261129T101500Z.tar.gz
  podflow verify ./unpacked-bundle/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			return runVerify(cmd.Context(), o)
		},
	}
	o.open.add(cmd.Flags())
	return cmd
}

func runVerify(ctx context.Context, o *verifyOptions) error {
	b, err := o.open.scan(ctx, o.path, bundle.ScanOptions{})
	if err != nil {
		return err
	}
	problems, err := bundle.VerifyContext(ctx, b)
	if err != nil {
		return err
	}
	out := o.streams.Out
	if len(problems) == 0 {
		_, err := fmt.Fprintf(out, "%s: intact (format %s, %d files, %d bytes)\n", untrusted.Text(o.path), untrusted.Text(b.Manifest.FormatVersion), len(b.Names()), b.Size())
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(out, "%s\n", p)
	}
	return &codeError{code: exitError, err: fmt.Errorf("verify %q: %d problem(s)", o.path, len(problems))}
}
