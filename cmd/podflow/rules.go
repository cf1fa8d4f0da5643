package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// rulesOptions are the inputs of `podflow rules`.
type rulesOptions struct {
	*globalOptions
	id     string
	output string
}

// ruleInfo is a rule as `podflow rules -o json` prints it.
type ruleInfo struct {
	ID       string         `json:"id"`
	Stage    analyze.Stage  `json:"stage"`
	Severity string         `json:"severity"`
	Title    string         `json:"title"`
	Required []analyze.Kind `json:"requires"`
	Optional []analyze.Kind `json:"uses,omitempty"`
	Doc      string         `json:"doc,omitempty"`
}

func newRulesCmd(g *globalOptions) *cobra.Command {
	o := &rulesOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "rules [ID]",
		Short: "List the diagnosis rules, or print one rule's documentation",
		Example: `  podflow rules
  podflow rules image-pull-dns
  podflow rules -o json | jq -r '.[].id'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.id = args[0]
			}
			if err := checkOutput(o.output, "text", "json", "yaml"); err != nil {
				return err
			}
			return runRules(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}

func infoOf(r *analyze.Rule, withDoc bool) ruleInfo {
	i := ruleInfo{ID: r.ID, Stage: r.Stage, Severity: string(r.Severity), Title: r.Title,
		Required: r.Needs.Required, Optional: r.Needs.Optional}
	if withDoc {
		i.Doc = r.Doc
	}
	return i
}

func runRules(_ context.Context, o *rulesOptions) error {
	out := o.streams.Out
	if o.id != "" {
		r := rules.ByID(o.id)
		if r == nil {
			return usageError("unknown rule %q: podflow rules lists them", o.id)
		}
		if o.output != "text" {
			return writeStructured(out, o.output, infoOf(r, true))
		}
		fmt.Fprintf(out, "%s (stage %s, severity %s)\n%s\n\n", r.ID, r.Stage, r.Severity, r.Title)
		fmt.Fprintf(out, "%s\n", strings.TrimSpace(r.Doc))
		fmt.Fprintf(out, "\nReads: %s\n", kindList(r.Needs.Required, r.Needs.Optional))
		return nil
	}
	all := rules.All()
	if o.output != "text" {
		// The whole catalog, documentation included, for tools and docs sites.
		infos := make([]ruleInfo, len(all))
		for i, r := range all {
			infos[i] = infoOf(r, true)
		}
		return writeStructured(out, o.output, infos)
	}
	// In the order of the chain, as a report reads.
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b *analyze.Rule) int { return a.Stage.Order() - b.Stage.Order() })
	width := len("ID")
	for _, r := range sorted {
		width = max(width, len(r.ID))
	}
	fmt.Fprintf(out, "%-*s  %-12s %s\n", width, "ID", "STAGE", "TITLE")
	for _, r := range sorted {
		fmt.Fprintf(out, "%-*s  %-12s %s\n", width, r.ID, r.Stage, r.Title)
	}
	fmt.Fprintf(out, "\n%d rules. podflow rules ID prints one rule's documentation.\n", len(sorted))
	return nil
}

func kindList(required, optional []analyze.Kind) string {
	var parts []string
	for _, k := range required {
		parts = append(parts, k.Description()+" (required)")
	}
	for _, k := range optional {
		parts = append(parts, k.Description()+" (when present)")
	}
	return strings.Join(parts, ", ")
}
