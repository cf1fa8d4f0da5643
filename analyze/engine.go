package analyze

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options choose what Run analyzes and what the report includes.
type Options struct {
	// Namespace limits the report to findings and pods of one namespace (rules still see
	// what the graph holds of other namespaces: a pod's cause can live elsewhere, e.g. on
	// its node; a graph loaded for the scope holds less of them, LoadOptions.Namespace).
	Namespace string
	// Pod limits the report to one pod, "namespace/name", and the findings linked to it.
	Pod string
	// Timelines includes every pod's timeline, not only those of pods with findings.
	Timelines bool
	// PodflowVersion is recorded in the report.
	PodflowVersion string
	// Unexplained adds an "unexplained" finding for every subject whose evidence shows
	// trouble that no rule or signature explains, so a broken pod is never reported as
	// healthy.
	Unexplained bool
	// RuleDone, when set, is called after each rule ran or was skipped (for progress).
	RuleDone func(rule string)
	// LastRun says the caller runs no other analysis of the graph, now or later: the
	// lines of evidence text and the indexes over them, which the rules read and the
	// pods' reports do not, are let go of before those are built (Graph.letLinesGo).
	LastRun bool
	// Alone says the process runs no other analysis, now or later: what is built for
	// any analysis to reuse, the automaton of the signatures' literals, is not kept.
	Alone bool
	// podOwners are the controllers of the Pod in scope (withOwners).
	podOwners []ObjectRef
}

// SkippedRule is a rule that did not run, and why.
type SkippedRule struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// Missing lists the kinds of evidence the rule needed and did not find, so a
	// report can say what to paste or collect for it.
	Missing []Kind `json:"missing,omitempty"`
}

// Violation is a rule breaking its contract: reading an undeclared kind, returning a
// finding without evidence, or panicking. Tests fail on any.
type Violation struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Run runs rules over the graph and builds the report: findings grouped by cause,
// sorted, linked from root causes to consequences, filtered to the requested scope.
func Run(g *Graph, rules []*Rule, opts Options) *Report {
	r, _ := RunContext(context.Background(), g, rules, opts) // never cancelled
	return r
}

// RunContext is Run that stops between rules, with ctx's error, once ctx is done.
func RunContext(ctx context.Context, g *Graph, rules []*Rule, opts Options) (*Report, error) {
	r := &Report{SchemaVersion: SchemaVersion, PodflowVersion: opts.PodflowVersion,
		Bundles: g.bundles, Warnings: g.warnings, Scope: Scope{Namespace: opts.Namespace, Pod: opts.Pod}}
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	r.CollectedAt = timePtr(g.collectedAt)
	r.ClockSkewSeconds = g.clockSkew.Seconds()
	var all []*Finding
	var sigs []*Signature
	for _, rule := range rules {
		if rule.signature != nil && missingInputs(g, rule) == "" {
			sigs = append(sigs, rule.signature)
		}
	}
	g.indexSignatures(sigs, !opts.Alone)
	catchall := map[string]bool{}
	for _, rule := range rules {
		if rule.Catchall {
			catchall[rule.ID] = true
		}
	}
	for _, rule := range rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if reason := missingInputs(g, rule); reason != "" {
			r.Skipped = append(r.Skipped, SkippedRule{Rule: rule.ID, Reason: reason, Missing: missingKinds(g, rule)})
		} else {
			found, violations := runRule(g, rule)
			for _, f := range found {
				f.backsCatchall = f.ruleBacked && catchall[f.Rule]
			}
			r.Violations = append(r.Violations, violations...)
			all = append(all, found...)
		}
		if opts.RuleDone != nil {
			opts.RuleDone(rule.ID)
		}
	}
	if r.Skipped == nil {
		r.Skipped = []SkippedRule{}
	}
	settle := func() map[string]*Finding {
		for _, f := range all {
			f.ID, f.Root, f.Explains, f.ExplainedBy = "", false, nil, nil
		}
		all = resolveSignatures(all)
		sortFindings(all)
		assignIDs(all)
		markHistory(g, all)
		return link(all)
	}
	roots := settle()
	if opts.Unexplained {
		if adoptLonePod(g, all, roots) {
			roots = settle()
		}
		extra := unexplained(g, all, roots)
		if len(extra) > 0 {
			// Trouble is left to the floor: a signature may still know it in another
			// release's wording, through the catalog's call sites. Deriving the ties
			// reads the catalog, so it is done only when the floor would speak.
			tied, violations := tiedFindings(g, rules, sigs)
			r.Violations = append(r.Violations, violations...)
			if len(tied) > 0 {
				all = append(all, tied...)
				roots = settle()
				extra = unexplained(g, all, roots)
			}
		}
		if c, at := crashedFromLog(g, all, extra, rules); c != nil {
			// The crash's finding replaces the floor's about its log line, and the
			// floor's about the reporter's sentences, read as a log beside it (and,
			// beside a program's fatal exit, about the ticket's own text: a table of
			// versions where one "fails").
			fatal := fatalFloor(extra) == at
			extra[at] = c
			said := c.Evidence[len(c.Evidence)-1].placeKey()
			extra = slices.DeleteFunc(extra, func(f *Finding) bool {
				return f != c && (reportersOnly(f, said) || fatal && ticketTextOnly(f))
			})
		}
		if d, files := described(g, append(slices.Clone(all), extra...), rules); d != nil {
			// The prose's reading replaces the floor's findings about the same text.
			extra = slices.DeleteFunc(extra, func(f *Finding) bool { return restsOnly(f, files) })
			extra = append(extra, d)
		}
		initFromProse(g, all, extra, rules)
		if len(extra) > 0 {
			for _, f := range extra {
				f.Subjects = normalizeSubjects(f.Subjects)
				f.Evidence, f.EvidenceOmitted = normalizeEvidence(f.Evidence, f.EvidenceOmitted)
				for j := range f.Evidence {
					f.Evidence[j].Locator = f.Evidence[j].Location.Locator()
				}
			}
			all = append(all, extra...)
			for _, f := range all {
				f.ID, f.Root, f.Explains, f.ExplainedBy = "", false, nil, nil
			}
			sortFindings(all)
			assignIDs(all)
			roots = link(all)
		}
	}
	nameSubjects(all)
	nameElsewhere(g, all)
	nameNode(g, all)
	nameSetting(g, all)
	showUnnamed(g, all)
	addPlans(g, all)
	showUnnamedPlans(g, all)
	r.Findings = scopeFindings(all, withOwners(g, opts))
	r.nodeHealth = nodeHealthOf(g)
	if opts.LastRun {
		g.letLinesGo()
	}
	r.buildPods(g, roots, opts)
	r.summarize()
	return r, nil
}

// missingKinds is the kinds of evidence missingInputs complains of: each required kind
// not present, then the alternatives of an AnyOf none of which is.
func missingKinds(g *Graph, rule *Rule) []Kind {
	var out []Kind
	for _, k := range rule.Needs.Required {
		if !g.present[k] {
			out = append(out, k)
		}
	}
	if any := rule.Needs.AnyOf; len(any) > 0 && !slices.ContainsFunc(any, func(k Kind) bool { return g.present[k] }) {
		out = append(out, any...)
	}
	return out
}

func missingInputs(g *Graph, rule *Rule) string {
	var reasons []string
	for _, k := range rule.Needs.Required {
		if g.present[k] {
			continue
		}
		if files := g.failed[k]; len(files) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s: collection failed (see %s)", k.Description(), strings.Join(files, ", ")))
			continue
		}
		reasons = append(reasons, fmt.Sprintf("%s: not in bundle (%s)", k.Description(), k.Where()))
	}
	if any := rule.Needs.AnyOf; len(any) > 0 && !slices.ContainsFunc(any, func(k Kind) bool { return g.present[k] }) {
		var alts []string
		for _, k := range any {
			alts = append(alts, fmt.Sprintf("%s (%s)", k.Description(), k.Where()))
		}
		reasons = append(reasons, "one of "+strings.Join(alts, " or ")+": none in bundle")
	}
	if len(reasons) == 0 {
		return ""
	}
	return "needs " + strings.Join(reasons, "; ")
}

// runRule runs one rule, turning a panic into a violation so one broken rule cannot
// take the analysis down, and groups the rule's findings by cause.
func runRule(g *Graph, rule *Rule) (found []*Finding, violations []Violation) {
	v := newView(g, rule)
	var raw []Finding
	func() {
		defer func() {
			if p := recover(); p != nil {
				violations = append(violations, Violation{Rule: rule.ID, Message: fmt.Sprintf("panic: %v", p)})
				raw = nil
			}
		}()
		raw = rule.Run(v)
	}()
	for _, k := range v.violations {
		violations = append(violations, Violation{Rule: rule.ID,
			Message: fmt.Sprintf("read %s without declaring it in Needs", k)})
	}
	groups := map[string]*Finding{}
	for i := range raw {
		f := &raw[i]
		if len(f.Evidence) == 0 {
			violations = append(violations, Violation{Rule: rule.ID, Message: fmt.Sprintf("finding without evidence: %s", f.Cause)})
		}
		if f.Cause == "" || f.Remediation == "" {
			violations = append(violations, Violation{Rule: rule.ID, Message: fmt.Sprintf("finding without a cause or a remediation: %q", f.Cause)})
		}
		f.Rule, f.Stage, f.Severity, f.Title, f.outcome = rule.ID, rule.Stage, rule.Severity, rule.Title, rule.Outcome
		f.signature, f.catchall = rule.signature != nil, rule.Catchall
		if f.signature && rule.signature.ForRule != "" {
			f.Rule, f.ruleBacked = rule.signature.ForRule, true
		}
		if f.Stage == StageRequest && len(f.Evidence) > 0 && reControllerCreatingPod.MatchString(f.Evidence[0].Excerpt) {
			// The request a controller makes for a pod of its workload: the user's own
			// request was accepted, and the chain breaks where the controller acts.
			f.Stage = StageController
		}
		if f.Stage == StageRequest && f.ownRefusal {
			// The API server refuses the requests of a program that then dies of it: its
			// pod was made and runs, and the chain breaks where the program does.
			f.Stage = StageRuntime
		}
		f.fallback = f.signature && rule.signature.Fallback
		f.NodeCondition = f.NodeCondition || f.signature && rule.signature.NodeCondition
		f.sig = rule.signature
		if f.catchall {
			for _, s := range f.Subjects {
				if s.Kind == "Pod" {
					f.catchallPods++
				}
			}
		}
		f.ID, f.Root, f.Explains, f.ExplainedBy = "", false, nil, nil
		if f.GroupKey != "" {
			if into, ok := groups[f.GroupKey]; ok {
				into.Subjects = append(into.Subjects, f.Subjects...)
				into.Evidence = append(into.Evidence, f.Evidence...)
				into.EvidenceOmitted += f.EvidenceOmitted
				continue
			}
			groups[f.GroupKey] = f
		}
		found = append(found, f)
	}
	if len(found) < len(raw) {
		// The findings grouped into others are garbage, but the list they were made in
		// holds them, their causes, remediations and evidence, for as long as the kept
		// ones point into it: at 80k pods the signatures' grouped findings were about
		// 30 MB through the rest of the analysis. The kept ones move to a list of their own.
		kept := make([]Finding, len(found))
		for i, f := range found {
			kept[i] = *f
			found[i] = &kept[i]
		}
	}
	for _, f := range found {
		f.Subjects = normalizeSubjects(f.Subjects)
		f.Evidence, f.EvidenceOmitted = normalizeEvidence(f.Evidence, f.EvidenceOmitted)
		// Only the evidence kept is read: a group of thousands of findings leaves most of
		// its evidence out.
		for j := range f.Evidence {
			f.Evidence[j].Locator = f.Evidence[j].Location.Locator()
		}
	}
	return found, violations
}

// normalizeSubjects removes duplicates and orders pods by namespace/name, then the
// other subjects by kind and name.
func normalizeSubjects(in []ObjectRef) []ObjectRef {
	seen := map[string]bool{}
	out := make([]ObjectRef, 0, len(in))
	for _, s := range in {
		if s.Name == "" || seen[s.key()] {
			continue
		}
		seen[s.key()] = true
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Kind == "Pod") != (b.Kind == "Pod") {
			return a.Kind == "Pod"
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

func normalizeEvidence(in []Evidence, omitted int) ([]Evidence, int) {
	seen := map[string]bool{}
	// At most evidenceMax are kept: a group of thousands of findings must not leave room
	// for all of their evidence in each finding the report holds.
	out := make([]Evidence, 0, min(len(in), evidenceMax))
	for _, e := range in {
		k := e.Location.inBundle().String() + "\x00" + e.Excerpt
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(out) == evidenceMax {
			omitted++
			continue
		}
		out = append(out, e)
	}
	return out, omitted
}

// sortFindings orders findings by stage, then severity (most severe first), rule, first
// subject and cause, so reports are identical from run to run.
func sortFindings(fs []*Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return findingLess(fs[i], fs[j]) })
}

func findingLess(a, b *Finding) bool {
	if a.Stage.Order() != b.Stage.Order() {
		return a.Stage.Order() < b.Stage.Order()
	}
	if a.Severity.Rank() != b.Severity.Rank() {
		return a.Severity.Rank() > b.Severity.Rank()
	}
	// At one stage a rule's or a signature's reading comes before the floor's echo of
	// the same trouble (the catalog's outer message, an unexplained line), so a pod's
	// root is the explanation with the decisive words.
	if fa, fb := isFloor(a.Rule), isFloor(b.Rule); fa != fb {
		return fb
	}
	if a.Rule != b.Rule {
		return a.Rule < b.Rule
	}
	// Of two lines no rule knows, a program's own output comes before a reporter's
	// sentence: it is what the sentence describes.
	if pa, pb := quotesProse(a), quotesProse(b); pa != pb {
		return pb
	}
	// Of two readings of the same failure, the one about a pod (an event row's, even
	// unnamed) comes before one about a container the evidence does not place.
	if pa, pb := hasPods(a.Subjects), hasPods(b.Subjects); pa != pb {
		return pa
	}
	as, bs := firstSubject(a), firstSubject(b)
	if as != bs {
		return as < bs
	}
	return a.Cause < b.Cause
}

// quotesProse reports whether an unexplained finding rests first on a sentence.
func quotesProse(f *Finding) bool {
	return f.Rule == UnexplainedRule && len(f.Evidence) > 0 && isProse(f.Evidence[0].Excerpt)
}

// tiedFindings are the findings of the signatures that fire on lines no pattern matched,
// through the catalog's call sites (signature_tie.go).
func tiedFindings(g *Graph, rules []*Rule, sigs []*Signature) (found []*Finding, violations []Violation) {
	g.tieSignatures(sigs)
	for _, rule := range rules {
		s := rule.signature
		if s == nil || len(g.tiedLines(s)) == 0 || missingInputs(g, rule) != "" {
			continue
		}
		tr := *rule
		tr.Run = s.runTies
		f, v := runRule(g, &tr)
		found = append(found, f...)
		violations = append(violations, v...)
	}
	// A Go rule's messages in wordings neither its classifier nor a signature knows,
	// through the call sites of its examples (rule_tie.go): the rule's reading of the
	// message alone, which, like a companion signature's, yields to the rule's own
	// finding where the rule fires.
	g.tieRules(rules, sigs)
	for _, rule := range rules {
		if rule.signature != nil {
			continue
		}
		tied := g.ruleTiedLines(rule)
		if len(tied) == 0 {
			continue
		}
		tr := Rule{ID: rule.ID, Stage: rule.Stage, Title: rule.Title, Doc: rule.Doc, Severity: rule.Severity,
			Needs: Needs{Optional: []Kind{Pods, Events, Nodes, KubeletJournal, RuntimeJournal, ContainerLogs, Fragments}},
			Run: func(v *View) []Finding {
				lines := v.g.Lines()
				out := make([]Finding, 0, len(tied))
				for _, t := range tied {
					out = append(out, ruleTieFinding(rule, &lines[t.line], t.ruleHit))
				}
				return out
			}}
		f, v := runRule(g, &tr)
		for _, x := range f {
			x.signature, x.ruleBacked = true, true
		}
		found = append(found, f...)
		violations = append(violations, v...)
	}
	return found, violations
}

// restsOnly reports whether every piece of a finding's evidence is in one of files
// (bundle and path, joined by a NUL).
func restsOnly(f *Finding, files map[string]bool) bool {
	for _, e := range f.Evidence {
		if !files[e.Bundle+"\x00"+e.inBundle().Path] {
			return false
		}
	}
	return len(f.Evidence) > 0
}

// explainsOnSubject says whether cause, sharing a non-pod subject with effect, explains
// it: an earlier stage explains a later one, and a workload's outcome (a rollout past its
// deadline) explains nothing. An outcome that names no pod (read from a deploy tool's
// output) is explained by any trouble beside it that is not itself an outcome, whatever
// its stage: the pods it waited for failed there.
func explainsOnSubject(cause, effect *Finding) bool {
	switch {
	case cause.outcome:
		return false
	case effect.outcome && len(effect.Pods()) == 0:
		return true
	}
	return cause.Stage.Order() < effect.Stage.Order()
}

// reControllerCreatingPod is a controller's report that the API server refused a pod it
// created for its workload: the StatefulSet controller's FailedCreate message
// (pkg/controller/statefulset/stateful_pod_control.go, "create Pod %s in StatefulSet %s
// failed error: %s").
var reControllerCreatingPod = regexp.MustCompile(`\bcreate Pod \S+ in StatefulSet \S+ failed error: `)

// isFloor reports whether a rule ID is one of the floor's: findings about trouble no
// rule or signature explains.
func isFloor(rule string) bool { return rule == CatalogRule || rule == UnexplainedRule }

func firstSubject(f *Finding) string {
	if len(f.Subjects) == 0 {
		return ""
	}
	return f.Subjects[0].key()
}

func assignIDs(fs []*Finding) {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Rule]++
		f.ID = fmt.Sprintf("%s#%d", f.Rule, n[f.Rule])
	}
}

// link marks, for each pod, the finding at the earliest stage as its root cause and the
// pod's findings at later stages, and its workload's outcome findings, as consequences. A finding without pods (about a
// workload, say) is explained by an earlier-stage finding that shares one of its
// subjects. It returns each pod's root finding by namespace/name.
func link(fs []*Finding) map[string]*Finding {
	byPod := map[string][]*Finding{}
	bySubject := map[string][]*Finding{}
	for _, f := range fs {
		for _, s := range f.Subjects {
			if s.Kind == "Pod" {
				byPod[s.nsName()] = append(byPod[s.nsName()], f)
			} else {
				bySubject[s.key()] = append(bySubject[s.key()], f)
			}
		}
	}
	links := map[[2]*Finding]bool{}
	addLink := func(cause, effect *Finding) {
		k := [2]*Finding{cause, effect}
		if links[k] {
			return
		}
		links[k] = true
		cause.Explains = append(cause.Explains, effect.ID)
		effect.ExplainedBy = append(effect.ExplainedBy, cause.ID)
	}
	roots := map[string]*Finding{}
	for pod, list := range byPod {
		// fs is sorted by stage first, so the first finding of a pod is its root, unless
		// it only reports an outcome and the pod has a finding of its own.
		// A failure the pod later got past is history: the root is the earliest stage
		// still broken.
		var current []*Finding
		for _, f := range list {
			if !f.History {
				current = append(current, f)
			}
		}
		if len(current) == 0 {
			continue
		}
		root := current[0]
		for _, f := range current {
			if !f.outcome {
				root = f
				break
			}
		}
		// A refusal for a node condition (the disk-pressure taint) is the consequence of
		// the node's own trouble (its image garbage collection cannot free the disk).
		var yielded *Finding
		if root.NodeCondition {
			for _, f := range current {
				if f.Stage == StageNode && !f.outcome {
					yielded, root = root, f
					break
				}
			}
		}
		if root.Stage == StageRequest {
			// A refused update of a pod whose deletion it holds (the finalizer cannot
			// be taken off): the held deletion is the pod's trouble.
			for _, f := range current {
				if f.HeldDeletion {
					yielded, root = root, f
					break
				}
			}
		}
		roots[pod] = root
		root.Root = true
		for _, f := range current {
			switch {
			case f == root:
			case f == yielded, f.outcome && !root.outcome, f.Stage.Order() > root.Stage.Order():
				addLink(root, f)
			default:
				f.Root = true
			}
		}
	}
	// A refusal for a node condition without pods (a scheduler message pasted alone) is,
	// like a pod's, the consequence of the node's own trouble that shares its subject.
	yields := map[*Finding]bool{}
	for _, c := range fs {
		if !c.NodeCondition || len(c.Pods()) > 0 {
			continue
		}
		for _, s := range c.Subjects {
			for _, n := range bySubject[s.key()] {
				if n != c && n.Stage == StageNode && !n.outcome && !isFloor(n.Rule) {
					addLink(n, c)
					yields[c] = true
				}
			}
		}
	}
	for _, f := range fs {
		if len(f.Pods()) > 0 && !f.outcome {
			continue
		}
		var earlier *Finding
		for _, s := range f.Subjects {
			if s.Kind == "Pod" {
				continue
			}
			for _, cause := range bySubject[s.key()] {
				// The floor reports what no rule explains: it is no cause of what one does.
				if isFloor(cause.Rule) && !isFloor(f.Rule) {
					continue
				}
				if yields[cause] && f.Stage == StageNode {
					continue
				}
				if cause != f && explainsOnSubject(cause, f) {
					addLink(cause, f)
					if earlier == nil || findingLess(cause, earlier) {
						earlier = cause
					}
				}
			}
		}
		if len(f.Pods()) == 0 && f.outcome && isFloor(f.Rule) && len(f.ExplainedBy) == 0 {
			// A client's wait that gave up (the floor's outcome) shares no subject with
			// what it waited for: any other trouble of the evidence explains it.
			for _, g := range fs {
				if g != f && !g.outcome && !g.History {
					addLink(g, f)
					break
				}
			}
		}
		if len(f.Pods()) == 0 {
			f.Root = len(f.ExplainedBy) == 0
			continue
		}
		// An outcome about a workload that an earlier stage explains (a rollout stalled
		// because quota refuses its pods): the pods it alone covered share that cause.
		if earlier != nil && f.Root {
			f.Root = false
			for _, p := range f.Pods() {
				if roots[p.nsName()] == f {
					roots[p.nsName()] = earlier
				}
			}
			earlier.Root = true
		}
	}
	// A refused update that holds a deletion, read at the request stage about the
	// client that sent it: the held deletion explains it.
	for _, held := range fs {
		if !held.HeldDeletion {
			continue
		}
		places := map[string]bool{}
		for _, e := range held.Evidence {
			places[e.placeKey()] = true
		}
		for _, f := range fs {
			if f == held || f.Stage != StageRequest || !f.Root || len(f.Evidence) == 0 {
				continue
			}
			if !slices.ContainsFunc(f.Evidence, func(e Evidence) bool { return !places[e.placeKey()] }) {
				f.Root = false
				addLink(held, f)
			}
		}
	}
	// Keep link lists in report order.
	pos := make(map[string]int, len(fs))
	for i, f := range fs {
		pos[f.ID] = i
	}
	for _, f := range fs {
		sort.Slice(f.Explains, func(i, j int) bool { return pos[f.Explains[i]] < pos[f.Explains[j]] })
		sort.Slice(f.ExplainedBy, func(i, j int) bool { return pos[f.ExplainedBy[i]] < pos[f.ExplainedBy[j]] })
	}
	return roots
}

// scopeFindings keeps findings about the requested namespace or pod, and the findings
// linked to them (a pod's root cause may be its node).
func scopeFindings(fs []*Finding, opts Options) []*Finding {
	if opts.Namespace == "" && opts.Pod == "" {
		if fs == nil {
			return []*Finding{}
		}
		return fs
	}
	in := map[string]bool{}
	for _, f := range fs {
		for _, s := range f.Subjects {
			if inScope(s, opts) {
				in[f.ID] = true
				break
			}
		}
	}
	for _, f := range fs {
		if in[f.ID] {
			for _, id := range f.ExplainedBy {
				in[id] = true
			}
		}
	}
	out := []*Finding{}
	for _, f := range fs {
		if !in[f.ID] {
			continue
		}
		f.Explains = keepIDs(f.Explains, in)
		f.ExplainedBy = keepIDs(f.ExplainedBy, in)
		out = append(out, f)
	}
	return out
}

// withOwners adds to a --pod scope the pod's controllers up its chain (its ReplicaSet
// and that one's Deployment, its Job and CronJob): a finding about them concerns the
// pod too (a quota that holds its Deployment at 2 of 3 replicas).
func withOwners(g *Graph, opts Options) Options {
	if opts.Pod == "" {
		return opts
	}
	ns, name, _ := strings.Cut(opts.Pod, "/")
	p := g.FindPod(ns, name)
	if p == nil {
		return opts
	}
	ref := controllerRef(p)
	for depth := 0; ref != nil && depth < 4; depth++ {
		opts.podOwners = append(opts.podOwners, *ref)
		o, _ := g.byKey[ref.Kind+"/"+ref.Namespace+"/"+ref.Name].(interface{ Meta() *metav1.ObjectMeta })
		if o == nil {
			break
		}
		ref = nil
		for _, or := range o.Meta().OwnerReferences {
			if or.Controller != nil && *or.Controller {
				ref = &ObjectRef{Kind: or.Kind, Namespace: ns, Name: or.Name}
			}
		}
	}
	return opts
}

func inScope(s ObjectRef, opts Options) bool {
	if opts.Pod != "" {
		if s.Kind == "Pod" {
			return s.nsName() == opts.Pod
		}
		for _, o := range opts.podOwners {
			if o.Kind == s.Kind && o.Namespace == s.Namespace && o.Name == s.Name {
				return true
			}
		}
		return false
	}
	return s.Namespace == opts.Namespace
}

func keepIDs(ids []string, in map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if in[id] {
			out = append(out, id)
		}
	}
	return out
}

// resolveSignatures gives Go rules precedence over signatures: a signature finding
// drops the pods a rule finding at the same stage already covers, and of several
// signatures about one subject at one stage the first (in catalog order) wins, except
// that a catch-all rule's message knowledge ("the readiness probe fails (OUTPUT)") comes
// after the signatures that know a cause (a probe's port name no port has).
func resolveSignatures(fs []*Finding) []*Finding {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b *Finding) int {
		switch {
		case a.backsCatchall == b.backsCatchall:
			return 0
		case a.backsCatchall:
			return 1
		}
		return -1
	})
	byRule := map[string]bool{}
	// A signature that knows the cause takes the pods of a catch-all rule's finding at
	// its stage.
	known := map[string]bool{}
	for _, f := range fs {
		if f.signature && !f.ruleBacked {
			for _, s := range f.Subjects {
				known[string(f.Stage)+"\x00"+s.key()] = true
			}
		}
	}
	// A signature that knows the cause of the very line a catch-all rule read (its
	// first evidence) takes the catch-all's pods, even when the line alone did not
	// name them: an event row pasted without its pod.
	explained := map[string]*Finding{}
	for _, f := range fs {
		if f.signature {
			for _, e := range f.Evidence {
				explained[string(f.Stage)+"\x00"+e.placeKey()] = f
			}
		}
	}
	for _, f := range fs {
		if !f.catchall || len(f.Evidence) == 0 {
			continue
		}
		sig := explained[string(f.Stage)+"\x00"+f.Evidence[0].placeKey()]
		if sig == nil {
			continue
		}
		for _, s := range f.Subjects {
			if s.Kind == "Pod" && !slices.ContainsFunc(sig.Subjects, func(o ObjectRef) bool { return o.key() == s.key() }) {
				sig.Subjects = append([]ObjectRef{s}, sig.Subjects...)
			}
			known[string(f.Stage)+"\x00"+s.key()] = true
		}
	}
	for _, f := range fs {
		if f.catchall {
			var keep []ObjectRef
			for _, s := range f.Subjects {
				if s.Kind == "Pod" && known[string(f.Stage)+"\x00"+s.key()] {
					continue
				}
				keep = append(keep, s)
			}
			f.Subjects = keep
		}
	}
	// A fallback signature yields a pod to a Go rule at any stage.
	byRulePod := map[string]bool{}
	// A rule's message knowledge about an unknown subject yields to the rule's own
	// finding: the rule read the same failure from the objects and names them.
	ruleFired := map[string]bool{}
	for _, f := range fs {
		if f.catchall || f.signature && (!f.ruleBacked || f.fallback) {
			continue
		}
		if f.signature {
			// A rule's message knowledge is the rule's finding: a reading of last
			// resort yields to it too (a liveness kill the probe rule's message reads
			// is not an unexplained SIGKILL, though the catch-all rule gave it the pod).
			for _, s := range f.Subjects {
				byRulePod[s.key()] = true
			}
			continue
		}
		ruleFired[string(f.Stage)+"\x00"+f.Rule] = true
		for _, s := range f.Subjects {
			byRule[string(f.Stage)+"\x00"+s.key()] = true
			byRulePod[s.key()] = true
		}
	}
	// A fallback signature yields its subject to another signature's finding about it
	// at its stage too: a pod, a node, a pasted file's unknown subject.
	bySignature := map[string]bool{}
	for _, f := range fs {
		if !f.signature || f.fallback || len(f.Subjects) == 0 {
			continue
		}
		if len(f.Pods()) == 0 {
			bySignature[subjectSlot(f)] = true
		}
		for _, s := range f.Subjects {
			if s.Kind == "Pod" {
				bySignature[string(f.Stage)+"\x00"+s.key()] = true
			}
		}
	}
	taken := map[string]bool{}
	// takenBy is the finding that took a pod's slot at a stage: another line of the same
	// signature about the same pod (a second missing ConfigMap) is added to it.
	takenBy := map[string]*Finding{}
	out := fs[:0]
	for _, f := range fs {
		if !f.signature {
			if !catchallLostAll(f) {
				out = append(out, f)
			}
			continue
		}
		pods := f.Pods()
		var keep []ObjectRef
		var sameRule *Finding
		for _, s := range f.Subjects {
			k := string(f.Stage) + "\x00" + s.key()
			if s.Kind == "Pod" && (byRule[k] || taken[k] || f.fallback && (byRulePod[s.key()] || bySignature[k])) {
				if t := takenBy[k]; t != nil && t.Rule == f.Rule && !byRule[k] {
					sameRule = t
				}
				continue
			}
			keep = append(keep, s)
		}
		var keptPods int
		for _, s := range keep {
			if s.Kind == "Pod" {
				keptPods++
			}
		}
		if len(pods) > 0 && keptPods == 0 {
			if sameRule != nil {
				alsoCause(sameRule, f)
			}
			continue
		}
		if len(pods) == 0 {
			k := subjectSlot(f)
			if byRule[string(f.Stage)+"\x00"+firstSubject(f)] || taken[k] || f.fallback && bySignature[k] ||
				f.Subjects[0].Name == UnknownSubject && ruleFired[string(f.Stage)+"\x00"+f.Rule] {
				if t := takenBy[k]; t != nil && t.Rule == f.Rule && (f.Stage == StageRequest || f.Stage == StageScheduling) {
					// Another refusal of the same kind to the same client (a second
					// resource the identity may not list, a second resource no node
					// has free): each is what the fix answers, said with the first.
					alsoCause(t, f)
				}
				continue
			}
			taken[k] = true
			takenBy[k] = f
		}
		for _, s := range keep {
			if s.Kind == "Pod" {
				taken[string(f.Stage)+"\x00"+s.key()] = true
				takenBy[string(f.Stage)+"\x00"+s.key()] = f
			}
		}
		f.Subjects = keep
		out = append(out, f)
	}
	return out
}

// maxAlsoCauses bounds the other lines' causes a finding adds to its own.
const maxAlsoCauses = 2

// alsoCause adds to f what another line of the same signature says of the same pod
// when it says something else (a second missing ConfigMap, a second refused key): its
// cause after f's, and its evidence.
func alsoCause(f, other *Finding) {
	if other.Cause == "" || strings.Contains(f.Cause, other.Cause) || f.alsoCauses >= maxAlsoCauses {
		return
	}
	f.alsoCauses++
	f.Cause += "; also, " + other.Cause
	for _, e := range other.Evidence {
		if !slices.ContainsFunc(f.Evidence, func(x Evidence) bool { return x.placeKey() == e.placeKey() }) {
			f.Evidence = append(f.Evidence, e)
		}
	}
}

// subjectSlot is the stage and subject a signature's finding about no pod speaks for:
// one finding per stage and subject (per file for an unknown subject).
func subjectSlot(f *Finding) string {
	k := string(f.Stage) + "\x00" + firstSubject(f)
	if f.Subjects[0].Name == UnknownSubject && len(f.Evidence) > 0 {
		k += "\x00" + f.Evidence[0].inBundle().Path
	}
	return k
}

func hasPods(subjects []ObjectRef) bool {
	for _, s := range subjects {
		if s.Kind == "Pod" {
			return true
		}
	}
	return false
}

// catchallLostAll reports whether a catch-all finding gave every pod it had to
// signatures that know their cause; it then says nothing more.
func catchallLostAll(f *Finding) bool { return f.catchallPods > 0 && !hasPods(f.Subjects) }
