package analyze

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"podflow.dev/podflow/untrusted"
)

// renderTable writes the classic table: fixed column caps, the same layout whatever the
// terminal, so piped output is stable. --wide shows it on a terminal too.
func renderTable(w io.Writer, r *Report, opts RenderOptions) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("%s\n\n", headline(r))
	if len(r.Findings) > 0 {
		style := tw.StyleASCII
		if opts.Unicode {
			style = tw.StyleLight
		}
		table := tablewriter.NewTable(w,
			tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(style)})),
			tablewriter.WithRowAutoWrap(tw.WrapNormal),
		)
		table.Configure(func(cfg *tablewriter.Config) {
			cfg.Row.ColMaxWidths.PerColumn = tw.Mapper[int, int]{2: 34, 3: 60, 4: 48}
		})
		table.Header("Stage", "Severity", "Subjects", "Root cause", "Key evidence")
		for _, row := range ordered(r) {
			f := row.f
			stage := string(f.Stage)
			if row.consequence {
				stage = consequenceArrow(opts.Unicode) + stage
			}
			cause := causeText(row)
			if pl := PlanLine(f.Plan); pl != "" {
				cause += "\n" + untrusted.Text(pl)
			}
			if err := table.Append(stage, string(f.Severity), escapeJoin(SubjectLines(f), "\n"),
				cause, strings.Join(keyEvidence(f, 2), "\n")); err != nil {
				return fmt.Errorf("render table: %w", err)
			}
		}
		if err := table.Render(); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
		p("\n")
	}
	renderTrailer(w, r, "", opts)
	if opts.Timelines {
		renderTimelines(w, r)
	}
	return nil
}

func consequenceArrow(unicode bool) string {
	if unicode {
		return "↳ "
	}
	return "-> "
}

// causeText is a row's cause, escaped, with the objects it involves that it does not
// already name.
func causeText(row rowFinding) string {
	cause := row.f.Cause
	switch {
	case row.f.History:
		cause = "history, got past since: " + cause
	case row.consequence:
		cause = "consequence: " + cause
	}
	if inv := Involved(row.f); len(inv) > 0 {
		cause += " (involves " + strings.Join(inv, ", ") + ")"
	}
	return untrusted.Text(displayText(cause))
}

// escapeJoin escapes each bundle-derived string and joins them.
func escapeJoin(list []string, sep string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = untrusted.Text(s)
	}
	return strings.Join(out, sep)
}

// timeOrdered is a timeline in time order, for reading: a step without a time keeps
// its place after the step before it in the chain.
func timeOrdered(steps []Step) []Step {
	type keyed struct {
		s   Step
		at  time.Time
		pos int
	}
	var last time.Time
	ks := make([]keyed, len(steps))
	for i, s := range steps {
		if s.Time != nil && !s.Time.IsZero() {
			last = *s.Time
		}
		ks[i] = keyed{s, last, i}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].at.Before(ks[j].at) })
	out := make([]Step, len(ks))
	for i, k := range ks {
		out[i] = k.s
	}
	return out
}

func renderTimelines(w io.Writer, r *Report) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	for _, pod := range r.Pods {
		p("\nTimeline of %s/%s (node %s, phase %s):\n", untrusted.Text(pod.Namespace), untrusted.Text(pod.Name),
			untrusted.Text(orDash(pod.Node)), untrusted.Text(orDash(pod.Phase)))
		for _, s := range timeOrdered(pod.Timeline) {
			p("  %-20s %-7s %-10s %s\n", untrusted.Text(stepName(s)), s.Status, orDash(stepTime(s)), untrusted.Text(clip(s.Detail, 160)))
			for _, e := range s.Evidence {
				p("  %-20s %s\n", "", untrusted.Text(e.Location.String()))
			}
		}
	}
}
