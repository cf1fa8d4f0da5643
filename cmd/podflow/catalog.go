package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/catalog"
	"podflow.dev/podflow/untrusted"
)

// catalogOptions are the inputs of `podflow catalog search|show|stats`.
type catalogOptions struct {
	*globalOptions
	output string
	limit  int
	args   []string
}

func newCatalogCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Browse the catalog of messages the components on the Pod path print",
		Long: `The catalog holds every message template that the kubelet, scheduler, API server and its
admission plugins, controllers, kube-proxy, containerd, runc, the CNI plugins, CSI drivers
and CoreDNS print, read from their released sources: where it is printed, which releases
print it, and the stage of the Pod chain it belongs to.`,
		Example: `  podflow catalog search 'failed to setup network for sandbox "x": plugin type="calico" failed (add)'
  podflow catalog show kubelet/0f422d4574
  podflow catalog stats -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCatalogSearchCmd(g), newCatalogShowCmd(g), newCatalogStatsCmd(g))
	return cmd
}

func newCatalogSearchCmd(g *globalOptions) *cobra.Command {
	o := &catalogOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "search TEXT...",
		Short: "Entries that print TEXT (layer by layer), or whose template holds its words",
		Example: `  podflow catalog search 'Back-off pulling image "nginx:latst"'
  podflow catalog search pod cidr not assigned -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			if err := checkOutput(o.output, "table", "json"); err != nil {
				return err
			}
			return runCatalogSearch(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	cmd.Flags().IntVar(&o.limit, "limit", 50, "print at most this many entries found by words")
	return cmd
}

func newCatalogShowCmd(g *globalOptions) *cobra.Command {
	o := &catalogOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "One entry: its template, where it is printed, which releases print it",
		Example: `  podflow catalog show kubelet/0f422d4574`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			if err := checkOutput(o.output, "table", "json"); err != nil {
				return err
			}
			return runCatalogShow(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func newCatalogStatsCmd(g *globalOptions) *cobra.Command {
	o := &catalogOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "stats",
		Short:   "Counts of entries per component, stage and release span, and the pinned releases",
		Example: `  podflow catalog stats`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, "table", "json"); err != nil {
				return err
			}
			return runCatalogStats(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func loadCatalog() (*catalog.Catalog, error) {
	c := catalog.Default()
	if err := catalog.Err(); err != nil {
		return nil, fmt.Errorf("load the message catalog: %w", err)
	}
	return c, nil
}

// catalogHit is one entry `podflow catalog search` found.
type catalogHit struct {
	By       string            `json:"by"` // "match" or "words"
	Layer    int               `json:"layer"`
	Text     string            `json:"text,omitempty"`
	Captures map[string]string `json:"captures,omitempty"`
	Entry    *catalog.Entry    `json:"entry"`
}

func runCatalogSearch(_ context.Context, o *catalogOptions) error {
	c, err := loadCatalog()
	if err != nil {
		return err
	}
	text := strings.Join(o.args, " ")
	var hits []catalogHit
	seen := map[string]bool{}
	for _, m := range c.Read(text) {
		seen[m.Entry.ID] = true
		hits = append(hits, catalogHit{By: "match", Layer: m.Layer, Text: m.Text, Captures: m.Captures, Entry: m.Entry})
	}
	words := 0
	for _, e := range c.Search(text) {
		if seen[e.ID] || words >= o.limit {
			continue
		}
		words++
		hits = append(hits, catalogHit{By: "words", Layer: -1, Entry: e})
	}
	out := o.streams.Out
	if o.output == "json" {
		if hits == nil {
			hits = []catalogHit{}
		}
		return writeStructured(out, "json", hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(out, "No catalog entry prints this text or holds its words.")
		return nil
	}
	layers := catalog.Layers(text)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BY\tLAYER\tID\tCOMPONENT\tSTAGE\tCLASS\tTEMPLATE")
	for _, h := range hits {
		layer := "-"
		if h.Layer >= 0 {
			layer = fmt.Sprint(h.Layer)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.By, layer, untrusted.Text(h.Entry.ID), untrusted.Text(h.Entry.Component),
			orDash(h.Entry.Stage), h.Entry.Class, untrusted.Text(clip(h.Entry.Template, 100)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(layers) > 1 {
		fmt.Fprintln(out, "\nLayers of the text, outermost first:")
		for i, l := range layers {
			fmt.Fprintf(out, "  %d  %s\n", i, untrusted.Text(clip(l, 140)))
		}
	}
	return nil
}

func runCatalogShow(_ context.Context, o *catalogOptions) error {
	c, err := loadCatalog()
	if err != nil {
		return err
	}
	e := c.Lookup(o.args[0])
	if e == nil {
		return usageError("no catalog entry %s: podflow catalog search TEXT finds entries", untrusted.Text(o.args[0]))
	}
	out := o.streams.Out
	if o.output == "json" {
		return writeStructured(out, "json", e)
	}
	writeEntry(out, e)
	return nil
}

func writeEntry(w io.Writer, e *catalog.Entry) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, untrusted.Text(v))
		}
	}
	row("ID", e.ID)
	row("Template", e.Template)
	row("Example", e.Example())
	row("Component", e.Component)
	row("Kind", e.Kind)
	row("Reason", e.Reason)
	row("Level", e.Level)
	row("Stage", orDash(e.Stage))
	row("Class", e.Class)
	row("Keys", strings.Join(e.Keys, ", "))
	row("Printed by", e.Package+"."+e.Function)
	if e.Source == "curated" {
		row("Where", fmt.Sprintf("%s in %s (curated: copied from that file, not read from a pinned release)", e.File, e.Module))
	} else {
		row("Where", fmt.Sprintf("%s:%d in %s@%s", e.File, e.Line, e.Module, e.Last))
	}
	if e.Sites > 1 {
		row("Call sites", fmt.Sprintf("%d in %s", e.Sites, e.Last))
	}
	span := e.First
	if e.Last != e.First {
		span += " to " + e.Last
	}
	row("Releases", fmt.Sprintf("%s (%d pinned releases)", span, max(e.Releases, 1)))
	_ = tw.Flush()
}

// catalogStats is what `podflow catalog stats -o json` prints.
type catalogStats struct {
	Format     int              `json:"format"`
	Entries    int              `json:"entries"`
	Components []componentStats `json:"components"`
	Stages     map[string]int   `json:"stages"`
	Spans      []spanStats      `json:"spans"`
	Pins       []catalog.Pin    `json:"pins"`
	NotServed  []string         `json:"notServed,omitempty"`
}

type componentStats struct {
	Component string `json:"component"`
	Entries   int    `json:"entries"`
	Failure   int    `json:"failure"`
	Warning   int    `json:"warning"`
	Info      int    `json:"info"`
	NoStage   int    `json:"noStage"`
}

type spanStats struct {
	Component string `json:"component"`
	Module    string `json:"module"`
	First     string `json:"first"`
	Last      string `json:"last"`
	Entries   int    `json:"entries"`
}

func runCatalogStats(_ context.Context, o *catalogOptions) error {
	c, err := loadCatalog()
	if err != nil {
		return err
	}
	h := c.Header()
	st := catalogStats{Format: h.Format, Entries: c.Len(), Stages: map[string]int{}, Pins: h.Pins, NotServed: h.NotServe}
	comps := map[string]*componentStats{}
	spans := map[[4]string]int{}
	for _, e := range c.Entries() {
		cs := comps[e.Component]
		if cs == nil {
			cs = &componentStats{Component: e.Component}
			comps[e.Component] = cs
		}
		cs.Entries++
		switch e.Class {
		case "failure":
			cs.Failure++
		case "warning":
			cs.Warning++
		default:
			cs.Info++
		}
		if e.Stage == "" {
			cs.NoStage++
		}
		st.Stages[orDash(e.Stage)]++
		spans[[4]string{e.Component, e.Module, e.First, e.Last}]++
	}
	for _, cs := range comps {
		st.Components = append(st.Components, *cs)
	}
	sort.Slice(st.Components, func(i, j int) bool { return st.Components[i].Entries > st.Components[j].Entries })
	for k, n := range spans {
		st.Spans = append(st.Spans, spanStats{Component: k[0], Module: k[1], First: k[2], Last: k[3], Entries: n})
	}
	sort.Slice(st.Spans, func(i, j int) bool {
		a, b := st.Spans[i], st.Spans[j]
		if a.Entries != b.Entries {
			return a.Entries > b.Entries
		}
		return a.Component+a.First+a.Last < b.Component+b.First+b.Last
	})
	out := o.streams.Out
	if o.output == "json" {
		return writeStructured(out, "json", st)
	}
	fmt.Fprintf(out, "Catalog format %d: %d entries.\n\n", st.Format, st.Entries)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "COMPONENT\tENTRIES\tFAILURE\tWARNING\tINFO\tNO STAGE\t")
	for _, cs := range st.Components {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", untrusted.Text(cs.Component), cs.Entries, cs.Failure, cs.Warning, cs.Info, cs.NoStage)
	}
	_ = tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tENTRIES")
	for _, s := range append(append([]string{}, catalog.Stages...), "-") {
		if n := st.Stages[s]; n > 0 {
			fmt.Fprintf(tw, "%s\t%d\n", s, n)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tFIRST\tLAST\tENTRIES")
	for i, s := range st.Spans {
		if i == 25 {
			fmt.Fprintf(tw, "…\t%d more spans\t\t\n", len(st.Spans)-i)
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", untrusted.Text(s.Component), untrusted.Text(s.First), untrusted.Text(s.Last), s.Entries)
	}
	_ = tw.Flush()
	fmt.Fprintln(out, "\nPinned releases:")
	for _, p := range st.Pins {
		fmt.Fprintf(out, "  %s  %s\n", untrusted.Text(p.Module), untrusted.Text(strings.Join(p.Versions, " ")))
	}
	if len(st.NotServed) > 0 {
		fmt.Fprintln(out, "\nNot served by the module proxy (curated signatures cover them):")
		for _, n := range st.NotServed {
			fmt.Fprintf(out, "  %s\n", untrusted.Text(n))
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
