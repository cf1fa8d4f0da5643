package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/untrusted"
	"podflow.dev/podflow/untrusted/yamlbudget"
)

// incidentCase is one folder of an incident corpus: evidence files as pasted, and
// case.yaml saying what the diagnosis must be.
type incidentCase struct {
	Dir           string        `json:"-"`
	Source        string        `json:"source"`
	Established   string        `json:"established"`
	Stage         analyze.Stage `json:"stage"`
	Rule          string        `json:"rule"`
	CauseMentions []string      `json:"cause_mentions"`
}

// caseFile is the name of the expectations file of an incident folder.
const caseFile = "case.yaml"

// Caps on what an incident folder's files may hold: its expectations, and each piece
// of evidence (pasted text; a bundle is read with the bundle limits).
const (
	maxCaseFileBytes     = 1 << 20
	maxEvidenceFileBytes = 64 << 20
)

// caseResult is what podflow made of one incident.
type caseResult struct {
	Case      *incidentCase
	Root      *analyze.Finding
	Findings  []*analyze.Finding
	StageOK   bool
	CauseOK   bool
	Missing   []string // cause mentions the root cause does not contain
	Err       error
	Evidences int
}

// readCases reads every incident folder under dir (or dir itself when it holds a
// case.yaml), sorted by name.
func readCases(dir string) ([]*incidentCase, error) {
	if _, err := os.Stat(filepath.Join(dir, caseFile)); err == nil {
		c, err := readCase(dir)
		if err != nil {
			return nil, err
		}
		return []*incidentCase{c}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read incidents: %w", err)
	}
	var out []*incidentCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, caseFile)); err != nil {
			continue
		}
		c, err := readCase(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read incidents: %s holds no incident folder (a folder with %s and evidence files)", dir, caseFile)
	}
	return out, nil
}

func readCase(dir string) (*incidentCase, error) {
	path := filepath.Join(dir, caseFile)
	data, err := bundle.ReadRegular(path, maxCaseFileBytes, false)
	if err != nil {
		return nil, fmt.Errorf("read incident: %w", err)
	}
	c := &incidentCase{}
	if err := yamlbudget.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Dir = dir
	if !c.Stage.Valid() {
		return nil, fmt.Errorf("%s: field stage: unknown stage %q", path, c.Stage)
	}
	if c.Rule == "" {
		return nil, fmt.Errorf("%s: field rule: required (a rule or signature ID, or %s)", path, analyze.UnexplainedRule)
	}
	return c, nil
}

// evidenceDir copies an incident's evidence files (everything but case.yaml) into a
// fresh directory, so the import reads exactly what the thread showed.
func evidenceDir(c *incidentCase) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "podflow-incident-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || e.Name() == caseFile || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		// Evidence is read as a bundle's files are: no link is followed (one could
		// point out of the incident folder), no FIFO opened, the size checked first.
		data, err := bundle.ReadRegular(filepath.Join(c.Dir, e.Name()), maxEvidenceFileBytes, false)
		if err != nil {
			cleanup()
			return "", nil, fmt.Errorf("incident %s: %w", c.Dir, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), data, 0o600); err != nil {
			cleanup()
			return "", nil, err
		}
		n++
	}
	if n == 0 {
		cleanup()
		return "", nil, fmt.Errorf("%s: no evidence files next to %s", c.Dir, caseFile)
	}
	return tmp, cleanup, nil
}

// runCase imports an incident's evidence as pasted text and analyzes it with the
// catalog.
func runCase(c *incidentCase, catalog []*analyze.Rule) caseResult {
	res := caseResult{Case: c}
	dir, cleanup, err := evidenceDir(c)
	if err != nil {
		res.Err = err
		return res
	}
	defer cleanup()
	b, _, err := importer.Open(dir, importer.Options{Format: importer.FormatLoose, Limits: bundle.DefaultLimits()})
	if err != nil {
		res.Err = err
		return res
	}
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), catalog, analyze.Options{Unexplained: true})
	res.Findings = rep.Findings
	res.Root = primaryRoot(rep.Findings)
	if res.Root == nil {
		return res
	}
	res.StageOK = res.Root.Stage == c.Stage
	low := strings.ToLower(res.Root.Cause)
	for _, m := range c.CauseMentions {
		if !strings.Contains(low, strings.ToLower(m)) {
			res.Missing = append(res.Missing, m)
		}
	}
	res.CauseOK = res.StageOK && res.Root.Rule == reportedRule(catalog, c.Rule) && len(res.Missing) == 0
	return res
}

// reportedRule is the rule a report names for the rule or signature id: a signature
// that reads messages for a Go rule (its rule field) makes that rule's findings, so a
// case may name either.
func reportedRule(catalog []*analyze.Rule, id string) string {
	for _, r := range catalog {
		if r.ID != id {
			continue
		}
		if s := r.Signature(); s != nil && s.ForRule != "" {
			return s.ForRule
		}
		break
	}
	return id
}

// primaryRoot is the diagnosis a reader takes from a report: the first root cause a
// rule or signature explains, else the first the catalog reads, else the first root,
// else the first finding.
func primaryRoot(fs []*analyze.Finding) *analyze.Finding {
	var firstCatalog, firstRoot *analyze.Finding
	for _, f := range fs {
		if !f.Root {
			continue
		}
		switch f.Rule {
		case analyze.UnexplainedRule:
		case analyze.CatalogRule:
			if firstCatalog == nil {
				firstCatalog = f
			}
		default:
			return f
		}
		if firstRoot == nil {
			firstRoot = f
		}
	}
	if firstCatalog != nil {
		return firstCatalog
	}
	if firstRoot != nil {
		return firstRoot
	}
	if len(fs) > 0 {
		return fs[0]
	}
	return nil
}

// stageRow is one line of the per-stage accuracy table.
type stageRow struct {
	Stage           analyze.Stage
	Cases, StageOK  int
	CauseOK, NoFind int
	Unexplained     int
}

func stageTable(results []caseResult) []stageRow {
	rows := map[analyze.Stage]*stageRow{}
	for _, r := range results {
		row := rows[r.Case.Stage]
		if row == nil {
			row = &stageRow{Stage: r.Case.Stage}
			rows[r.Case.Stage] = row
		}
		row.Cases++
		if r.StageOK {
			row.StageOK++
		}
		if r.CauseOK {
			row.CauseOK++
		}
		if r.Root == nil {
			row.NoFind++
		} else if r.Root.Rule == analyze.UnexplainedRule {
			row.Unexplained++
		}
	}
	var out []stageRow
	total := stageRow{Stage: "total"}
	for _, st := range analyze.Stages {
		if row := rows[st]; row != nil {
			out = append(out, *row)
			total.Cases += row.Cases
			total.StageOK += row.StageOK
			total.CauseOK += row.CauseOK
			total.NoFind += row.NoFind
			total.Unexplained += row.Unexplained
		}
	}
	return append(out, total)
}

func writeStageTable(w io.Writer, rows []stageRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tCASES\tSTAGE OK\tCAUSE OK\tUNEXPLAINED ROOT\tNO FINDING")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d (%.0f%%)\t%d (%.0f%%)\t%d\t%d\n", r.Stage, r.Cases, r.StageOK, pct(r.StageOK, r.Cases),
			r.CauseOK, pct(r.CauseOK, r.Cases), r.Unexplained, r.NoFind)
	}
	tw.Flush()
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// signaturesTestOptions are the inputs of `podflow signatures test`.
type signaturesTestOptions struct {
	*globalOptions
	dir        string
	signatures []string
}

func newSignaturesCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signatures",
		Short: "Work with signatures: message knowledge as data (docs/signatures.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("signatures needs a subcommand: test")
		},
	}
	o := &signaturesTestOptions{globalOptions: g}
	test := &cobra.Command{
		Use:   "test DIR",
		Short: "Run the signatures against incident folders and print what fired where",
		Long: `test runs podflow, with the built-in rules and signatures and those given with
--signatures, over incident folders in the corpus layout: DIR is one folder or a folder of
them, each holding the evidence files as pasted and a case.yaml:

  source: https://github.com/org/repo/issues/123
  established: what the thread confirmed, in a few sentences
  stage: volume
  rule: vendor-volume-attach-quota       # the rule or signature that must be the root
  cause_mentions: ["vol-0abc"]           # strings the root cause must contain

It prints, per case, the expected and the found root cause and the evidence each finding
cites, then a table per stage. Exit status 0 when every case is diagnosed as expected, 3
when one is not.`,
		Example: `  podflow signatures test ./incidents --signatures ./vendor-signatures.yaml
  podflow signatures test ./incidents/017-attach-quota`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			return runSignaturesTest(cmd.Context(), o)
		},
	}
	test.Flags().StringArrayVar(&o.signatures, "signatures", nil, "your signatures: a YAML file or a directory of them (repeatable)")
	cmd.AddCommand(test)
	return cmd
}

func runSignaturesTest(ctx context.Context, o *signaturesTestOptions) error {
	cases, err := readCases(o.dir)
	if err != nil {
		return err
	}
	catalog, err := selectRules(nil, nil, o.signatures)
	if err != nil {
		return err
	}
	out := o.streams.Out
	var results []caseResult
	failed := 0
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := runCase(c, catalog)
		results = append(results, r)
		verdict := "ok"
		if r.Err != nil || !r.CauseOK {
			verdict, failed = "FAIL", failed+1
		}
		fmt.Fprintf(out, "%s  %s\n", verdict, untrusted.Text(filepath.Base(c.Dir)))
		fmt.Fprintf(out, "  want  %s %s\n", c.Stage, untrusted.Text(c.Rule))
		switch {
		case r.Err != nil:
			fmt.Fprintf(out, "  error %s\n", untrusted.Text(r.Err.Error()))
		case r.Root == nil:
			fmt.Fprintf(out, "  got   no finding\n")
		default:
			fmt.Fprintf(out, "  got   %s %s: %s\n", r.Root.Stage, r.Root.Rule, untrusted.Text(r.Root.Cause))
			if len(r.Missing) > 0 {
				fmt.Fprintf(out, "        the cause does not mention %s\n", untrusted.Text(strings.Join(r.Missing, ", ")))
			}
		}
		for _, f := range r.Findings {
			var where []string
			for _, e := range f.Evidence {
				where = append(where, e.Path+":"+e.Locator)
			}
			slices.Sort(where)
			where = slices.Compact(where)
			fmt.Fprintf(out, "  fired %s at %s\n", f.Rule, untrusted.Text(strings.Join(where, ", ")))
		}
	}
	fmt.Fprintln(out)
	writeStageTable(out, stageTable(results))
	if failed > 0 {
		o.log().Infof("%d of %d case(s) not diagnosed as expected", failed, len(cases))
		return &silentExit{code: exitFindings}
	}
	return nil
}
