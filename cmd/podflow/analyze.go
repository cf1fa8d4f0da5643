package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/rules"
)

// analyzeOptions are the inputs of `podflow analyze`.
type analyzeOptions struct {
	*globalOptions
	open      openFlags
	format    string
	paths     []string
	output    string
	failOn    string
	rules     []string
	skipRules []string
	namespace string
	pod       string
	// signatures are files or directories of user signatures (--signatures).
	signatures []string
	wide       bool
	width      int
	timelines  bool
}

func newAnalyzeCmd(g *globalOptions) *cobra.Command {
	o := &analyzeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "analyze INPUT...",
		Short: "Replay each Pod's creation chain from a bundle and report where it broke, why, and the evidence",
		Long: `Analyze loads one or more bundles (a cluster bundle and node bundles are read together),
runs every rule over the evidence and reports each root cause with the pods it affects,
the evidence it rests on, how to confirm it on a live cluster and how to fix it. Later
symptoms of the same pods are listed as consequences of their root cause.

An input is a podflow bundle or what another tool wrote, as a directory or archive
(.tar, .tar.gz, .tar.xz); the format is detected unless --format names it:
  troubleshoot       a Troubleshoot support bundle
  must-gather        an OpenShift must-gather (oc adm must-gather)
  sosreport          a node's sosreport: its journals, crictl state and kubelet config;
                     analyze it together with a cluster bundle or must-gather
  cluster-info-dump  kubectl cluster-info dump --output-directory (JSON or YAML)
  loose              pasted text: kubectl describe pod/node, get events/pods tables,
                     get -o yaml/json, kubelet journal lines, crictl ps -a/pods/inspect,
                     kubectl logs output; a text file, a directory of them, - for stdin,
                     or a pipe such as <(kubectl describe pod x)
Evidence from imported inputs cites the original files and lines; every input file is
accounted for (used, ignored or unreadable, with the reason).

Exit status: 0 when no finding is at or above --fail-on, 3 when one is, 1 on error,
2 on a usage error.`,
		Example: `  podflow analyze shop.tar.gz
  podflow analyze cluster.tar.gz node-n1.tar.gz -n shop
  podflow analyze shop.tar.gz --pod shop/web-7d9f8b6c5d-4xk2p --timelines
  podflow analyze shop.tar.gz -o markdown > ticket.md
  podflow analyze shop.tar.gz -o html > report.html
  podflow analyze shop.tar.gz -o json --fail-on critical | jq '.findings[] | select(.root)'
  podflow analyze support-bundle-2026-11-29T20_07_59.tar.gz
  podflow analyze ./cluster-dump/ --format cluster-info-dump
  podflow analyze must-gather.local.5318008/ sosreport-n1-2026-11-29-qwkzbfn.tar.xz
  kubectl describe pod -n shop web-7d9f8b6c5d-4xk2p | podflow analyze -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			if err := o.validate(); err != nil {
				return err
			}
			return runAnalyze(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", analyze.FormatTable, "output format: "+strings.Join(analyze.Formats, ", ")+" (html: one self-contained file for a ticket)")
	f.IntVar(&o.width, "width", 0, "fit the table to N columns, also when piped (default: the terminal's width, or COLUMNS)")
	f.BoolVar(&o.wide, "wide", false, "on a terminal, print the full table with every column instead of fitting it to the terminal's width")
	f.StringVar(&o.failOn, "fail-on", string(analyze.SeverityError), "exit with status 3 when a finding is at or above this severity: info, warning, error or critical; none never does")
	f.StringArrayVar(&o.rules, "rule", nil, "run only this rule (repeatable; see podflow rules)")
	f.StringArrayVar(&o.skipRules, "skip-rule", nil, "do not run this rule (repeatable)")
	f.StringVarP(&o.namespace, "namespace", "n", "", "report only findings and pods of this namespace")
	f.StringVar(&o.pod, "pod", "", "report only this pod (namespace/name) and the findings linked to it")
	f.StringArrayVar(&o.signatures, "signatures", nil, "add your own signatures: a YAML file or a directory of them (repeatable; see docs/signatures.md)")
	f.BoolVar(&o.timelines, "timelines", false, "add each reported pod's timeline and evidence coverage to the report")
	addFormatFlag(f, &o.format)
	o.open.add(f)
	return cmd
}

// failOnNone turns the findings exit status off, for reports where findings are expected.
const failOnNone = "none"

func (o *analyzeOptions) validate() error {
	if _, err := importer.ParseFormat(o.format); err != nil {
		return usageError("--format: %v", err)
	}
	if err := checkOutput(o.output, analyze.Formats...); err != nil {
		return err
	}
	if o.failOn != failOnNone {
		if _, err := analyze.ParseSeverity(o.failOn); err != nil {
			return usageError("--fail-on: %v (or %s)", err, failOnNone)
		}
	}
	for _, id := range append(append([]string{}, o.rules...), o.skipRules...) {
		if rules.ByID(id) == nil && rules.SignatureByID(id) == nil && !o.userSignature(id) {
			return usageError("unknown rule %q: podflow rules lists them", id)
		}
	}
	if o.pod != "" {
		if _, _, err := splitPod(o.pod); err != nil {
			return err
		}
		if o.namespace != "" {
			return usageError("--pod and --namespace cannot be combined: --pod already names the namespace")
		}
	}
	return nil
}

// splitPod parses a namespace/name argument; a malformed one is a usage error.
func splitPod(s string) (string, string, error) {
	ns, name, err := bundle.SplitPodName(s)
	if err != nil {
		return "", "", usageError("%w", err)
	}
	return ns, name, nil
}

// userSignature reports whether a user signature file given with --signatures holds
// the ID; a file that does not load is reported by run, not here.
func (o *analyzeOptions) userSignature(id string) bool {
	sigs, err := rules.LoadSignatures(o.signatures)
	if err != nil || len(o.signatures) == 0 {
		return false
	}
	for _, s := range sigs {
		if s.ID == id {
			return true
		}
	}
	return false
}

// selectRules applies --rule and --skip-rule to the catalog (the rules, then the
// built-in signatures, then the user's), keeping its order.
func selectRules(only, skip, signatureFiles []string) ([]*analyze.Rule, error) {
	user, err := rules.LoadSignatures(signatureFiles)
	if err != nil {
		return nil, err
	}
	catalog, err := rules.Catalog(user)
	if err != nil {
		return nil, err
	}
	var out []*analyze.Rule
	for _, r := range catalog {
		ids := []string{r.ID}
		if s := r.Signature(); s != nil && s.ForRule != "" {
			ids = append(ids, s.ForRule)
		}
		if len(only) > 0 && !slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(only, id) }) {
			continue
		}
		if slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(skip, id) }) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// checkScope refuses a --pod or --namespace the evidence does not hold: a report about
// nothing must not read as "no problems".
func checkScope(g *analyze.Graph, namespace, pod string) error {
	if pod != "" {
		ns, name, _ := strings.Cut(pod, "/")
		if g.FindPod(ns, name) == nil {
			return &analyze.PodNotFoundError{Pod: pod}
		}
	}
	if namespace != "" && !g.HasNamespace(namespace) {
		return fmt.Errorf("namespace %q: the evidence holds no pod, event or object in it", namespace)
	}
	return nil
}

// addFormatFlag adds --format, which names the input format instead of detecting it.
func addFormatFlag(f *pflag.FlagSet, format *string) {
	names := make([]string, len(importer.Formats))
	for i, f := range importer.Formats {
		names[i] = string(f)
	}
	f.StringVar(format, "format", "auto", "input format: auto, "+strings.Join(names, ", "))
}

// loadGraph opens every input, importing those that are not podflow bundles, and loads
// them into one evidence graph. An imported bundle carries the origin of its files, so
// the graph's citations name the original files and lines.
func loadGraph(ctx context.Context, g *globalOptions, open *openFlags, format string, paths []string, opts analyze.LoadOptions) (*analyze.Graph, error) {
	evidenceGC()
	prog := g.progressFor(paths)
	// Nothing reads the files again once they are decoded: they stay compressed until
	// the load takes each, and it lets go of them.
	bundles, err := openInputs(ctx, g, open, format, paths, prog, true)
	if err != nil {
		return nil, err
	}
	t := prog.spinner("decode")
	var podsDone func()
	opts.PodLoaded, podsDone = g.podProgress(prog)
	graph, err := analyze.LoadWith(ctx, bundles, g.log(), opts)
	podsDone()
	t.done()
	prog.wait()
	if err != nil {
		return nil, err
	}
	// The report lists load warnings itself; stderr gets them only with -v.
	for _, w := range graph.Warnings() {
		g.log().Debug(w.String())
	}
	return graph, nil
}

// openInputs opens every input, importing those that are not podflow bundles, warning
// of a bundle that does not verify and of input files that could not be read. With
// readOnce the bundles are for one load that decodes each file once (importer.Options).
func openInputs(ctx context.Context, g *globalOptions, open *openFlags, format string, paths []string, prog *progress, readOnce bool) ([]*bundle.Bundle, error) {
	f, err := importer.ParseFormat(format)
	if err != nil {
		prog.wait()
		return nil, usageError("--format: %v", err)
	}
	var bundles []*bundle.Bundle
	for _, p := range paths {
		t := prog.spinner(fmt.Sprintf("read %s (%s)", filepath.Base(p), sizeText(inputSize([]string{p}))))
		b, rep, err := importer.OpenContext(ctx, p, importer.Options{Format: f, Limits: open.limits, Log: g.log(), Stdin: g.streams.In, ReadOnce: readOnce})
		t.done()
		if err != nil {
			prog.wait()
			return nil, err
		}
		if err := warnUnverified(ctx, g.log(), p, b); err != nil {
			prog.wait()
			return nil, err
		}
		fields := logrus.Fields{"input": p}
		if rep != nil {
			fields["format"], fields["used"], fields["ignored"], fields["unreadable"] = rep.Format,
				rep.Count(importer.StatusUsed)+rep.Count(importer.StatusFailed), rep.Count(importer.StatusIgnored), rep.Count(importer.StatusUnreadable)
		}
		g.log().WithFields(fields).Debug("input opened")
		warnUnreadable(g.log(), p, rep)
		bundles = append(bundles, b)
	}
	return bundles, nil
}

func runAnalyze(ctx context.Context, o *analyzeOptions) error {
	// A report is about pods in trouble: healthy pods' routine journal lines need not
	// be held, nor what only the namespaces out of its scope hold (analyze.LoadOptions).
	scope := o.namespace
	if o.pod != "" {
		scope, _, _ = strings.Cut(o.pod, "/")
	}
	graph, err := loadGraph(ctx, o.globalOptions, &o.open, o.format, o.paths, analyze.LoadOptions{TroubleOnly: true, Namespace: scope})
	if err != nil {
		return err
	}
	if err := checkScope(graph, o.namespace, o.pod); err != nil {
		return err
	}
	selected, err := selectRules(o.rules, o.skipRules, o.signatures)
	if err != nil {
		return err
	}
	prog := o.progressFor(o.paths)
	t := prog.counter("rules", len(selected))
	// With --rule or --skip-rule the user chose the rules; what they left out would read
	// as unexplained.
	report, err := analyze.RunContext(ctx, graph, selected, analyze.Options{
		Namespace: o.namespace, Pod: o.pod, Timelines: o.timelines, PodflowVersion: version,
		Unexplained: len(o.rules) == 0 && len(o.skipRules) == 0,
		RuleDone:    func(string) { t.inc() },
		LastRun:     true,
		Alone:       true,
	})
	t.done()
	prog.wait()
	if err != nil {
		return err
	}
	letEvidenceGo()
	for _, v := range report.Violations {
		o.log().WithField("rule", v.Rule).Warn(v.Message)
	}
	if err := ctx.Err(); err != nil {
		return err // stopped before any of the report was printed
	}
	if err := analyze.Render(o.streams.Out, report, o.output, analyze.RenderOptions{
		Unicode: o.streams.OutTTY, Timelines: o.timelines, Width: terminalWidth(o.streams, o.width), Wide: o.wide,
		Color: useColor(o.streams), Verbose: o.verbosity > 0, Quiet: o.quiet,
	}); err != nil {
		return err
	}
	if o.failOn == failOnNone {
		return nil
	}
	failOn, _ := analyze.ParseSeverity(o.failOn) // validated
	if n := report.AtOrAbove(failOn); n > 0 {
		o.log().Debugf("%d finding(s) at or above %s", n, failOn)
		return &silentExit{code: exitFindings}
	}
	return nil
}
