package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle/redact"
	"podflow.dev/podflow/untrusted"
)

type scanOptions struct {
	*globalOptions
	open       openFlags
	output     string
	configFile string
	path       string
}

// scanReport is the -o json output of podflow scan.
type scanReport struct {
	Bundle string         `json:"bundle"`
	Total  int            `json:"total"`
	ByRule map[string]int `json:"byRule"`
	Hits   []redact.Hit   `json:"hits"`
}

func newScanCmd(g *globalOptions) *cobra.Command {
	o := &scanOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "scan BUNDLE",
		Short: "Look for secrets in a bundle: file, line and rule of each hit, never the value",
		Long: `Scan runs the detectors of the redaction policy over every file of a bundle and lists
each hit as FILE:LINE: RULE. It never prints the value found. A bundle written by podflow
with redaction on scans clean; use scan before sharing a bundle from elsewhere, and
podflow redact to fix what it finds.

Exit status: 0 when nothing is found, 3 when something is.`,
		Example: `  podflow scan shop.tar.gz
  podflow scan ./unpacked-bundle/ --redact-config rules.yaml
  podflow scan shop.tar.gz -o json | jq '.byRule'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if err := checkOutput(o.output, "text", "json", "yaml"); err != nil {
				return err
			}
			return runScan(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().StringVar(&o.configFile, redact.FlagConfig, "", "YAML file of extra redaction rules to scan for as well")
	o.open.add(cmd.Flags())
	return cmd
}

func runScan(ctx context.Context, o *scanOptions) error {
	b, err := o.open.open(ctx, o.path)
	if err != nil {
		return err
	}
	var hits []redact.Hit
	if o.configFile == "" {
		if hits, err = redact.ScanContext(ctx, b); err != nil {
			return err
		}
	} else {
		f := redact.Flags{ConfigFile: o.configFile, Key: "scan"}
		policy, err := redactionPolicy(&f, o.log())
		if err != nil {
			return err
		}
		if hits, err = policy.ScanContext(ctx, b); err != nil {
			return err
		}
	}
	report := scanReport{Bundle: o.path, Total: len(hits), ByRule: map[string]int{}, Hits: hits}
	if report.Hits == nil {
		report.Hits = []redact.Hit{}
	}
	files := map[string]bool{}
	for _, h := range hits {
		report.ByRule[h.Rule]++
		files[h.File] = true
	}
	if o.output != "text" {
		if err := writeStructured(o.streams.Out, o.output, report); err != nil {
			return err
		}
	} else {
		for _, h := range hits {
			fmt.Fprintf(o.streams.Out, "%s:%d: %s\n", untrusted.Text(h.File), h.Line, untrusted.Text(h.Rule))
		}
	}
	if len(hits) == 0 {
		o.log().Infof("%s: no secrets found", o.path)
		return nil
	}
	rules := make([]string, 0, len(report.ByRule))
	for r := range report.ByRule {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	o.log().WithField("rules", rules).Warnf("%s: %d possible secret(s) in %d file(s); podflow redact masks them", o.path, len(hits), len(files))
	return &silentExit{code: exitFindings}
}
