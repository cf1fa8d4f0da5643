package analyze

import (
	"slices"
	"sort"
	"time"
)

// SchemaVersion versions the JSON report (docs/report-schema.json). Additive changes
// raise the minor; anything that breaks a reader raises the major.
const SchemaVersion = "1.4"

// Report is the result of an analysis: the stable machine interface behind every
// output format.
type Report struct {
	SchemaVersion    string       `json:"schemaVersion"`
	PodflowVersion   string       `json:"podflowVersion,omitempty"`
	Bundles          []BundleInfo `json:"bundles"`
	CollectedAt      *time.Time   `json:"collectedAt,omitempty"`
	ClockSkewSeconds float64      `json:"clockSkewSeconds,omitempty"`
	Scope            Scope        `json:"scope"`
	Summary          Summary      `json:"summary"`
	// Findings are sorted by stage, severity, rule and subject; root causes and their
	// consequences are linked by ID.
	Findings []*Finding    `json:"findings"`
	Skipped  []SkippedRule `json:"skippedRules"`
	Gaps     []CoverageGap `json:"coverageGaps"`
	Warnings []Warning     `json:"warnings"`
	Pods     []PodReport   `json:"pods"`
	// Violations are rule contract breaches; the golden tests fail on any.
	Violations []Violation `json:"-"`
	// nodeHealth tells the health of a node from the graph the report was made from,
	// for the node stage of each pod's chain (podVerdicts); nil for a report decoded
	// from JSON.
	nodeHealth func(name string) (string, string, []Evidence)
}

// Scope records what the analysis was limited to.
type Scope struct {
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
}

// Summary counts the report's contents.
type Summary struct {
	Pods             int              `json:"pods"`
	PodsWithFindings int              `json:"podsWithFindings"`
	Findings         int              `json:"findings"`
	RootCauses       int              `json:"rootCauses"`
	BySeverity       map[Severity]int `json:"bySeverity"`
	// Highest is the most severe finding's severity, empty without findings.
	Highest Severity `json:"highestSeverity,omitempty"`
	// healthy counts the pods whose evidence positively shows health (running and
	// ready without restarts, or succeeded): only then is "no problems" said.
	healthy int
}

// PodReport is one pod's chain: its root cause, findings, timeline and coverage.
type PodReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// UnnamedIn is set when the evidence does not show the pod's name: the file it
	// was read from (Name is podflow's placeholder), as in ObjectRef.
	UnnamedIn        string `json:"unnamedIn,omitempty"`
	NamespaceUnknown bool   `json:"namespaceUnknown,omitempty"`
	Node             string `json:"node,omitempty"`
	Phase            string `json:"phase,omitempty"`
	// RootCause is the ID of the finding at the earliest broken stage.
	RootCause string          `json:"rootCause,omitempty"`
	Findings  []string        `json:"findings,omitempty"`
	Timeline  []Step          `json:"timeline"`
	Coverage  []StageCoverage `json:"coverage"`
}

// Ref names the pod.
func (pr *PodReport) Ref() ObjectRef {
	return ObjectRef{Kind: "Pod", Namespace: pr.Namespace, Name: pr.Name, UID: pr.UID, UnnamedIn: pr.UnnamedIn, NamespaceUnknown: pr.NamespaceUnknown}
}

// CoverageGap is a stage for which some pods lacked evidence, with the reasons.
type CoverageGap struct {
	Stage Stage `json:"stage"`
	// PodsWithoutEvidence counts pods for which the stage had no evidence at all.
	PodsWithoutEvidence int `json:"podsWithoutEvidence"`
	// PodsWithoutEvidenceNames names them (namespace/name, sorted, at most gapNamesMax).
	PodsWithoutEvidenceNames []string      `json:"podsWithoutEvidenceNames,omitempty"`
	Missing                  []ReasonCount `json:"missing"`
}

// gapNamesMax caps the pod names kept per gap line; the count says how many there are.
const gapNamesMax = 20

// ReasonCount is one reason evidence was missing and how many pods it concerns.
type ReasonCount struct {
	Reason string `json:"reason"`
	Pods   int    `json:"pods"`
	// PodNames names the pods (namespace/name, sorted, at most gapNamesMax).
	PodNames []string `json:"podNames,omitempty"`
}

// buildPods computes coverage for every pod in scope (the report's coverage gaps) and
// the full chain for pods with findings, or for all of them when asked.
func (r *Report) buildPods(g *Graph, roots map[string]*Finding, opts Options) {
	podFindings := map[string][]string{}
	reported := map[*Finding]bool{}
	for _, f := range r.Findings {
		reported[f] = true
		for _, s := range f.Subjects {
			if s.Kind == "Pod" {
				podFindings[s.nsName()] = append(podFindings[s.nsName()], f.ID)
			}
		}
	}
	type gapAcc struct {
		none    []string
		reasons map[string][]string
	}
	gaps := map[Stage]*gapAcc{}
	r.Pods = []PodReport{}
	for _, p := range g.pods {
		key := p.meta.Namespace + "/" + p.meta.Name
		if (opts.Namespace != "" && p.meta.Namespace != opts.Namespace) || (opts.Pod != "" && key != opts.Pod) {
			continue
		}
		r.Summary.Pods++
		if positivelyHealthy(p) {
			r.Summary.healthy++
		}
		f := g.factsFor(p)
		cov := g.coverage(f)
		ref := p.Ref()
		shown := ref.NamespacedName()
		for _, c := range cov {
			if len(c.Missing) == 0 && c.Status != CoverageNone {
				continue
			}
			acc := gaps[c.Stage]
			if acc == nil {
				acc = &gapAcc{reasons: map[string][]string{}}
				gaps[c.Stage] = acc
			}
			if c.Status == CoverageNone {
				acc.none = append(acc.none, shown)
			}
			for _, m := range c.Missing {
				acc.reasons[m] = append(acc.reasons[m], shown)
			}
		}
		ids := podFindings[key]
		if len(ids) == 0 && !opts.Timelines && opts.Pod == "" {
			continue
		}
		pr := PodReport{Namespace: p.meta.Namespace, Name: p.meta.Name, UID: string(p.meta.UID), UnnamedIn: ref.UnnamedIn, NamespaceUnknown: ref.NamespaceUnknown,
			Node: p.Obj.Spec.NodeName, Phase: string(p.Obj.Status.Phase), Findings: ids,
			Timeline: g.timeline(f), Coverage: cov}
		// The root may not name the pod: an admission finding that explains the stalled
		// rollout a pod belongs to.
		if root := roots[key]; root != nil && reported[root] {
			pr.RootCause = root.ID
		}
		r.Pods = append(r.Pods, pr)
	}
	r.Summary.PodsWithFindings = len(podFindings)
	r.Gaps = []CoverageGap{}
	for _, st := range Stages {
		acc := gaps[st]
		if acc == nil {
			continue
		}
		gap := CoverageGap{Stage: st, PodsWithoutEvidence: len(acc.none), PodsWithoutEvidenceNames: someNames(acc.none), Missing: []ReasonCount{}}
		for reason, pods := range acc.reasons {
			gap.Missing = append(gap.Missing, ReasonCount{Reason: reason, Pods: len(pods), PodNames: someNames(pods)})
		}
		sort.Slice(gap.Missing, func(i, j int) bool {
			a, b := gap.Missing[i], gap.Missing[j]
			if a.Pods != b.Pods {
				return a.Pods > b.Pods
			}
			return a.Reason < b.Reason
		})
		r.Gaps = append(r.Gaps, gap)
	}
}

// someNames sorts pod names and keeps the first gapNamesMax.
func someNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := slices.Compact(slices.Sorted(slices.Values(names)))
	return out[:min(len(out), gapNamesMax)]
}

func (r *Report) summarize() {
	r.Summary.BySeverity = map[Severity]int{}
	for _, f := range r.Findings {
		r.Summary.Findings++
		if f.Root {
			r.Summary.RootCauses++
		}
		r.Summary.BySeverity[f.Severity]++
		if f.Severity.Rank() > r.Summary.Highest.Rank() {
			r.Summary.Highest = f.Severity
		}
	}
}

// AtOrAbove counts findings whose severity is at least s: the --fail-on test.
func (r *Report) AtOrAbove(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity.Rank() >= s.Rank() {
			n++
		}
	}
	return n
}

// Finding returns the finding with an ID, or nil.
func (r *Report) Finding(id string) *Finding {
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	return nil
}
