package analyze

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"podflow.dev/podflow/untrusted"
)

//go:embed render_html.tmpl
var htmlTemplateText string

// htmlTemplate is parsed once; it has no external assets (styles are inline) so the file
// reads the same in an air-gapped room and printed to PDF.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"t":      func(s string) string { return untrusted.Text(displayText(s)) },
	"target": targetLabel,
	"needs":  needsText,
}).Parse(htmlTemplateText))

// htmlReport is the report as the HTML template reads it: the same Report that JSON
// writes, arranged for a reader (causes first, each pod's chain as a row of boxes).
type htmlReport struct {
	// Title names what the report is about and when it was collected.
	Title    string
	Headline string
	Version  string
	Bundles  []string
	Severity []htmlCount
	// Summary is one row per finding, causes first, at the top of the page.
	Summary  []htmlSummaryRow
	Findings []htmlFinding
	Pods     []htmlPod
	// NotRead counts the closing sections in one line; Sections list them, folded
	// unless Open (-v).
	NotRead  string
	Sections []trailerSection
	Open     bool
}

// htmlSummaryRow is one line of the summary table.
type htmlSummaryRow struct {
	ID, Subject, Cause string
	Stage              Stage
	Severity           Severity
	Consequence        bool
}

type htmlCount struct {
	Severity Severity
	N        int
}

type htmlFinding struct {
	*Finding
	Consequence bool
	Subjects    []string
	Involved    []string
	Evidence    []htmlEvidence
}

type htmlEvidence struct {
	Citation string
	Time     string
	Excerpt  string
}

type htmlPod struct {
	// Name is the pod's ns/name as the report keys it; Shown is how a reader sees it.
	Name, Shown, Node, Phase, RootCause string
	Chain                               []htmlStage
}

// htmlStage is one box of a pod's chain.
type htmlStage struct {
	Stage    Stage
	Status   string
	Summary  string
	Findings []string
	Evidence []htmlEvidence
	Missing  []string
}

func renderHTML(w io.Writer, r *Report, opts RenderOptions) error {
	pods := make([]htmlPod, 0, len(r.Pods))
	for i := range r.Pods {
		pods = append(pods, podChain(r, &r.Pods[i]))
	}
	return renderHTMLPods(w, r, pods, opts)
}

// renderHTMLPods writes the report with the given pod chains.
func renderHTMLPods(w io.Writer, r *Report, pods []htmlPod, opts RenderOptions) error {
	v := htmlReport{Title: reportTitle(r, pods), Headline: headline(r), Version: r.PodflowVersion, Open: opts.Verbose}
	for _, b := range r.Bundles {
		v.Bundles = append(v.Bundles, b.Source)
	}
	for _, s := range []Severity{SeverityCritical, SeverityError, SeverityWarning, SeverityInfo} {
		if n := r.Summary.BySeverity[s]; n > 0 {
			v.Severity = append(v.Severity, htmlCount{s, n})
		}
	}
	for _, row := range ordered(r) {
		hf := htmlFinding{Finding: row.f, Consequence: row.consequence, Subjects: SubjectLines(row.f)}
		for _, s := range row.f.Subjects {
			if s.Kind != "Pod" && !isWorkload(s.Kind) {
				hf.Involved = append(hf.Involved, s.String())
			}
		}
		hf.Evidence = htmlEvidenceOf(row.f.Evidence)
		v.Findings = append(v.Findings, hf)
		v.Summary = append(v.Summary, htmlSummaryRow{ID: row.f.ID, Stage: row.f.Stage, Severity: row.f.Severity,
			Subject: summarySubject(row.f), Cause: summaryCause(displayText(row.f.Cause), 160), Consequence: row.consequence})
	}
	v.Pods = pods
	// The closing sections are built for the text formats, already escaped for a
	// terminal; html/template escapes them again for HTML, which is what we want.
	if !opts.Quiet {
		v.Sections = trailerSections(r)
		v.NotRead = trailerSummary(r, "listed below")
	}
	if err := htmlTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	return nil
}

func htmlEvidenceOf(list []Evidence) []htmlEvidence {
	var out []htmlEvidence
	for _, e := range list {
		he := htmlEvidence{Citation: e.Location.String(), Excerpt: e.Excerpt}
		if e.Time != nil {
			he.Time = e.Time.UTC().Format(time.RFC3339)
		}
		out = append(out, he)
	}
	return out
}

// podChain is one pod's chain as boxes, walked as explain walks it (podVerdicts) from
// the report alone.
func podChain(r *Report, pr *PodReport) htmlPod {
	return htmlPodOf(pr.Ref(), pr.Node, pr.Phase, pr.RootCause, podVerdicts(r, pr))
}

func htmlPodOf(ref ObjectRef, node, phase, root string, verdicts []Verdict) htmlPod {
	hp := htmlPod{Name: ref.nsName(), Shown: ref.NamespacedName(), Node: node, Phase: phase, RootCause: root}
	for _, v := range verdicts {
		hp.Chain = append(hp.Chain, htmlStage{Stage: v.Stage, Status: v.Status, Summary: v.Summary,
			Findings: v.Findings, Evidence: htmlEvidenceOf(v.Evidence), Missing: v.Missing})
	}
	return hp
}

// renderExplanationHTML is the HTML report of one pod's explanation: its findings and
// its chain as explain walked it, with the node's health, and the warnings of its inputs.
func renderExplanationHTML(w io.Writer, x *Explanation, opts RenderOptions) error {
	if x.report == nil {
		return fmt.Errorf("render html: the explanation carries no report")
	}
	r := *x.report
	r.Warnings = x.Warnings
	root := ""
	if x.RootCause != nil {
		root = x.RootCause.ID
	}
	return renderHTMLPods(w, &r, []htmlPod{htmlPodOf(x.Ref(), x.Node, x.Phase, root, x.Stages)}, opts)
}

// reportTitle names what a report is about, the most specific first: the pod when it
// is about one, else the namespace all its pods share, and the cluster, with the time
// the evidence was collected.
func reportTitle(r *Report, pods []htmlPod) string {
	var parts []string
	switch {
	case r.Scope.Pod != "":
		parts = append(parts, "pod "+r.Scope.Pod)
	case len(pods) == 1:
		parts = append(parts, "pod "+pods[0].Name)
	case r.Scope.Namespace != "":
		parts = append(parts, "namespace "+r.Scope.Namespace)
	default:
		ns := ""
		for i, p := range r.Pods {
			if i == 0 {
				ns = p.Namespace
			} else if p.Namespace != ns {
				ns = ""
				break
			}
		}
		if ns != "" {
			parts = append(parts, "namespace "+ns)
		}
	}
	for _, b := range r.Bundles {
		if b.Cluster != "" {
			parts = append(parts, "cluster "+b.Cluster)
			break
		}
	}
	if r.CollectedAt != nil {
		parts = append(parts, "collected "+r.CollectedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if len(parts) == 0 {
		return "podflow analysis"
	}
	return "podflow: " + strings.Join(parts, " · ")
}

// summarySubject is a finding's first subject line, with how many more there are.
func summarySubject(f *Finding) string {
	lines := SubjectLines(f)
	switch len(lines) {
	case 0:
		return ""
	case 1:
		return lines[0]
	}
	return fmt.Sprintf("%s (+%d more)", lines[0], len(lines)-1)
}

// summaryCause is a text cut to at most n bytes at a word, for a summary row; the finding
// below has all of it.
func summaryCause(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,;:") + " …"
}
