package analyze

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"podflow.dev/podflow/untrusted"
)

//go:embed render_html.tmpl
var htmlTemplateText string

// htmlTemplate is parsed once; it has no external assets (styles are inline) so the file
// reads the same in an air-gapped room and printed to PDF.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"t": untrusted.Text,
}).Parse(htmlTemplateText))

// htmlReport is the report as the HTML template reads it: the same Report that JSON
// writes, arranged for a reader (causes first, each pod's chain as a row of boxes).
type htmlReport struct {
	Headline string
	Version  string
	Bundles  []string
	Severity []htmlCount
	Findings []htmlFinding
	Pods     []htmlPod
	Sections []trailerSection
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
	Name, Node, Phase, RootCause string
	Chain                        []htmlStage
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

func renderHTML(w io.Writer, r *Report) error {
	pods := make([]htmlPod, 0, len(r.Pods))
	for i := range r.Pods {
		pods = append(pods, podChain(r, &r.Pods[i]))
	}
	return renderHTMLPods(w, r, pods)
}

// renderHTMLPods writes the report with the given pod chains.
func renderHTMLPods(w io.Writer, r *Report, pods []htmlPod) error {
	v := htmlReport{Headline: headline(r), Version: r.PodflowVersion}
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
	}
	v.Pods = pods
	// The closing sections are built for the text formats, already escaped for a
	// terminal; html/template escapes them again for HTML, which is what we want.
	v.Sections = trailerSections(r)
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
	return htmlPodOf(pr.Namespace+"/"+pr.Name, pr.Node, pr.Phase, pr.RootCause, podVerdicts(r, pr, nil))
}

func htmlPodOf(name, node, phase, root string, verdicts []Verdict) htmlPod {
	hp := htmlPod{Name: name, Node: node, Phase: phase, RootCause: root}
	for _, v := range verdicts {
		hp.Chain = append(hp.Chain, htmlStage{Stage: v.Stage, Status: v.Status, Summary: v.Summary,
			Findings: v.Findings, Evidence: htmlEvidenceOf(v.Evidence), Missing: v.Missing})
	}
	return hp
}

// renderExplanationHTML is the HTML report of one pod's explanation: its findings and
// its chain as explain walked it, with the node's health, and the warnings of its inputs.
func renderExplanationHTML(w io.Writer, x *Explanation) error {
	if x.report == nil {
		return fmt.Errorf("render html: the explanation carries no report")
	}
	r := *x.report
	r.Warnings = x.Warnings
	root := ""
	if x.RootCause != nil {
		root = x.RootCause.ID
	}
	return renderHTMLPods(w, &r, []htmlPod{htmlPodOf(x.Namespace+"/"+x.Name, x.Node, x.Phase, root, x.Stages)})
}
