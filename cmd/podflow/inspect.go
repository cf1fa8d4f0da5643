package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted"
)

type inspectOptions struct {
	*globalOptions
	open   openFlags
	output string
	path   string
}

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := &inspectOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "inspect BUNDLE",
		Short: "Summarize a bundle: scope, collection time, sources, counts per kind, nodes, size",
		Example: `  podflow inspect shop.tar.gz
  podflow inspect shop.tar.gz -o json | jq .sources`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if err := checkOutput(o.output, "text", "json", "yaml"); err != nil {
				return err
			}
			return runInspect(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	o.open.add(cmd.Flags())
	return cmd
}

func runInspect(ctx context.Context, o *inspectOptions) error {
	b, err := o.open.scan(ctx, o.path, bundle.ScanOptions{CountItems: true})
	if err != nil {
		return err
	}
	s := bundle.Summarize(b)
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.output != "text" {
		return writeStructured(o.streams.Out, o.output, s)
	}
	return writeSummary(o.streams.Out, s)
}

// writeSummary prints a summary as text. Every string in it comes from the bundle, so
// each is escaped: a name may carry terminal escapes or a forged newline.
func writeSummary(w io.Writer, s bundle.Summary) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	t, list := untrusted.Text, func(items []string) string { return untrusted.Text(strings.Join(items, ", ")) }
	p("Bundle:      %s\n", t(s.Source))
	if s.FormatVersion == "" {
		p("Format:      no podflow.json (not written by podflow)\n")
	} else {
		p("Format:      %s (written by podflow %s, %s bundle)\n", t(s.FormatVersion), t(s.PodflowVersion), t(orDash(s.Type)))
	}
	if s.CollectedAt != nil {
		p("Collected:   %s\n", s.CollectedAt.UTC().Format(time.RFC3339))
	}
	if c := s.Cluster; c != nil && (c.Server != "" || c.ServerVersion != "") {
		p("Cluster:     %s %s (clock skew %.1fs)\n", t(orDash(c.Name)), t(orDash(c.ServerVersion)), c.ClockSkewSeconds)
	}
	if sc := s.Scope; sc != nil {
		ns := strings.Join(sc.Namespaces, ",")
		if sc.AllNamespaces {
			ns = "all"
		}
		p("Scope:       namespaces=%s selector=%s pod=%s since=%s node=%s\n", t(orDash(ns)), t(orDash(sc.LabelSelector)), t(orDash(sc.Pod)), t(orDash(sc.Since)), t(orDash(sc.Node)))
	}
	p("Size:        %d files, %d bytes uncompressed, %d container logs, %d values redacted\n", s.Files, s.Bytes, s.Logs, s.Redacted)
	p("Namespaces:  %s\n", orDash(list(s.Namespaces)))
	switch {
	case len(s.Nodes) == 0:
		p("Nodes:       -\n")
	case len(s.NodeEvidence) == 0:
		p("Nodes:       %d: %s (no node evidence)\n", len(s.Nodes), list(s.Nodes))
	default:
		p("Nodes:       %d: %s (node evidence: %s)\n", len(s.Nodes), list(s.Nodes), list(s.NodeEvidence))
	}
	kinds := make([]string, 0, len(s.Kinds))
	for k := range s.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	p("Objects:\n")
	for _, k := range kinds {
		p("  %-36s %d\n", t(k), s.Kinds[k])
	}
	if len(s.Sources) > 0 {
		p("Sources:\n")
		for _, src := range s.Sources {
			line := fmt.Sprintf("  %-36s %-8s %6dms", t(src.Name), t(src.Status), src.DurationMS)
			if src.Error != "" {
				line += "  " + t(src.Error)
			}
			p("%s\n", line)
		}
	}
	for _, u := range s.Unreadable {
		p("Warning: %s is not a readable JSON list\n", t(u))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
