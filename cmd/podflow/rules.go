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
	// Type is "rule" for a Go rule, "signature" for message knowledge held as data.
	Type string `json:"type"`
	// Component, Source and Incidents describe a signature.
	Component string   `json:"component,omitempty"`
	Source    string   `json:"printedBy,omitempty"`
	Incidents []string `json:"incidents,omitempty"`
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
	i.Type = "rule"
	if s := r.Signature(); s != nil {
		i.Type, i.Component, i.Source, i.Incidents = "signature", s.Component, s.PrintedBy, s.Incidents
		i.Optional = nil
	}
	return i
}

func runRules(_ context.Context, o *rulesOptions) error {
	out := o.streams.Out
	all, err := rules.Catalog(nil)
	if err != nil {
		return err
	}
	if o.id != "" {
		var r *analyze.Rule
		for _, c := range all {
			if c.ID == o.id {
				r = c
			}
		}
		if r == nil {
			return usageError("unknown rule %q: podflow rules lists them", o.id)
		}
		if o.output != "text" {
			return writeStructured(out, o.output, infoOf(r, true))
		}
		fmt.Fprintf(out, "%s (stage %s, severity %s)\n%s\n\n", r.ID, r.Stage, r.Severity, r.Title)
		fmt.Fprintf(out, "%s\n", strings.TrimSpace(r.Doc))
		if r.Signature() == nil {
			fmt.Fprintf(out, "\nReads: %s\n", kindList(r.Needs.Required, r.Needs.Optional))
		}
		return nil
	}
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
	fmt.Fprintf(out, "%-*s  %-12s %-10s %s\n", width, "ID", "STAGE", "TYPE", "TITLE")
	sigs := 0
	for _, r := range sorted {
		kind := "rule"
		if r.Signature() != nil {
			kind = "signature"
			sigs++
		}
		fmt.Fprintf(out, "%-*s  %-12s %-10s %s\n", width, r.ID, r.Stage, kind, r.Title)
	}
	fmt.Fprintf(out, "\n%d rules and %d signatures. podflow rules ID prints one's documentation.\n", len(sorted)-sigs, sigs)
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
