package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
)

func newVersionCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print podflow's version and the bundle format it writes",
		Example: "  podflow version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(g.streams.Out, "podflow %s (bundle format %s, %s, %s/%s)\n",
				version, bundle.FormatVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
