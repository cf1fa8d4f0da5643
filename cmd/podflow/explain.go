package main

import (
	"context"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
)

// explainOptions are the inputs of `podflow explain`.
type explainOptions struct {
	*globalOptions
	open      openFlags
	format    string
	paths     []string
	namespace string
	name      string
	output    string
	width     int
	// signatures are files or directories of user signatures (--signatures).
	signatures []string
}

func newExplainCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "explain INPUT... NAMESPACE/POD",
		Short: "Walk one Pod's creation chain stage by stage: ok, broken or no evidence, citing files",
		Example: `  podflow explain shop.tar.gz shop/web-7d9f8b6c5d-4xk2p
  podflow explain cluster.tar.gz node-n1.tar.gz shop/web-7d9f8b6c5d-4xk2p -o json
  podflow explain ./cluster-dump/ shop/web-7d9f8b6c5d-4xk2p`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args[:len(args)-1]
			ns, name, err := splitPod(args[len(args)-1])
			if err != nil {
				return err
			}
			o.namespace, o.name = ns, name
			if err := checkOutput(o.output, "text", analyze.FormatJSON, analyze.FormatYAML, analyze.FormatHTML); err != nil {
				return err
			}
			return runExplain(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json, yaml or html (one self-contained file for a ticket)")
	cmd.Flags().IntVar(&o.width, "width", 0, "fit the text to N columns, also when piped (default: the terminal's width, or COLUMNS)")
	cmd.Flags().StringArrayVar(&o.signatures, "signatures", nil, "add your own signatures: a YAML file or a directory of them (repeatable)")
	addFormatFlag(cmd.Flags(), &o.format)
	o.open.add(cmd.Flags())
	return cmd
}

func runExplain(ctx context.Context, o *explainOptions) error {
	graph, err := loadGraph(ctx, o.globalOptions, &o.open, o.format, o.paths, analyze.LoadOptions{})
	if err != nil {
		return err
	}
	selected, err := selectRules(nil, nil, o.signatures)
	if err != nil {
		return err
	}
	x, err := analyze.ExplainContext(ctx, graph, selected, o.namespace, o.name, analyze.Options{PodflowVersion: version, Unexplained: true})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return analyze.RenderExplanation(o.streams.Out, x, o.output, analyze.RenderOptions{
		Width: terminalWidth(o.streams, o.width), Color: useColor(o.streams), Verbose: o.verbosity > 0, Quiet: o.quiet,
	})
}
