package analyze

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
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
	for i := range r.Pods {
		v.Pods = append(v.Pods, podChain(r, &r.Pods[i]))
	}
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

// podChain derives one pod's chain from the report alone, stage by stage, as explain
// does from the graph: a finding at the stage makes it broken; otherwise the timeline's
// steps there decide; otherwise the coverage says whether there was evidence. After a
// broken or pending stage, stages without evidence of their own were not reached.
func podChain(r *Report, pr *PodReport) htmlPod {
	hp := htmlPod{Name: pr.Namespace + "/" + pr.Name, Node: pr.Node, Phase: pr.Phase, RootCause: pr.RootCause}
	// The root may not name the pod (a quota refusal that explains its stalled rollout).
	ids := pr.Findings
	if pr.RootCause != "" && !slices.Contains(ids, pr.RootCause) {
		ids = append([]string{pr.RootCause}, ids...)
	}
	stopped := false
	for _, cov := range pr.Coverage {
		st := htmlStage{Stage: cov.Stage, Missing: cov.Missing}
		for _, id := range ids {
			f := r.Finding(id)
			if f == nil || f.Stage != cov.Stage {
				continue
			}
			st.Findings = append(st.Findings, f.ID)
			if st.Status == "" {
				st.Status, st.Summary = VerdictBroken, f.Cause
				st.Evidence = htmlEvidenceOf(firstN(f.Evidence, 3))
			}
		}
		if st.Status == "" {
			stageFromTimeline(&st, pr.Timeline, cov)
		}
		if stopped && st.Status != VerdictBroken && st.Status != VerdictNotApplicable && len(st.Evidence) == 0 {
			st.Status, st.Summary = VerdictNotReached, "not reached: an earlier stage has not completed"
		}
		if st.Status == VerdictBroken || st.Status == VerdictPending {
			stopped = true
		}
		hp.Chain = append(hp.Chain, st)
	}
	return hp
}

func stageFromTimeline(st *htmlStage, timeline []Step, cov StageCoverage) {
	var details []string
	failed, pending, ok := 0, 0, 0
	for _, s := range timeline {
		if s.Stage != cov.Stage {
			continue
		}
		switch s.Status {
		case StepFailed:
			failed++
		case StepPending:
			pending++
		default:
			ok++
		}
		details = append(details, stepName(s)+": "+s.Detail)
		st.Evidence = append(st.Evidence, htmlEvidenceOf(firstN(s.Evidence, 2))...)
	}
	st.Summary = strings.Join(details, "; ")
	switch {
	case failed > 0:
		st.Status = VerdictBroken
	case pending > 0:
		st.Status = VerdictPending
	case ok > 0:
		st.Status = VerdictOK
	case cov.Status == CoverageNotApplicable:
		st.Status, st.Summary = VerdictNotApplicable, "does not apply to this pod"
	case cov.Status == CoverageNotReached:
		st.Status, st.Summary = VerdictNotReached, "not reached: the pod is not scheduled"
	case cov.Status == CoverageNone:
		st.Status, st.Summary = VerdictNoEvidence, "no evidence in the bundle"
	default:
		st.Status, st.Summary = VerdictOK, "no sign of trouble in "+strings.Join(cov.Sources, ", ")
	}
}
