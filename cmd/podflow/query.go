package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"podflow.dev/podflow/index"
	"podflow.dev/podflow/untrusted"
)

var tableFormats = []string{"table", "json", "csv"}

func addTableOutput(fs *pflag.FlagSet, out *string) {
	fs.StringVarP(out, "output", "o", "table", "output format: table, json or csv")
}

// writeTable renders a query's answer. Every cell is evidence-derived text: control
// characters are escaped in all three formats (CSV keeps its own quoting on top).
func writeTable(w io.Writer, format string, t index.Table) error {
	switch format {
	case "json":
		rows := make([]map[string]string, 0, len(t.Rows))
		for _, r := range t.Rows {
			m := map[string]string{}
			for i, c := range t.Columns {
				if i < len(r) {
					m[c] = r[i]
				}
			}
			rows = append(rows, m)
		}
		data, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(t.Columns); err != nil {
			return err
		}
		for _, r := range t.Rows {
			out := make([]string, len(r))
			for i, c := range r {
				out[i] = csvCell(untrusted.Text(c))
			}
			if err := cw.Write(out); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.Columns, "\t")))
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(untrusted.Text(c), "\t", " ")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// csvCell keeps a spreadsheet from reading a cell as a formula.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

type queryOptions struct {
	*globalOptions
	store  storeFlags
	output string
	since  string
	by     string
	limit  int
	unexpl bool
}

func (o *queryOptions) sinceTime() (time.Time, error) {
	if o.since == "" {
		return time.Unix(0, 0), nil
	}
	d, err := parseSince(o.since)
	if err != nil {
		return time.Time{}, usageError("--since: %v", err)
	}
	return time.Now().Add(-d), nil
}

func newQueryCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Ask the index across tickets: causes, who hit one, similar tickets, trends, phrase search, diffs, SQL",
		Example: `  podflow query causes --since 30d
  podflow query causes --unexplained --since 30d
  podflow query who image-pull-unauthorized --since 30d
  podflow query similar 1234
  podflow query search "no space left on device"`,
	}
	sub := func(use, short, example string, args cobra.PositionalArgs, flags func(*pflag.FlagSet, *queryOptions),
		run func(context.Context, *index.Store, *queryOptions, []string) (index.Table, error)) *cobra.Command {
		o := &queryOptions{globalOptions: g}
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error {
				if err := checkOutput(o.output, tableFormats...); err != nil {
					return err
				}
				s, err := o.store.open(cmd.Context(), true)
				if err != nil {
					return err
				}
				defer s.Close()
				t, err := run(cmd.Context(), s, o, a)
				if err != nil {
					return err
				}
				return writeTable(o.streams.Out, o.output, t)
			}}
		o.store.add(c.Flags())
		addTableOutput(c.Flags(), &o.output)
		c.Flags().IntVar(&o.limit, "limit", 100, "at most this many rows")
		if flags != nil {
			flags(c.Flags(), o)
		}
		return c
	}
	sinceFlag := func(fs *pflag.FlagSet, o *queryOptions) {
		fs.StringVar(&o.since, "since", "", "only tickets seen within this long (30d, 12h; default: all)")
	}
	cmd.AddCommand(
		sub("causes", "Count tickets per cause (rule or signature and fingerprint), most first",
			"  podflow query causes --since 30d\n  podflow query causes --by customer\n  podflow query causes --by month --since 365d --limit 10\n  podflow query causes --unexplained --since 30d",
			cobra.NoArgs, func(fs *pflag.FlagSet, o *queryOptions) {
				sinceFlag(fs, o)
				fs.StringVar(&o.by, "by", "", "also count by customer, release, kube, stage or month")
				fs.Lookup("limit").Usage = "at most this many rows; with --by month, this many causes, each with its months"
				fs.BoolVar(&o.unexpl, "unexplained", false, "only what no rule or signature explains, grouped by the masked template of its most telling line")
			}, func(ctx context.Context, s *index.Store, o *queryOptions, _ []string) (index.Table, error) {
				since, err := o.sinceTime()
				if err != nil {
					return index.Table{}, err
				}
				t, err := s.Causes(ctx, index.CauseQuery{Since: since, By: index.Grouping(o.by), Unexplained: o.unexpl, Limit: o.limit})
				if err != nil && strings.HasPrefix(err.Error(), "unknown grouping") {
					return t, usageError("--by: %v", err)
				}
				return t, err
			}),
		sub("who CAUSE", "List the tickets that hit a cause (a rule or signature ID, or a fingerprint)",
			"  podflow query who admission-quota-exceeded --since 30d", cobra.ExactArgs(1), sinceFlag,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				since, err := o.sinceTime()
				if err != nil {
					return index.Table{}, err
				}
				return s.Who(ctx, a[0], since, o.limit)
			}),
		sub("similar TICKET", "List earlier tickets that share a root cause with a ticket: is this a known issue?",
			"  podflow query similar 1234", cobra.ExactArgs(1), nil,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				return s.Similar(ctx, a[0], o.limit)
			}),
		sub("trend [CAUSE]", "Count tickets per month, for one cause or all",
			"  podflow query trend image-pull-rate-limited --since 365d", cobra.MaximumNArgs(1), sinceFlag,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				since, err := o.sinceTime()
				if err != nil {
					return index.Table{}, err
				}
				cause := ""
				if len(a) == 1 {
					cause = a[0]
				}
				return s.Trend(ctx, cause, since)
			}),
		sub("search PHRASE", "Find a phrase in the tickets' trouble lines",
			`  podflow query search "x509: certificate signed by unknown authority"`, cobra.ExactArgs(1), nil,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				return s.Search(ctx, a[0], o.limit)
			}),
		sub("diff TICKET TICKET", "Compare two tickets' causes by fingerprint",
			"  podflow query diff 1234 1301", cobra.ExactArgs(2), nil,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				return s.Diff(ctx, a[0], a[1])
			}),
		sub("knowledge [FROM TO]", "List the knowledge versions in the index, or compare two over every ticket both analyzed",
			"  podflow query knowledge\n  podflow query knowledge k-1a2b3c4d5e6f k-0f9e8d7c6b5a", cobra.RangeArgs(0, 2), nil,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				if len(a) == 0 {
					return s.Knowledge(ctx)
				}
				if len(a) != 2 {
					return index.Table{}, usageError("give two knowledge versions to compare")
				}
				d, err := s.DiffKnowledge(ctx, a[0], a[1])
				if err != nil {
					return index.Table{}, err
				}
				fmt.Fprintf(o.streams.ErrOut, "%s explains %d more ticket(s), stops explaining %d, changes the cause of %d, of %d analyzed by both\n",
					untrusted.Text(d.To), d.MoreExplain, d.StopExplain, d.ChangedCause, d.Both)
				return index.Table{Columns: []string{"from", "to", "both", "explainsMore", "stopsExplaining", "changedCause"},
					Rows: [][]string{{d.From, d.To, fmt.Sprint(d.Both), fmt.Sprint(d.MoreExplain), fmt.Sprint(d.StopExplain), fmt.Sprint(d.ChangedCause)}}}, nil
			}),
		sub("sql STATEMENT", "Run one read-only SQL statement (SQLite mode=ro and query_only; PostgreSQL a read-only transaction as podflow_reader)",
			`  podflow query sql "SELECT customer, COUNT(*) FROM tickets GROUP BY customer"`, cobra.ExactArgs(1), nil,
			func(ctx context.Context, s *index.Store, o *queryOptions, a []string) (index.Table, error) {
				return s.SQL(ctx, a[0], o.limit)
			}),
	)
	return cmd
}
