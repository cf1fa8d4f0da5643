package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/untrusted"
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
		Use:   "explain INPUT... [NAMESPACE/POD]",
		Short: "Walk one Pod's creation chain stage by stage: ok, broken or no evidence, citing files",
		Long: `Walk one Pod's creation chain stage by stage: ok, broken or no evidence, citing files.

NAMESPACE/POD may be left out when the inputs hold one pod (a pasted describe excerpt
whose Name line is cut, for one): podflow explains that one.`,
		Example: `  podflow explain shop.tar.gz shop/web-7d9f8b6c5d-4xk2p
  podflow explain cluster.tar.gz node-n1.tar.gz shop/web-7d9f8b6c5d-4xk2p -o json
  podflow explain ./cluster-dump/ shop/web-7d9f8b6c5d-4xk2p
  podflow explain ticket-paste.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The last argument is the pod, unless it names an input: then the
			// inputs hold the one pod to explain.
			o.paths = args
			if last := args[len(args)-1]; !isPath(last) {
				if len(args) == 1 {
					if _, _, err := splitPod(last); err != nil {
						return usageError("%s: no such file or directory", untrusted.Text(last))
					}
					return usageError("name an input before %s: podflow explain INPUT... NAMESPACE/POD", untrusted.Text(last))
				}
				ns, name, err := splitPod(last)
				if err != nil {
					return err
				}
				o.namespace, o.name, o.paths = ns, name, args[:len(args)-1]
			}
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
	if o.name == "" {
		ref, err := onlyPod(graph)
		if err != nil {
			return err
		}
		o.namespace, o.name = ref.Namespace, ref.Name
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

// isPath reports whether an argument names a file or directory (an input), not a pod.
func isPath(arg string) bool {
	if arg == "-" {
		return true
	}
	_, err := os.Lstat(arg)
	return err == nil
}

// onlyPod is the one pod the inputs hold, for explain without NAMESPACE/POD.
func onlyPod(g *analyze.Graph) (analyze.ObjectRef, error) {
	refs := g.PodRefs()
	switch len(refs) {
	case 1:
		return refs[0], nil
	case 0:
		return analyze.ObjectRef{}, usageError("the inputs hold no pod to explain; `podflow analyze` reads what they hold")
	}
	var names []string
	for i, r := range refs {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(refs)-5))
			break
		}
		names = append(names, untrusted.Text(r.Namespace+"/"+r.Name))
	}
	return analyze.ObjectRef{}, usageError("the inputs hold %d pods: name one after the inputs (%s)", len(refs), strings.Join(names, ", "))
}
