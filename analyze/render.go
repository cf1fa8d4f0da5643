package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"
)

// Output formats of a report.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatYAML     = "yaml"
	FormatMarkdown = "markdown"
)

// RenderOptions adjust the human formats.
type RenderOptions struct {
	// Unicode draws table borders with box characters (on a terminal); ASCII otherwise,
	// so piped output is stable and plain.
	Unicode bool
	// Timelines adds each reported pod's timeline.
	Timelines bool
}

// Render writes the report in one of the formats.
func Render(w io.Writer, r *Report, format string, opts RenderOptions) error {
	switch format {
	case FormatJSON:
		return writeJSON(w, r)
	case FormatYAML:
		return writeYAML(w, r)
	case FormatMarkdown:
		return renderMarkdown(w, r, opts)
	case FormatTable, "":
		return renderTable(w, r, opts)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

func writeYAML(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if data, err = yaml.JSONToYAML(data); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// ordered lists root findings each followed by the consequences it explains, so a reader
// sees causes first; a consequence of several roots follows the first.
func ordered(r *Report) []rowFinding {
	placed := map[string]bool{}
	var out []rowFinding
	for _, f := range r.Findings {
		if !f.Root || placed[f.ID] {
			continue
		}
		placed[f.ID] = true
		out = append(out, rowFinding{f: f})
		for _, id := range f.Explains {
			if c := r.Finding(id); c != nil && !placed[id] && !c.Root {
				placed[id] = true
				out = append(out, rowFinding{f: c, consequence: true})
			}
		}
	}
	for _, f := range r.Findings {
		if !placed[f.ID] {
			out = append(out, rowFinding{f: f, consequence: !f.Root})
		}
	}
	return out
}

type rowFinding struct {
	f           *Finding
	consequence bool
}

// PodsLabel names a finding's pods compactly: one pod by name, replicas by their common
// prefix ("shop/web-7d9f-* (3 pods)"), otherwise the first with a count.
func PodsLabel(f *Finding) string {
	pods := f.Pods()
	switch len(pods) {
	case 0:
		var others []string
		for _, s := range f.Subjects {
			others = append(others, s.Kind+" "+s.NamespacedName())
		}
		if len(others) > 2 {
			others = append(others[:2], fmt.Sprintf("+%d more", len(others)-2))
		}
		return strings.Join(others, ", ")
	case 1:
		return pods[0].NamespacedName()
	}
	ns := pods[0].Namespace
	prefix := pods[0].Name
	for _, p := range pods[1:] {
		if p.Namespace != ns {
			ns = ""
		}
		for !strings.HasPrefix(p.Name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if i := strings.LastIndexByte(prefix, '-'); i > 0 {
		prefix = prefix[:i+1]
	}
	if ns != "" && strings.HasSuffix(prefix, "-") {
		return fmt.Sprintf("%s/%s* (%d pods)", ns, prefix, len(pods))
	}
	return fmt.Sprintf("%s and %d more pods", pods[0].NamespacedName(), len(pods)-1)
}

func keyEvidence(f *Finding, n int) []string {
	var out []string
	for i, e := range f.Evidence {
		if i == n {
			break
		}
		l := e.Location
		// The table leaves out the bundle: paths rarely clash and the column stays narrow.
		l.Bundle = ""
		out = append(out, l.String())
	}
	if extra := len(f.Evidence) + f.EvidenceOmitted - n; extra > 0 {
		out = append(out, fmt.Sprintf("(+%d more)", extra))
	}
	return out
}

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
			cfg.Row.ColMaxWidths.PerColumn = tw.Mapper[int, int]{2: 30, 3: 60, 4: 48}
		})
		table.Header("Stage", "Severity", "Pods", "Root cause", "Key evidence")
		for _, row := range ordered(r) {
			f := row.f
			stage, cause := string(f.Stage), f.Cause
			if row.consequence {
				arrow := "-> "
				if opts.Unicode {
					arrow = "↳ "
				}
				stage = arrow + stage
				cause = "consequence: " + cause
			}
			if err := table.Append(stage, string(f.Severity), PodsLabel(f), cause, strings.Join(keyEvidence(f, 2), "\n")); err != nil {
				return fmt.Errorf("render table: %w", err)
			}
		}
		if err := table.Render(); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
		p("\n")
	}
	renderTrailer(w, r, "")
	if opts.Timelines {
		for _, pod := range r.Pods {
			p("\nTimeline of %s/%s (node %s, phase %s):\n", pod.Namespace, pod.Name, orDash(pod.Node), orDash(pod.Phase))
			for _, s := range pod.Timeline {
				p("  %-20s %-7s %-10s %s\n", stepName(s), s.Status, orDash(stepTime(s)), clip(s.Detail, 160))
				for _, e := range s.Evidence {
					p("  %-20s %s\n", "", e.Location.String())
				}
			}
		}
	}
	return nil
}

func headline(r *Report) string {
	s := r.Summary
	when := ""
	if r.CollectedAt != nil {
		when = ", collected " + r.CollectedAt.UTC().Format(time.RFC3339)
		if !fromManifest(r) {
			when = ", latest evidence from " + r.CollectedAt.UTC().Format(time.RFC3339)
		}
	}
	if s.Findings == 0 {
		return fmt.Sprintf("No problems found in %d pod(s)%s.", s.Pods, when)
	}
	return fmt.Sprintf("%d root cause(s), %d finding(s) in all, affecting %d of %d pod(s)%s.",
		s.RootCauses, s.Findings, s.PodsWithFindings, s.Pods, when)
}

// fromManifest reports whether the collection time came from a bundle manifest rather
// than from the evidence itself.
func fromManifest(r *Report) bool {
	for _, b := range r.Bundles {
		if b.CollectedAt != nil {
			return true
		}
	}
	return false
}

// renderTrailer writes skipped rules, coverage gaps and load warnings; bullet is "" for
// plain text and "- " for Markdown.
func renderTrailer(w io.Writer, r *Report, bullet string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	heading := func(s string) {
		if bullet != "" {
			p("\n## %s\n\n", s)
		} else {
			p("%s:\n", s)
		}
	}
	item := func(s string) {
		if bullet != "" {
			p("%s%s\n", bullet, s)
		} else {
			p("  %s\n", s)
		}
	}
	if len(r.Skipped) > 0 {
		heading("Rules skipped")
		for _, s := range r.Skipped {
			item(s.Rule + ": " + s.Reason)
		}
	}
	if len(r.Gaps) > 0 {
		heading("Stages without full evidence")
		for _, g := range r.Gaps {
			var parts []string
			for _, m := range g.Missing {
				parts = append(parts, fmt.Sprintf("%s (%d pod(s))", m.Reason, m.Pods))
			}
			line := string(g.Stage) + ": "
			if g.PodsWithoutEvidence > 0 {
				line += fmt.Sprintf("no evidence at all for %d pod(s); ", g.PodsWithoutEvidence)
			}
			item(line + strings.Join(parts, "; "))
		}
	}
	if len(r.Warnings) > 0 {
		heading("Load warnings")
		for _, warn := range r.Warnings {
			item(warn.String())
		}
	}
}

// clip shortens a one-line text for a terminal, keeping its end, where errors say why.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !utf8Start(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

func stepName(s Step) string {
	if s.Container != "" {
		return s.Step + " " + s.Container
	}
	return s.Step
}

func stepTime(s Step) string {
	if s.Time == nil {
		return ""
	}
	return s.Time.UTC().Format("15:04:05")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func renderMarkdown(w io.Writer, r *Report, opts RenderOptions) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# podflow analysis\n\n%s\n", headline(r))
	for _, row := range ordered(r) {
		f := row.f
		kind := "Root cause"
		if row.consequence {
			kind = "Consequence"
		}
		p("\n## %s: %s (%s, %s)\n\n", kind, f.Title, f.Stage, f.Severity)
		p("**%s**\n\n", mdEscape(f.Cause))
		p("- Finding: `%s` (rule `%s`)\n", f.ID, f.Rule)
		p("- Pods: %s\n", mdEscape(PodsLabel(f)))
		var others []string
		for _, s := range f.Subjects {
			if s.Kind != "Pod" {
				others = append(others, s.Kind+" "+s.NamespacedName())
			}
		}
		if len(others) > 0 {
			p("- Involves: %s\n", mdEscape(strings.Join(others, ", ")))
		}
		if len(f.ExplainedBy) > 0 {
			p("- Explained by: `%s`\n", strings.Join(f.ExplainedBy, "`, `"))
		}
		if len(f.Explains) > 0 {
			p("- Explains: `%s`\n", strings.Join(f.Explains, "`, `"))
		}
		p("\nEvidence:\n\n")
		for _, e := range f.Evidence {
			when := ""
			if e.Time != nil {
				when = " (" + e.Time.UTC().Format(time.RFC3339) + ")"
			}
			p("- `%s`%s: %s\n", e.Location.String(), when, mdEscape(e.Excerpt))
		}
		if f.EvidenceOmitted > 0 {
			p("- … and %d more\n", f.EvidenceOmitted)
		}
		if f.Remediation != "" {
			p("\nFix: %s\n", mdEscape(f.Remediation))
		}
		if len(f.Confirm) > 0 {
			p("\nConfirm on the live cluster:\n\n```sh\n%s\n```\n", strings.Join(f.Confirm, "\n"))
		}
	}
	renderTrailer(w, r, "- ")
	if opts.Timelines {
		for _, pod := range r.Pods {
			p("\n## Timeline of %s/%s\n\n| step | status | time | detail |\n|---|---|---|---|\n", pod.Namespace, pod.Name)
			for _, s := range pod.Timeline {
				p("| %s | %s | %s | %s |\n", stepName(s), s.Status, orDash(stepTime(s)), mdEscape(strings.ReplaceAll(s.Detail, "|", "\\|")))
			}
		}
	}
	return nil
}

// mdEscape keeps values from being read as Markdown (an image name with * or _).
func mdEscape(s string) string {
	r := strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
