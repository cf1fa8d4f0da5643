package analyze

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kljensen/snowball/english"
)

// DescribedNote marks the cause of a finding read from the ticket's own words: what a
// reporter wrote ("the pod is pending, since it does not tolerate the taint
// node-role.kubernetes.io/control-plane on the node") rather than what a component
// printed.
const DescribedNote = "as the ticket's text describes it (no component output in the evidence shows it)"

// A ticket often holds only its reporter's prose: what they saw and what they think is
// wrong, with the decisive values in backticks or quotes and no component output at all.
// An expert reading it still knows which known failure it describes. The described
// reading does the same with podflow's own knowledge: it ranks every rule and signature
// by how much of the prose its title, ID and documentation share (BM25 over their stemmed words,
// which name the components' messages, fields and fixes), and, when the best one is a
// clear match, reports that failure with the prose's most telling sentences as
// evidence, and when no other stage's failure shares nearly as much. It is the last resort, taken only when the evidence has no pod and nothing
// else (a rule, a signature, the catalog) read any of it, and no pod that shows no
// trouble.

// describedMinScore is the least BM25 score of the best rule for the reading to count:
// below it the prose shares only common words with every rule.
const describedMinScore = 12.0

// describedWeakScore is the least score of a reading said as a guess: when nothing else
// in the evidence shows trouble, prose that shares this much with one failure is closer
// to it than to "no finding".
const describedWeakScore = 6.0

// reProseTrouble is how a reporter says something is wrong.
var reProseTrouble = regexp.MustCompile(`(?i)\b(?:fail\w*|errors?|not|cannot|can't|won't|doesn't|don't|isn't|aren't|never|stuck|crash\w*|broken|unable|refus\w*|timed out|denied|no longer)\b`)

// describedStageLead is how far the best rule's score must lead the best of every other
// stage: on real prose-only tickets, readings that led by a tenth named the stage their
// threads confirmed, and most that did not were wrong.
const describedStageLead = 1.10

// describedMinWords is the least number of content words the prose must have.
const describedMinWords = 8

var proseWord = regexp.MustCompile(`[A-Za-z][A-Za-z0-9\-.]+`)

// proseStop are the commonest English words: they carry no meaning of their own.
var proseStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the a an and or of to in on at is are was were be been it its this that
		for with as by from not no but if then so when which who what into out up down has have had do does
		did can could would should will may might there their they them we our you your i my me he she his
		her than also just only very after before over under about while because since`) {
		m[w] = true
	}
	return m
}()

// proseTokens are the content words of s: lower case, at least three characters, the
// commonest English words left out; a dotted or dashed name (a label key, an image) is
// one word. A field name written in camel case (livenessProbe, timeoutSeconds) also
// gives the words it is made of, as a reporter who writes them apart would.
func proseTokens(s string) []string {
	var out []string
	add := func(w string) {
		w = strings.Trim(w, ".-")
		if len(w) <= 2 || proseStop[w] {
			return
		}
		if !strings.ContainsAny(w, ".-/0123456789") {
			// "tolerates", "toleration" and "tolerated" are one word to the reader.
			w = english.Stem(w, false)
		}
		out = append(out, w)
	}
	for _, orig := range proseWord.FindAllString(s, -1) {
		w := strings.ToLower(orig)
		add(w)
		// "OOMkilled", "oomkilled", "OOM-killed": however a reporter writes the
		// kubelet's OOMKilled, it is OOM and killed.
		if l := strings.ToLower(strings.Trim(orig, ".-")); strings.HasPrefix(l, "oom") && len(l) > 5 && !strings.HasPrefix(orig, "OOMK") {
			add("oom")
			add(strings.TrimLeft(l[3:], "-_"))
			continue
		}
		// A sentence's last word keeps its full stop: "… will get OOMKilled."
		if parts := camelParts(strings.Trim(orig, ".-")); len(parts) > 1 {
			for _, p := range parts {
				add(strings.ToLower(p))
			}
		}
	}
	return out
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// camelParts splits a word of letters written in camel case at its capitals
// ("timeoutSeconds": timeout, Seconds; "OOMKilled": OOM, Killed); a word with other
// characters, or in one case, is one part.
func camelParts(w string) []string {
	for i := 0; i < len(w); i++ {
		if !isASCIILetter(w[i]) {
			return []string{w}
		}
	}
	var parts []string
	start := 0
	for i := 1; i < len(w); i++ {
		up := w[i] >= 'A' && w[i] <= 'Z'
		prevUp := w[i-1] >= 'A' && w[i-1] <= 'Z'
		nextLow := i+1 < len(w) && w[i+1] >= 'a' && w[i+1] <= 'z'
		if up && (!prevUp || nextLow) {
			parts = append(parts, w[start:i])
			start = i
		}
	}
	return append(parts, w[start:])
}

// reGoStructDump is a Go value printed with %#v or %+v: a type name, a brace and a
// capitalized field ("version.Info{Major:", "&version.Version{SemVer:").
var reGoStructDump = regexp.MustCompile(`&?\b[a-z]\w*\.[A-Z]\w*\{[A-Z]\w*:`)

// reChainHead is the first link of a wrapped error chain, what failed in a program's
// words, and reChainFailed a later link that says it failed too.
var (
	reChainHead   = regexp.MustCompile(`(?i)^(?:failed|error|unable|cannot|could not|can't)\b[^:]{0,80}$`)
	reChainFailed = regexp.MustCompile(`(?i)\b(?:failed|error|unable|cannot|could not)\b`)
)

// errorChain reports whether a line is a program's error chain, however much it reads
// like a sentence: three links or more, the first and another saying what failed
// ("failed to start: daemon creation failed: error while initializing daemon: …").
func errorChain(s string) bool {
	parts := strings.Split(strings.Trim(strings.TrimSpace(s), "`"), ": ")
	if len(parts) < 3 || !reChainHead.MatchString(parts[0]) {
		return false
	}
	for _, p := range parts[1 : len(parts)-1] {
		if len(p) <= 80 && reChainFailed.MatchString(p) {
			return true
		}
	}
	return false
}

// isProse reports whether a line reads as a sentence someone wrote: several words, most
// of them letters, some of them the small words prose is made of.
func isProse(s string) bool {
	ws := strings.Fields(s)
	if len(ws) < 5 {
		return false
	}
	small, wordy := 0, 0
	for _, w := range ws {
		lw := strings.ToLower(strings.Trim(w, ".,;:!?()\"'`"))
		if proseStop[lw] {
			small++
		}
		if lw != "" && lw[0] >= 'a' && lw[0] <= 'z' {
			wordy++
		}
	}
	return small >= 2 && wordy*10 >= len(ws)*6
}

// describedDoc is one rule's words, for ranking.
type describedDoc struct {
	rule *Rule
	tf   map[string]int
	n    int
	// name are the words of its title and ID.
	name map[string]bool
}

// describedIndex ranks rules by the words their title and ID (counted three times)
// and documentation share with a text.
type describedIndex struct {
	docs []describedDoc
	df   map[string]int
	// names counts the rules whose title or ID holds a word.
	names map[string]int
	avg   float64
}

func newDescribedIndex(rules []*Rule) *describedIndex {
	x := &describedIndex{df: map[string]int{}, names: map[string]int{}}
	total := 0
	for _, r := range rules {
		// The title and the ID name the failure: they count more than the prose of
		// the documentation around them.
		name := r.Title + " " + strings.ReplaceAll(r.ID, "-", " ")
		words := proseTokens(strings.Repeat(name+" ", 3) + r.Doc)
		if len(words) == 0 {
			continue
		}
		named := map[string]bool{}
		for _, w := range proseTokens(name) {
			if !named[w] {
				named[w] = true
				x.names[w]++
			}
		}
		d := describedDoc{rule: r, tf: map[string]int{}, n: len(words), name: named}
		for _, w := range words {
			if d.tf[w] == 0 {
				x.df[w]++
			}
			d.tf[w]++
		}
		total += len(words)
		x.docs = append(x.docs, d)
	}
	if len(x.docs) > 0 {
		x.avg = float64(total) / float64(len(x.docs))
	}
	return x
}

func (x *describedIndex) idf(w string) float64 {
	n := float64(len(x.docs))
	df := float64(x.df[w])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// namesIn reports whether q names the rule's failure: a word of its ID (the stage it
// sits at and "message" left out) that few rules are named with, a quarter of them at
// most: "taint", "selector", "finalizer", not "pod" or "container". The ID is the failure's name;
// a title says more around it ("the storage driver's cloud credentials may not create
// or attach the disk"), and a prose that shares only those words ("attach") describes
// another failure.
func (x *describedIndex) namesIn(r *Rule, q map[string]bool) bool {
	skip := map[string]bool{}
	comp := ""
	if r.signature != nil {
		// The program a signature is specific to is not its failure's name:
		// qualifiedIn asks for it.
		comp = r.signature.Component
	}
	for _, w := range proseTokens(string(r.Stage) + " message " + comp) {
		skip[w] = true
	}
	for _, w := range proseTokens(strings.ReplaceAll(r.ID, "-", " ")) {
		if !skip[w] && q[w] && x.names[w]*4 <= len(x.docs) {
			return true
		}
	}
	return false
}

// qualifiedIn reports whether q names the program a signature is specific to, when its
// ID does: a signature named after its component ("runtime-jvm-out-of-memory", printed
// by the JVM; "sandbox-cilium-agent-unreachable", by Cilium) describes that program's
// failure, and a prose that never names the program ("exit code 137 ... terminated due
// to Out-Of-Memory") describes someone else's.
func qualifiedIn(r *Rule, q map[string]bool) bool {
	sig := r.signature
	if sig == nil || sig.Component == "" {
		return true
	}
	comp := map[string]bool{}
	for _, w := range proseTokens(sig.Component) {
		comp[w] = true
		// "node.js" is named by its first part as much as by itself
		for p := range strings.FieldsFuncSeq(w, func(r rune) bool { return r == '.' || r == '-' }) {
			comp[p] = true
		}
	}
	qualified := false
	for _, w := range proseTokens(strings.ReplaceAll(r.ID, "-", " ")) {
		if comp[w] {
			qualified = true
		}
	}
	if !qualified {
		return true
	}
	for w := range comp {
		if q[w] && !clusterWords[w] {
			return true
		}
	}
	return false
}

// clusterWords are words of a component's name that every ticket uses about its
// cluster: "Node.js" is not named by "3 nodes".
var clusterWords = map[string]bool{"node": true, "nodes": true, "pod": true, "pods": true, "container": true, "containers": true, "cluster": true}

// score is the BM25 score of doc d for the query words q (each counted once).
func (x *describedIndex) score(d *describedDoc, q map[string]bool) float64 {
	const k1, b = 1.2, 0.75
	s := 0.0
	for w := range q {
		tf := float64(d.tf[w])
		if tf == 0 {
			continue
		}
		s += x.idf(w) * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.n)/x.avg))
	}
	return s
}

// described reads the prose of the evidence when nothing else explains anything: no
// finding but the floor's unexplained ones, and at least one of those when there are pods. It returns the finding of the
// rule the prose describes, and the files of the prose it read (whose unexplained
// findings it replaces), or nil.
func described(g *Graph, fs []*Finding, rules []*Rule) (*Finding, map[string]bool) {
	// Stages the catalog places a line at: the prose may name the failure there, the
	// catalog knowing only that a component printed trouble.
	catalogStages := map[Stage]bool{}
	// The places of the lines the catalog read: a component's own words, not a
	// reporter's, however much they read like a sentence.
	catalogRead := map[string]bool{}
	// Stages the floor places a program's own output line at (a container's log, a
	// journal): the prose may not move the trouble to a stage none of them is at.
	outputStages := map[Stage]bool{}
	for _, f := range fs {
		switch f.Rule {
		case UnexplainedRule:
			// The floor groups the lines of one subject in one finding (a reporter's
			// sentence first, the program's error chain it quotes after): any of them
			// that is a program's output places the trouble.
			if slices.ContainsFunc(f.Evidence, func(e Evidence) bool {
				// klog's header is a program's whatever sentence follows it.
				return !isProse(e.Excerpt) && reOutputLine.MatchString(e.Excerpt) || reKlogHead.MatchString(strings.TrimSpace(e.Excerpt)) ||
					errorChain(e.Excerpt) || programLine(e.Excerpt)
			}) {
				outputStages[f.Stage] = true
			}
			if slices.ContainsFunc(f.Subjects, func(o ObjectRef) bool { return o.Kind == "Pod" && o.Name != UnknownSubject }) {
				// A pod's own state (a get pods row: Pending, not scheduled) is what the
				// cluster printed about it, as a program's output line is.
				outputStages[f.Stage] = true
			}
			if len(f.Evidence) > 0 {
				// A component's message the catalog places at this stage (a kubelet's
				// "MountVolume.SetUp failed for volume …" pasted without its event's
				// columns, long enough to read like a sentence) outweighs the prose as a
				// program's output does.
				if r := componentReading(f.Evidence[0].Excerpt); r.known() && r.stage() == f.Stage {
					outputStages[f.Stage] = true
				}
			}
		case CatalogRule:
			catalogStages[f.Stage] = true
			for _, e := range f.Evidence {
				catalogRead[e.placeKey()] = true
			}
		default:
			return nil, nil
		}
	}
	if len(g.pods) > 0 && len(fs) == 0 {
		// Pods and no trouble: what the text says does not outweigh what they show.
		return nil, nil
	}
	lines := g.Lines()
	var prose []*Line
	q := map[string]bool{}
	sentences := 0
	seen := map[string]bool{}
	for i := range lines {
		l := &lines[i]
		if !l.Fragment || seen[l.Text] {
			continue
		}
		if o := l.Object(); o.Kind != "" && o.Kind != ClientKind && o.Name != UnknownSubject {
			// Output the paste says is about a named object (a describe after its
			// prompt) is that object's state, not a reporter's description.
			continue
		}
		// The same text imported twice (as a log and as text) is read once.
		seen[l.Text] = true
		if reGoStructDump.MatchString(l.Text) {
			// A program's version printed as a Go struct (kubectl and helm version:
			// "Client Version: version.Info{Major:"1", …, Platform:"darwin/amd64"}")
			// describes the tools, not the failure.
			continue
		}
		if isProse(l.Text) {
			sentences++
		}
		prose = append(prose, l)
		for _, w := range proseTokens(l.Text) {
			q[w] = true
		}
	}
	if sentences == 0 || len(q) < describedMinWords {
		// Lines without a sentence among them are output, not a description.
		return nil, nil
	}
	facts, stating := statedFacts(prose)
	for w := range facts {
		q[w] = true
	}
	x := newDescribedIndex(describable(rules))
	var best *describedDoc
	bestScore := 0.0
	byStage := map[Stage]float64{}
	bestOfStage := map[Stage]*describedDoc{}
	for i := range x.docs {
		d := &x.docs[i]
		if !x.namesIn(d.rule, q) || !qualifiedIn(d.rule, q) {
			// The prose shares the rule's documentation but none of the words that
			// name its failure, or not the program it is specific to: it talks around
			// it, and does not compete.
			continue
		}
		s := x.score(d, q)
		for w := range facts {
			// A rule named for what the prose's values state is the failure they
			// mean: "exit code 137" with memory is the OOM kill, not any crash.
			if d.name[w] {
				s += x.idf(w)
			}
		}
		if s > byStage[d.rule.Stage] || bestOfStage[d.rule.Stage] == nil {
			byStage[d.rule.Stage], bestOfStage[d.rule.Stage] = s, d
		}
		if s > bestScore || s == bestScore && best != nil && d.rule.ID < best.rule.ID {
			best, bestScore = d, s
		}
	}
	if best == nil || bestScore < describedWeakScore || bestScore < describedMinScore && len(fs) > 0 {
		return nil, nil
	}
	// weak: the prose shares too little with any failure to name it, but nothing else in
	// the evidence shows trouble: the closest reading is said as a guess, not a finding.
	weak := bestScore < describedMinScore
	if weak && !slices.ContainsFunc(prose, func(l *Line) bool { return reProseTrouble.MatchString(l.Text) }) {
		// Nothing in the text says anything is wrong (a healthy program's own lines).
		return nil, nil
	}
	if len(catalogStages) > 0 && !catalogStages[best.rule.Stage] {
		// A component's own line places the trouble elsewhere than the prose.
		return nil, nil
	}
	if len(outputStages) > 0 && !outputStages[best.rule.Stage] {
		// A program's own output (a timestamped log or journal line) shows trouble at
		// another stage: the prose's closest failure does not outweigh it.
		return nil, nil
	}
	if best.rule.Stage == StageImage {
		// An image's failure is about one image: the line that names it is quoted, since
		// the fix changes it (a tag that was never pushed, a build for another platform).
		stating = append(stating, reStatedImageRef)
	}
	var rival *describedDoc
	for st, s := range byStage {
		if st != best.rule.Stage && bestScore < describedStageLead*s && (rival == nil || s > byStage[rival.rule.Stage]) {
			rival = bestOfStage[st]
		}
	}
	if rival != nil && len(fs) > 0 {
		// Another stage's failure shares almost as much: the prose does not say
		// which link broke, and the floor already shows what is unexplained.
		return nil, nil
	}
	// The sentences that share the most of the rule's words are the evidence.
	type scored struct {
		l *Line
		s float64
		i int
	}
	var ss []scored
	for i, l := range prose {
		if catalogRead[l.Evidence().placeKey()] || len(catalogStages) > 0 && !isProse(l.Text) {
			// Beside a line the catalog reads, only a reporter's sentences may name the
			// failure: a component's own lines, and the catalog's line above all, are
			// the catalog's to read.
			continue
		}
		lq := map[string]bool{}
		for _, w := range proseTokens(l.Text) {
			lq[w] = true
		}
		if s := x.score(best, lq); s > 0 {
			ss = append(ss, scored{l, s, i})
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].s > ss[j].s })
	keep := 2
	if len(ss) > 2 && !slices.ContainsFunc(ss[:2], func(x scored) bool { return statesValue(x.l.Text) }) {
		// Neither telling sentence carries a value (a size, a port, a path, a quoted
		// setting): the best one that does is quoted too, since the fix is about it.
		if i := slices.IndexFunc(ss[2:], func(x scored) bool { return statesValue(x.l.Text) }); i >= 0 {
			ss[2], keep = ss[2+i], 3
		}
	}
	ss = ss[:min(len(ss), keep)]
	if len(ss) > 0 && !slices.ContainsFunc(ss, func(x scored) bool { return reChangeSaid.MatchString(x.l.Text) }) {
		// The release the trouble came with ("started once upgraded from v1.5.7 to
		// v1.6.1", "APP - 0.7.0") is what the reader compares and what the fix
		// pins: the line that says it is quoted too.
		for i, l := range prose {
			if reChangeSaid.MatchString(l.Text) && !catalogRead[l.Evidence().placeKey()] {
				ss = append(ss, scored{l, 0, i})
				break
			}
		}
	}
	for _, re := range stating {
		// The settings the reading rests on are quoted as they are written.
		if slices.ContainsFunc(ss, func(x scored) bool { return re.MatchString(x.l.Text) }) {
			continue
		}
		for i, l := range prose {
			if re.MatchString(l.Text) {
				ss = append(ss, scored{l, 0, i})
				break
			}
		}
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].i < ss[j].i })
	if len(ss) == 0 {
		return nil, nil
	}
	files := map[string]bool{}
	for _, l := range prose {
		b, p := l.source()
		files[b+"\x00"+p] = true
	}
	var ev []Evidence
	var quoted []string
	for _, s := range ss {
		ev = append(ev, s.l.Evidence())
		quoted = append(quoted, quoteText(statedWindow(s.l.Text, stating)))
	}
	// A reading said as a guess, or as one of two, is trouble no rule explains.
	guess := func(cause string) (*Finding, map[string]bool) {
		return &Finding{Rule: UnexplainedRule, Stage: best.rule.Stage, Severity: SeverityError, Title: "trouble no rule explains",
			Subjects: ss[0].l.Subjects(), Evidence: ev, Remediation: wouldExplain[best.rule.Stage],
			Cause: cause + ": " + strings.Join(quoted, " ")}, files
	}
	if weak {
		return guess(fmt.Sprintf("the ticket's text describes trouble that no component output in the evidence shows; of the failures podflow knows it is closest to %q (%s stage), though it shares too little with it to say so",
			describedTitle(best.rule, rules), best.rule.Stage))
	}
	if rival != nil {
		// Nothing else in the evidence shows trouble, and the prose reads almost as well
		// as two failures of different stages: say so, rather than nothing, and name
		// both, the closer one first.
		return guess(fmt.Sprintf("the ticket's text describes trouble that reads most like %q (%s stage), or %q (%s stage); no component output in the evidence shows which",
			describedTitle(best.rule, rules), best.rule.Stage, describedTitle(rival.rule, rules), rival.rule.Stage))
	}
	r := best.rule
	id, title, fix := r.ID, r.Title, docSection(r.Doc, "Fix")
	if sig := r.signature; sig != nil {
		fix = sig.Fix
		if sig.ForRule != "" {
			if gr := ruleByID(rules, sig.ForRule); gr != nil {
				id, title = gr.ID, gr.Title
				if fix == "" {
					fix = docSection(gr.Doc, "Fix")
				}
			}
		}
	}
	if fix == "" {
		fix = wouldExplain[r.Stage]
	}
	return &Finding{Rule: id, Stage: r.Stage, Severity: SeverityError, Title: title,
		Subjects:    ss[0].l.Subjects(),
		Evidence:    ev,
		Remediation: strings.Join(strings.Fields(fix), " "),
		Cause:       fmt.Sprintf("%s, %s: %s", title, DescribedNote, strings.Join(quoted, " ")),
		// Tickets that describe the same failure share a cause in an index, whatever
		// words their reporters chose.
		FleetKey: "described",
	}, files
}

// describedTitle is the title a reading names a rule by: a companion signature's Go
// rule's, else its own.
func describedTitle(r *Rule, rules []*Rule) string {
	if sig := r.signature; sig != nil && sig.ForRule != "" {
		if gr := ruleByID(rules, sig.ForRule); gr != nil {
			return gr.Title
		}
	}
	return r.Title
}

// describable are the rules a prose can describe: every rule and signature but the
// fallbacks, which name a class of failure without its cause.
func describable(rules []*Rule) []*Rule {
	return slices.DeleteFunc(slices.Clone(rules), func(r *Rule) bool {
		return r.signature != nil && r.signature.Fallback || r.Doc == "" && r.Title == ""
	})
}

func ruleByID(rules []*Rule, id string) *Rule {
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// docSection is the text of a rule documentation's "## NAME" section, or "".
func docSection(doc, name string) string {
	_, rest, ok := strings.Cut(doc, "## "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

// Values a prose states whose meaning is known whatever words surround them: an exit code
// (137 is SIGKILL: the kernel's OOM killer when memory is the subject; 139 is SIGSEGV;
// 127 a command the shell did not find), an image being fetched, a CPU architecture, a
// cloud zone a volume is in.
// statedFacts turns them into the words the rules that explain them use, so a reporter
// who writes "exit code 137 ... Out-Of-Memory" is read as the OOM kill that
// code means, and "an EBS PV in us-east-1d ... no node in us-east-1d" as the volume's
// zone (its node affinity) that no node satisfies.
var (
	reStatedExit = regexp.MustCompile(`(?i)\bexit(?:ed)?(?: with)?(?: code| status)?[ :=]+(\d{1,3})\b`)
	// reStatedTerminating is a pod the prose says stays Terminating or Unknown, and
	// reStatedNodeDown a node it says went away.
	reStatedTerminating = regexp.MustCompile(`(?i)\b(?:stuck|stays?|keeps?|remains?|hang(?:s|ing)?)\b[^.\n]{0,40}\b(?:Terminating|Unknown)\b|\b(?:Terminating|Unknown)\b[^.\n]{0,20}\b(?:forever|never (?:disappear|go|goes)|state)`)
	reStatedNodeDown    = regexp.MustCompile(`(?i)\bshut ?down (?:a |the )?(?:worker )?node|\bnode\b[^.\n]{0,30}\b(?:shut ?down|powered off|went down|is down|NotReady|dead|crashed|lost)\b|\bstop(?:ped)? the kubelet\b`)
	// reKernelSaid is a line that states the node's kernel, as an issue template asks
	// for it ("Kernel (e.g. `uname -a`): Linux node1 4.14.48 #1 SMP … x86_64"): its
	// machine word is the environment, not an architecture the ticket is about.
	reKernelSaid = regexp.MustCompile(`(?im)^.*(?:\buname\b|#\d+ SMP\b).*$`)
	// reStatedImageRef is an image named with its repository and tag
	// ("concourse/concourse:8.4.1", "registry.k8s.io/sig-storage/nfsplugin:v4.2.0").
	reStatedImageRef = regexp.MustCompile(`\b[a-z0-9][a-z0-9.-]*(?::\d+)?(?:/[a-z0-9][a-z0-9._-]*)+:[A-Za-z0-9][A-Za-z0-9._-]*`)
	reStatedArch     = regexp.MustCompile(`(?i)\b(?:arm64|aarch64|amd64|x86_64|x86-64|armv[5-8]l?|armhf|ppc64le|s390x)\b`)
	// reStatedZone is a zone as AWS (us-east-1d), GCP (europe-west1-b) and Azure
	// (eastus-1, westeurope-3) name them.
	reStatedZone   = regexp.MustCompile(`\b(?:[a-z]{2}(?:-gov)?-[a-z]+-\d[a-z]|[a-z]+-[a-z]+\d-[a-z]|[a-z]+(?:us|europe|asia)\d?-\d)\b`)
	reStatedMemory = regexp.MustCompile(`(?i)\b(?:memory|oom|out[- ]of[- ]memory)`)
	// reStatedProbeStatus is a probe said to fail with an HTTP status ("liveness and
	// readiness probes are always failed with 401", "the probes fail due to 404").
	// The status may come first ("logs show 404 when k8s tries the readiness probe"),
	// in words ("the /healthz endpoint is unauthorized"), and the probe may be told by
	// what it decides ("the pod never becomes healthy because ...").
	// A sentence may end between them ("it fails its liveness probes. … /health returns
	// 404"); a paragraph's line holds both.
	reStatedProbeStatus = regexp.MustCompile(`(?i)(?:` + probeSaid + `)[^\n]{0,120}?` + httpStatusSaid + `|` + httpStatusSaid + `[^\n]{0,120}?(?:` + probeSaid + `)`)
	// reStatedPull is an image being fetched: a registry's manifest URL, or the image
	// named with the verb.
	reStatedPull = regexp.MustCompile(`(?i)/v2/\S+/manifests/|\b(?:pull|download|fetch)\w*\b[^.\n]{0,40}\bimage|\bimage\b[^.\n]{0,40}\b(?:pull|download|fetch)`)
	// reStatedAuthRefused is a refusal for credentials: a 401 or 403, or its words.
	reStatedAuthRefused = regexp.MustCompile(`(?i)\b(?:401|403|unauthori[sz]ed|forbidden|authentication required)\b`)
	// reStatedPauseImage is the sandbox's image named: pause:3.8, "the pause image",
	// containerd's sandbox_image.
	reStatedPauseImage = regexp.MustCompile(`(?i)\bpause:\d|\bpause image|\bsandbox[ _]image\b`)
	// reStatedLoopbackResolver is a resolv.conf whose nameserver is on the loopback;
	// reStatedForwardResolvConf a Corefile that forwards to the resolv.conf it gets.
	reStatedLoopbackResolver  = regexp.MustCompile(`(?m)^\s*nameserver\s+127\.\d+\.\d+\.\d+\s*$`)
	reStatedForwardResolvConf = regexp.MustCompile(`(?m)^\s*(?:forward|proxy)\s+\.\s+/etc/resolv\.conf\b`)
	reStatedVolume            = regexp.MustCompile(`(?i)\b(?:pvc?s?|persistent ?volume(?: ?claim)?s?|volumes?|ebs|disks?)\b`)
)

// probeSaid is how a reporter names a health check, or what its failure does.
const probeSaid = `\b(?:liveness|readiness|startup|probes?|probs?|health ?checks?|healthz)\b|\b(?:never|not|doesn't|does not|won't) (?:becomes? |gets? |turns? |goes )?(?:healthy|ready)\b`

// statedWindow is a line as a reading quotes it: whole up to oneLine's length, else the
// part around the first value a stated fact rests on (registry.k8s.io/pause:3.8 deep
// in a long sentence), so the quote keeps what the fix changes.
func statedWindow(text string, stating []*regexp.Regexp) string {
	line := strings.Join(strings.Fields(text), " ")
	whole := oneLine(line)
	if whole == line {
		return whole
	}
	for _, re := range stating {
		loc := re.FindStringIndex(line)
		if loc == nil || loc[1] <= len(whole)-len("…") {
			continue
		}
		start := max(loc[0]-120, 0)
		for start > 0 && line[start-1] != ' ' {
			start--
		}
		return "…" + oneLine(line[start:])
	}
	return whole
}

// reChangeSaid is a line that names the release a ticket runs or moved to: an upgrade
// to a version, or a version stated.
var reChangeSaid = regexp.MustCompile(`(?i)\b(?:upgrad\w*|updat\w*|bump\w*|migrat\w*|moved?|since|after)\b[^\n]{0,60}?\bv?\d+\.\d+(?:\.\d+)?\b|\bversion\b[^\n]{0,40}?\bv?\d+\.\d+(?:\.\d+)?\b`)

// httpStatusSaid is an HTTP error status, by number or by name.
const httpStatusSaid = `\b(?:[45]\d\d|unauthori[sz]ed|forbidden)\b`

// reStatedValue is a value a sentence states: a quoted span, a quantity with its unit
// ("2Gi", "512Mi", "30 seconds"), a port, a path, a flag or a key: the things a fix
// changes.
var reStatedValue = regexp.MustCompile("`[^`]+`|\\b\\d+(?:\\.\\d+)?\\s?(?:[KMGTP]i|[KMGTP]B|ms|s|sec|seconds?|minutes?|m|h)\\b|:\\d{2,5}\\b|\\bport \\d{2,5}\\b|(?:^|\\s)/[\\w.-]+/[\\w./-]*|(?:^|\\s)--[a-z][\\w-]+|\\b[\\w.-]+/[\\w.-]+:\\s")

// statesValue reports whether a sentence states a value (reStatedValue).
func statesValue(s string) bool { return reStatedValue.MatchString(s) }

// The regular expressions it returns are those of the settings whose lines state a
// fact: the lines a reading quotes, since the fix changes them.
func statedFacts(prose []*Line) (map[string]bool, []*regexp.Regexp) {
	var b strings.Builder
	for _, l := range prose {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	text := b.String()
	var words []string
	var stating []*regexp.Regexp
	for _, m := range reStatedExit.FindAllStringSubmatch(text, -1) {
		switch m[1] {
		case "137":
			words = append(words, "killed", "SIGKILL")
			if reStatedMemory.MatchString(text) {
				words = append(words, "OOM", "OOMKilled")
			}
		case "139":
			words = append(words, "segfault", "SIGSEGV")
		case "127":
			words = append(words, "command", "found")
		}
	}
	if reStatedPull.MatchString(text) {
		words = append(words, "pull", "image")
		if reStatedAuthRefused.MatchString(text) {
			// A registry that answers a pull with 401 or 403 refuses the credentials
			// (none, or the wrong ones): "no basic auth credentials", "unauthorized".
			words = append(words, "unauthorized", "unauthorized", "credentials", "rejected")
		}
	}
	if reStatedArch.MatchString(reKernelSaid.ReplaceAllString(text, "")) {
		words = append(words, "architecture", "platform")
	}
	if m := reStatedProbeStatus.FindString(text); m != "" && !reStatedPull.MatchString(m) {
		// A probe that fails with an HTTP status: what the kubelet's "HTTP probe failed
		// with statuscode: %d" says (pkg/probe/http/http.go DoHTTPProbe). The kubelet
		// counts any status of 400 or more as a failure, so the application answered
		// its health endpoint with an error: that is the failure the prose names,
		// whichever probe (liveness, readiness) it mentions.
		words = append(words, "probe", "probe", "failed", "statuscode", "HTTP", "application", "answers", "endpoint", "error", "status")
	}
	if reStatedLoopbackResolver.MatchString(text) && reStatedForwardResolvConf.MatchString(text) {
		// A Corefile that forwards to the resolv.conf it inherits from a node whose
		// nameserver is a local stub (systemd-resolved's 127.0.0.53): inside the pod
		// that address is CoreDNS itself, the forwarding loop its loop plugin detects.
		words = append(words, "loop", "detected", "forwards", "itself", "forwarding", "upstream")
		stating = append(stating, reStatedLoopbackResolver, reStatedForwardResolvConf)
	}
	if reStatedPauseImage.MatchString(text) {
		// The pause image is the pod sandbox's: a pull of it that fails is the sandbox
		// that cannot be created, whatever else the prose says of images.
		words = append(words, "sandbox", "sandbox", "pause")
		stating = append(stating, reStatedPauseImage)
	}
	if reStatedZone.MatchString(text) && reStatedVolume.MatchString(text) {
		words = append(words, "zone", "affinity")
	}
	if reStatedTerminating.MatchString(text) && reStatedNodeDown.MatchString(text) {
		// A pod that stays Terminating (or Unknown) on a node that was shut down or
		// lost its kubelet: no kubelet confirms its end, the node-lost failure.
		words = append(words, "lost", "lost", "terminating", "responding")
		stating = append(stating, reStatedTerminating, reStatedNodeDown)
	}
	out := map[string]bool{}
	for _, w := range proseTokens(strings.Join(words, " ")) {
		out[w] = true
	}
	return out, stating
}
