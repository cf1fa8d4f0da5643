package analyze

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/untrusted"
)

// Explanation is one pod's chain, stage by stage: what the evidence says at each.
type Explanation struct {
	SchemaVersion string `json:"schemaVersion"`
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	// UnnamedIn is set when the evidence does not show the pod's name, as in ObjectRef.
	UnnamedIn        string     `json:"unnamedIn,omitempty"`
	NamespaceUnknown bool       `json:"namespaceUnknown,omitempty"`
	Node             string     `json:"node,omitempty"`
	Phase            string     `json:"phase,omitempty"`
	RootCause        *Finding   `json:"rootCause,omitempty"`
	Stages           []Verdict  `json:"stages"`
	Findings         []*Finding `json:"findings"`
	Warnings         []Warning  `json:"warnings"`
	// report is the pod's report the explanation was made from, for the HTML format.
	report *Report
}

// Verdict is what the evidence says about one stage of one pod.
type Verdict struct {
	Stage Stage `json:"stage"`
	// Status is ok, broken, pending, no-evidence, not-reached or not-applicable.
	Status   string     `json:"status"`
	Summary  string     `json:"summary"`
	Findings []string   `json:"findings,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	Missing  []string   `json:"missing,omitempty"`
}

// Verdict statuses.
const (
	VerdictOK            = "ok"
	VerdictBroken        = "broken"
	VerdictPending       = "pending"
	VerdictNoEvidence    = "no-evidence"
	VerdictNotReached    = "not-reached"
	VerdictNotApplicable = "not-applicable"
)

// PodNotFoundError is returned by Explain for a pod the bundles do not hold.
type PodNotFoundError struct{ Pod string }

func (e *PodNotFoundError) Error() string {
	return fmt.Sprintf("pod %s is not in the bundle (check the namespace and name, or the collection scope)", e.Pod)
}

// Explain runs the rules and walks one pod's chain stage by stage.
func Explain(g *Graph, rules []*Rule, namespace, name string, opts Options) (*Explanation, error) {
	return ExplainContext(context.Background(), g, rules, namespace, name, opts)
}

// ExplainContext is Explain that stops, with ctx's error, once ctx is done.
func ExplainContext(ctx context.Context, g *Graph, rules []*Rule, namespace, name string, opts Options) (*Explanation, error) {
	p := g.FindPod(namespace, name)
	if p == nil {
		return nil, &PodNotFoundError{Pod: namespace + "/" + name}
	}
	opts.Pod, opts.Namespace, opts.Timelines = namespace+"/"+name, "", true
	r, err := RunContext(ctx, g, rules, opts)
	if err != nil {
		return nil, err
	}
	x := &Explanation{SchemaVersion: SchemaVersion, Namespace: namespace, Name: name, UnnamedIn: p.Ref().UnnamedIn, NamespaceUnknown: p.Ref().NamespaceUnknown, Node: p.Obj.Spec.NodeName,
		Phase: string(p.Obj.Status.Phase), Findings: r.Findings, Warnings: r.Warnings}
	var pr *PodReport
	for i := range r.Pods {
		pr = &r.Pods[i]
	}
	if pr == nil {
		return nil, &PodNotFoundError{Pod: namespace + "/" + name}
	}
	if pr.RootCause != "" {
		x.RootCause = r.Finding(pr.RootCause)
	}
	x.Stages = podVerdicts(r, pr)
	x.report = r
	return x, nil
}

// Ref names the explained pod.
func (x *Explanation) Ref() ObjectRef {
	return ObjectRef{Kind: "Pod", Namespace: x.Namespace, Name: x.Name, UnnamedIn: x.UnnamedIn, NamespaceUnknown: x.NamespaceUnknown}
}

// podVerdicts walks one pod's chain from its report, stage by stage: a finding at the
// stage makes it broken (the pod's root cause first: it may not name the pod, as a quota
// refusal that explains its stalled rollout); otherwise the timeline's steps there
// decide; otherwise the coverage says whether there was evidence. After a broken or
// pending stage, stages without evidence of their own were not reached. The node
// stage reads the health of the pod's node from the graph the report was made from.
// explain and the HTML reports of analyze and explain all take a pod's chain from here,
// so they cannot disagree.
func podVerdicts(r *Report, pr *PodReport) []Verdict {
	var node func() (string, string, []Evidence)
	if r.nodeHealth != nil && pr.Node != "" {
		node = func() (string, string, []Evidence) { return r.nodeHealth(pr.Node) }
	}
	ids := pr.Findings
	if pr.RootCause != "" && !slices.Contains(ids, pr.RootCause) {
		ids = append([]string{pr.RootCause}, ids...)
	}
	var out []Verdict
	stopped := false
	var broken Stage
	for _, cov := range pr.Coverage {
		v := stageVerdict(r, pr, ids, cov, node)
		if stopped && v.Status != VerdictBroken && v.Status != VerdictNotApplicable && len(v.Evidence) == 0 {
			v = Verdict{Stage: cov.Stage, Status: VerdictNotReached, Summary: "not reached: an earlier stage has not completed"}
		}
		// Waiting behind a broken stage is no trouble of the stage's own (a pod whose
		// image cannot be pulled is not Ready): it was not reached.
		if broken != "" && v.Status == VerdictPending {
			v.Status, v.Summary = VerdictNotReached, "not reached: it waits on the "+string(broken)+" stage ("+v.Summary+")"
		}
		if v.Status == VerdictBroken && broken == "" {
			broken = v.Stage
		}
		if v.Status == VerdictBroken || v.Status == VerdictPending {
			stopped = true
		}
		out = append(out, v)
	}
	// A stage waiting for evidence of its end before a later stage the pod reached (a
	// finding there, or evidence that it ran) had no trouble: the pod went past it. It
	// is ok, not pending.
	reached := -1
	for i, v := range out {
		if v.Status == VerdictBroken || (v.Status == VerdictOK && len(v.Evidence) > 0) {
			reached = i
		}
	}
	for i := 0; i < reached; i++ {
		if out[i].Status == VerdictPending {
			out[i].Status = VerdictOK
			out[i].Summary = "no trouble: the pod went on to the " + string(out[reached].Stage) + " stage (" + out[i].Summary + ")"
		}
	}
	return out
}

func stageVerdict(r *Report, pr *PodReport, ids []string, cov StageCoverage, node func() (string, string, []Evidence)) Verdict {
	v := Verdict{Stage: cov.Stage, Missing: cov.Missing}
	for _, id := range ids {
		f := r.Finding(id)
		if f == nil || f.Stage != cov.Stage {
			continue
		}
		v.Findings = append(v.Findings, f.ID)
		if v.Status == "" {
			v.Status, v.Summary = VerdictBroken, f.Cause
			v.Evidence = append(v.Evidence, firstN(f.Evidence, 3)...)
		}
	}
	if v.Status != "" {
		return v
	}
	var details []string
	failed, pending, ok := 0, 0, 0
	for _, s := range pr.Timeline {
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
		v.Evidence = append(v.Evidence, firstN(s.Evidence, 2)...)
	}
	if cov.Stage == StageNode && node != nil {
		if st, detail, ev := node(); st != "" {
			details = append(details, detail)
			v.Evidence = append(v.Evidence, ev...)
			if st == VerdictBroken {
				failed++
			} else {
				ok++
			}
		}
	}
	v.Summary = strings.Join(details, "; ")
	switch {
	case failed > 0:
		v.Status = VerdictBroken
	case pending > 0:
		v.Status = VerdictPending
	case ok > 0:
		v.Status = VerdictOK
	case cov.Status == CoverageNotApplicable:
		v.Status, v.Summary = VerdictNotApplicable, "does not apply to this pod"
	case cov.Status == CoverageNotReached:
		v.Status, v.Summary = VerdictNotReached, "not reached: the pod is not scheduled"
	case cov.Status == CoverageNone:
		v.Status, v.Summary = VerdictNoEvidence, "no evidence in the bundle"
	default:
		v.Status, v.Summary = VerdictOK, "no sign of trouble in "+strings.Join(cov.Sources, ", ")
	}
	return v
}

// nodeHealthOf is the graph's nodeHealth holding only its nodes: the report keeps it,
// and the report outlives the rest of the graph while it is rendered.
func nodeHealthOf(g *Graph) func(name string) (string, string, []Evidence) {
	nodes := make(map[string]*Node, len(g.nodes))
	for _, n := range g.nodes {
		nodes[n.meta.Name] = n
	}
	return func(name string) (string, string, []Evidence) { return nodeHealth(nodes[name], name) }
}

// nodeHealth reads the Ready condition of n, the node of that name or nil.
func nodeHealth(n *Node, name string) (string, string, []Evidence) {
	if n == nil {
		return "", "", nil
	}
	for i, c := range n.Obj.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		ev := []Evidence{n.Loc.At("status", "conditions", i).Evidence(fmt.Sprintf("Ready=%s %s %s", c.Status, c.Reason, c.Message), c.LastTransitionTime.Time)}
		if c.Status == corev1.ConditionTrue {
			return VerdictOK, "node " + name + " is Ready", ev
		}
		return VerdictBroken, fmt.Sprintf("node %s is not Ready (%s: %s)", name, c.Reason, c.Message), ev
	}
	return "", "", nil
}

func firstN(ev []Evidence, n int) []Evidence {
	if len(ev) > n {
		return ev[:n]
	}
	return ev
}

// RenderExplanation writes an explanation as text, or as JSON, YAML or HTML. Text is
// fitted to opts.Width when it is set (a terminal, --width, COLUMNS), as analyze's
// table is.
func RenderExplanation(w io.Writer, x *Explanation, format string, opts RenderOptions) error {
	switch format {
	case FormatHTML:
		return renderExplanationHTML(w, x, opts)
	case FormatJSON:
		return writeJSON(w, x)
	case FormatYAML:
		return writeYAML(w, x)
	}
	// Names, causes and locations come from evidence: each is printed escaped.
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	t := func(s string) string { return untrusted.Text(displayText(s)) }
	width := opts.Width
	if width <= 0 {
		width = 1 << 20 // unfitted: every text on one line
	}
	// para writes text wrapped to the width, its first line after lead and the others
	// indented as far.
	para := func(lead, text string) {
		indent := strings.Repeat(" ", runewidth.StringWidth(lead))
		for i, l := range wrap(text, width-len(indent)) {
			if i == 0 {
				p("%s%s\n", lead, l)
			} else {
				p("%s%s\n", indent, l)
			}
		}
	}
	para("", fmt.Sprintf("Pod %s (node %s, phase %s)", t(x.Ref().NamespacedName()), t(orDash(x.Node)), t(orDash(x.Phase))))
	if x.RootCause != nil {
		para("Root cause: ", fmt.Sprintf("[%s] %s (%s)", x.RootCause.Stage, t(x.RootCause.Cause), x.RootCause.ID))
		if x.RootCause.Remediation != "" {
			para("Fix: ", t(x.RootCause.Remediation))
		}
		planText(x.RootCause.Plan, para)
	} else {
		p("Root cause: none found by the rules\n")
	}
	p("\n")
	const stageW, statusW = 12, 14
	lead := strings.Repeat(" ", stageW+1+statusW+1)
	stacked := width-len(lead) < minCauseWidth
	for _, v := range x.Stages {
		status := fmt.Sprintf("%-*s", statusW, v.Status)
		if opts.Color {
			status = colorStatus(v.Status, status)
		}
		first := fmt.Sprintf("%-*s %s ", stageW, v.Stage, status)
		if stacked {
			p("%s\n", strings.TrimRight(first, " "))
			para("  ", t(v.Summary))
		} else {
			indent := lead
			for i, l := range wrap(t(v.Summary), width-len(lead)) {
				if i == 0 {
					p("%s%s\n", first, l)
				} else {
					p("%s%s\n", indent, l)
				}
			}
		}
		sub := lead + "  "
		if stacked {
			sub = "    "
		}
		for _, e := range v.Evidence {
			p("%s%s\n", sub, abbreviatePath(untrusted.Text(e.Location.String()), width-len(sub)))
		}
		for _, m := range v.Missing {
			para(sub+"missing: ", t(m))
		}
	}
	for _, warn := range x.Warnings {
		p("\n")
		para("Warning: ", t(warn.String()))
	}
	return nil
}

// ANSI colours of the terminal formats.
const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiGreen  = "\x1b[32m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// colorStatus colours a verdict's (padded) status for a terminal.
func colorStatus(status, text string) string {
	switch status {
	case VerdictBroken:
		return ansiBold + ansiRed + text + ansiReset
	case VerdictPending:
		return ansiYellow + text + ansiReset
	case VerdictOK:
		return ansiGreen + text + ansiReset
	case VerdictNotApplicable, VerdictNotReached:
		return ansiDim + text + ansiReset
	}
	return text
}

// colorSeverity colours a (padded) severity for a terminal.
func colorSeverity(sev Severity, text string) string {
	switch sev {
	case SeverityCritical, SeverityError:
		return ansiBold + ansiRed + text + ansiReset
	case SeverityWarning:
		return ansiYellow + text + ansiReset
	}
	return text
}
