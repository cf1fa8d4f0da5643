package main

import (
	"os"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/rules"
)

// registerCompletions teaches shell completion (cobra's completion command and its
// hidden __complete) the values podflow knows: rule IDs, output and input formats,
// severities, and the namespaces and pods of the bundles already on the command line.
func registerCompletions(root *cobra.Command) {
	structured := []string{"text", "json", "yaml"}
	outputs := map[string][]string{
		"analyze": analyze.Formats,
		"explain": {"text", "json", "yaml", analyze.FormatHTML},
		"rules":   structured,
		"version": {"text", "json"},
	}
	for _, c := range root.Commands() {
		fixed := map[string][]string{
			"rule":      ruleIDs(),
			"skip-rule": ruleIDs(),
			"format":    inputFormats(),
			"fail-on":   failOnValues(),
		}
		if values, ok := outputs[c.Name()]; ok {
			fixed["output"] = values
		}
		for flag, values := range fixed {
			if c.Flags().Lookup(flag) != nil {
				must(c.RegisterFlagCompletionFunc(flag, completeFrom(values)))
			}
		}
		if c.Flags().Lookup("pod") != nil && c.Flags().Lookup("format") != nil {
			must(c.RegisterFlagCompletionFunc("pod", completePods))
		}
		if c.Flags().Lookup("namespace") != nil && c.Flags().Lookup("format") != nil {
			must(c.RegisterFlagCompletionFunc("namespace", completeNamespaces))
		}
		switch c.Name() {
		case "rules":
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return withPrefix(ruleIDs(), toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		case "explain":
			c.ValidArgsFunction = completeExplainArgs
		}
	}
}

// must panics on a completion registered twice or for a missing flag: a programming
// error that every completion test run would catch.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

func completeFrom(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// withPrefix keeps the values that start with what was typed.
func withPrefix(values []string, typed string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, typed) {
			out = append(out, v)
		}
	}
	return out
}

func ruleIDs() []string {
	var ids []string
	for _, r := range rules.All() {
		ids = append(ids, r.ID)
	}
	return ids
}

func inputFormats() []string {
	out := []string{"auto"}
	for _, f := range importer.Formats {
		out = append(out, string(f))
	}
	return out
}

func failOnValues() []string {
	var out []string
	for _, s := range analyze.Severities {
		out = append(out, string(s))
	}
	return append(out, failOnNone)
}

// podsIn lists namespace/name of every pod in the inputs on the command line. It reads
// quietly (no logs: they would corrupt the shell's completion) and gives up on any
// input it cannot open, so completion never fails loudly.
func podsIn(cmd *cobra.Command, inputs []string) []string {
	format, _ := cmd.Flags().GetString("format")
	f, err := importer.ParseFormat(format)
	if err != nil {
		return nil
	}
	quiet := logrus.New()
	quiet.SetOutput(nilWriter{})
	var bundles []*bundle.Bundle
	for _, p := range inputs {
		if p == "-" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		b, _, err := importer.Open(p, importer.Options{Format: f, Limits: bundle.DefaultLimits(), Log: quiet, Stdin: strings.NewReader(""), ReadOnce: true})
		if err != nil {
			continue
		}
		bundles = append(bundles, b)
	}
	if len(bundles) == 0 {
		return nil
	}
	// With no rules and every timeline asked for, the report lists every pod in scope.
	rep := analyze.Run(analyze.Load(bundles, quiet), nil, analyze.Options{Timelines: true})
	var pods []string
	for _, p := range rep.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	slices.Sort(pods)
	return pods
}

type nilWriter struct{}

func (nilWriter) Write(p []byte) (int, error) { return len(p), nil }

func completePods(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return withPrefix(podsIn(cmd, args), toComplete), cobra.ShellCompDirectiveNoFileComp
}

func completeNamespaces(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var namespaces []string
	for _, p := range podsIn(cmd, args) {
		ns, _, _ := strings.Cut(p, "/")
		namespaces = append(namespaces, ns)
	}
	return withPrefix(slices.Compact(namespaces), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeExplainArgs completes INPUT... NAMESPACE/POD: the first argument is a file;
// after it, the pods of the inputs so far, or another input when the word being typed
// is a path.
func completeExplainArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "/") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	pods := withPrefix(podsIn(cmd, args), toComplete)
	if len(pods) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return pods, cobra.ShellCompDirectiveNoFileComp
}
