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

// describedStageLead is how far the best rule's score must lead the best of every other
// stage: on real prose-only tickets, readings that led by a tenth named the stage their
// threads confirmed, and most that did not were wrong.
const describedStageLead = 1.10

// describedMinWords is the least number of content words the prose must have.
const describedMinWords = 8

var proseWord = regexp.MustCompile(`[a-z][a-z0-9\-.]+`)

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
// one word.
func proseTokens(s string) []string {
	var out []string
	for _, w := range proseWord.FindAllString(strings.ToLower(s), -1) {
		w = strings.Trim(w, ".-")
		if len(w) <= 2 || proseStop[w] {
			continue
		}
		if !strings.ContainsAny(w, ".-/0123456789") {
			// "tolerates", "toleration" and "tolerated" are one word to the reader.
			w = english.Stem(w, false)
		}
		out = append(out, w)
	}
	return out
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
}

// describedIndex ranks rules by the words their title and ID (counted three times)
// and documentation share with a text.
type describedIndex struct {
	docs []describedDoc
	df   map[string]int
	avg  float64
}

func newDescribedIndex(rules []*Rule) *describedIndex {
	x := &describedIndex{df: map[string]int{}}
	total := 0
	for _, r := range rules {
		// The title and the ID name the failure: they count more than the prose of
		// the documentation around them.
		name := r.Title + " " + strings.ReplaceAll(r.ID, "-", " ")
		words := proseTokens(strings.Repeat(name+" ", 3) + r.Doc)
		if len(words) == 0 {
			continue
		}
		d := describedDoc{rule: r, tf: map[string]int{}, n: len(words)}
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

// namesIn reports whether q holds a word of the rule's title or ID that few rules use
// (a quarter of them at most): "taint", "selector", "finalizer", not "pod" or "node".
func (x *describedIndex) namesIn(r *Rule, q map[string]bool) bool {
	for _, w := range proseTokens(r.Title + " " + strings.ReplaceAll(r.ID, "-", " ")) {
		if q[w] && x.df[w]*4 <= len(x.docs) {
			return true
		}
	}
	return false
}

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
	for _, f := range fs {
		if f.Rule != UnexplainedRule {
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
		// The same text imported twice (as a log and as text) is read once.
		seen[l.Text] = true
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
	x := newDescribedIndex(describable(rules))
	var best *describedDoc
	bestScore := 0.0
	byStage := map[Stage]float64{}
	for i := range x.docs {
		d := &x.docs[i]
		s := x.score(d, q)
		byStage[d.rule.Stage] = max(byStage[d.rule.Stage], s)
		if s > bestScore || s == bestScore && best != nil && d.rule.ID < best.rule.ID {
			best, bestScore = d, s
		}
	}
	if best == nil || bestScore < describedMinScore {
		return nil, nil
	}
	if !x.namesIn(best.rule, q) {
		// The prose shares the rule's documentation but none of the words that name its
		// failure: it talks around it.
		return nil, nil
	}
	for st, s := range byStage {
		if st != best.rule.Stage && bestScore < describedStageLead*s {
			// Another stage's failure shares almost as much: the prose does not say
			// which link broke.
			return nil, nil
		}
	}
	// The sentences that share the most of the rule's words are the evidence.
	type scored struct {
		l *Line
		s float64
		i int
	}
	var ss []scored
	for i, l := range prose {
		lq := map[string]bool{}
		for _, w := range proseTokens(l.Text) {
			lq[w] = true
		}
		if s := x.score(best, lq); s > 0 {
			ss = append(ss, scored{l, s, i})
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].s > ss[j].s })
	ss = ss[:min(len(ss), 2)]
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
		quoted = append(quoted, quoteText(oneLine(s.l.Text)))
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
