package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// Prose that reads almost as well as two failures of different stages, with nothing
// else in the evidence, is trouble the finding says it cannot place: it names both
// readings at the closer one's stage, never "no finding". Two rules of made-up words
// (so no built-in rule competes) share the prose equally.
func TestAmbiguousProseIsNotSilent(t *testing.T) {
	none := func(*analyze.View) []analyze.Finding { return nil }
	rules := append(All(),
		&analyze.Rule{ID: "node-zorblax-jammed", Stage: analyze.StageNode, Title: "the zorblax is jammed", Severity: analyze.SeverityError, Run: none,
			Doc: "The zorblax jams when its quibbler overheats; a jammed zorblax stops the frobnicator."},
		&analyze.Rule{ID: "runtime-frimble-slipped", Stage: analyze.StageRuntime, Title: "the frimble slipped", Severity: analyze.SeverityError, Run: none,
			Doc: "The frimble slips when its sprocket wears; a slipped frimble stops the frobnicator."})
	text := "Since Monday our frobnicator stops every few hours and we do not know why.\n" +
		"The zorblax looks jammed and the frimble slipped, with the quibbler hot and the sprocket worn down.\n"
	b := importPaste(t, map[string]string{"ticket.txt": text})
	rs := roots(analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules, analyze.Options{Unexplained: true}))
	for _, f := range rs {
		t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
	}
	if len(rs) != 1 || rs[0].Rule != analyze.UnexplainedRule || !strings.Contains(rs[0].Cause, `"the zorblax is jammed"`) ||
		!strings.Contains(rs[0].Cause, `"the frimble slipped"`) {
		t.Fatalf("want one unexplained root naming both readings, got %v", ruleIDs(rs))
	}
}

// Prose that shares too little with any failure to name it, with nothing else in the
// evidence, still gives a finding: the closest failure, said as a guess.
func TestWeakProseIsAGuessNotSilence(t *testing.T) {
	none := func(*analyze.View) []analyze.Finding { return nil }
	rules := append(All(),
		&analyze.Rule{ID: "node-zorblax-jammed", Stage: analyze.StageNode, Title: "the zorblax is jammed", Severity: analyze.SeverityError, Run: none,
			Doc: "The zorblax jams when its quibbler overheats; a jammed zorblax stops the frobnicator."})
	text := "Since we moved the cluster to the new rack things look odd to us.\nThe zorblax does not work now and then, nobody knows why yet.\n"
	b := importPaste(t, map[string]string{"ticket.txt": text})
	rs := roots(analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules, analyze.Options{Unexplained: true}))
	for _, f := range rs {
		t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
	}
	if len(rs) != 1 || rs[0].Rule != analyze.UnexplainedRule || rs[0].Stage != analyze.StageNode || !strings.Contains(rs[0].Cause, `closest to "the zorblax is jammed"`) {
		t.Fatalf("want one unexplained root that names the closest failure as a guess, got %v", ruleIDs(rs))
	}
}
