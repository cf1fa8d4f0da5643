package analyze

import (
	"fmt"
	"io"
	"strings"
	"time"

	"podflow.dev/podflow/untrusted"
)

func renderMarkdown(w io.Writer, r *Report, opts RenderOptions) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	// md is how every bundle-derived string enters Markdown: one inert line, with the
	// characters Markdown would act on escaped.
	md := func(s string) string { return mdEscape(untrusted.Text(displayText(s))) }
	p("# podflow analysis\n\n%s\n", headline(r))
	for _, row := range ordered(r) {
		f := row.f
		kind := "Root cause"
		switch {
		case f.History:
			kind = "History (the pods got past it since)"
		case row.consequence:
			kind = "Consequence"
		}
		p("\n## %s: %s (%s, %s)\n\n", kind, md(f.Title), f.Stage, f.Severity)
		p("**%s**\n\n", md(f.Cause))
		p("- Finding: `%s` (rule `%s`)\n", md(f.ID), md(f.Rule))
		p("- Subjects: %s\n", md(strings.Join(SubjectLines(f), "; ")))
		var others []string
		for _, s := range f.Subjects {
			if s.Kind != "Pod" && !isWorkload(s.Kind) {
				others = append(others, s.String())
			}
		}
		if len(others) > 0 {
			p("- Involves: %s\n", md(strings.Join(others, ", ")))
		}
		if len(f.ExplainedBy) > 0 {
			p("- Explained by: `%s`\n", md(strings.Join(f.ExplainedBy, "`, `")))
		}
		if len(f.Explains) > 0 {
			p("- Explains: `%s`\n", md(strings.Join(f.Explains, "`, `")))
		}
		p("\nEvidence:\n\n")
		for _, e := range f.Evidence {
			when := ""
			if e.Time != nil {
				when = " (" + e.Time.UTC().Format(time.RFC3339) + ")"
			}
			p("- %s%s: %s\n", mdCode(e.Location.String()), when, md(e.Excerpt))
		}
		if f.EvidenceOmitted > 0 {
			p("- … and %d more\n", f.EvidenceOmitted)
		}
		if f.Remediation != "" {
			p("\nFix: %s\n", md(f.Remediation))
		}
		planMarkdown(w, f.Plan, md)
		if len(f.Confirm) > 0 {
			// Inside a fence nothing is Markdown, but a line of backticks would close it
			// and a control character would still reach a terminal that shows the file.
			p("\nConfirm on the live cluster:\n\n```sh\n")
			for _, c := range f.Confirm {
				p("%s\n", strings.ReplaceAll(untrusted.Text(c), "```", "` ` `"))
			}
			p("```\n")
		}
	}
	renderTrailer(w, r, "- ", opts)
	if opts.Timelines {
		for _, pod := range r.Pods {
			p("\n## Timeline of %s/%s\n\n| step | status | time | detail |\n|---|---|---|---|\n", md(pod.Namespace), md(pod.Name))
			for _, s := range timeOrdered(pod.Timeline) {
				p("| %s | %s | %s | %s |\n", md(stepName(s)), s.Status, orDash(stepTime(s)), strings.ReplaceAll(md(s.Detail), "|", "\\|"))
			}
		}
	}
	return nil
}

// mdEscape keeps values from being read as Markdown (an image name with * or _, a link
// or an HTML tag forged in a log line).
func mdEscape(s string) string {
	r := strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// mdCode writes a citation as inline code, escaped for a terminal; a backtick inside
// (a hostile file name) makes the span longer than any run it holds.
func mdCode(s string) string {
	s = untrusted.Text(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.Contains(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
