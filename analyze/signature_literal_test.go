package analyze

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRequiredLiteralKeepsCaseUnlessThePatternIgnoresIt(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    literal
	}{
		{`Failed to pull image "(?P<image>[^"]+)"`, literal{s: "Failed to pull image \""}},
		{`(?i)failed quota: (?P<quota>\S+)`, literal{s: "failed quota: ", fold: true}},
		{`(?i)Cannot Determine`, literal{s: "cannot determine", fold: true}},
		{`a|b`, literal{}},
		// A named capture that wraps the message still holds its literal parts.
		{`(?P<detail>Node \S+ which was running pod \S+)(?: is unresponsive|\s*$)`, literal{s: " which was running pod "}},
		{`^(?P<detail>rbd: map failed: \(\d+\) [A-Za-z ]+)`, literal{s: "rbd: map failed: ("}},
		// What an optional or repeated group holds is not in every match.
		{`x(?:optional literal)?`, literal{s: "x"}},
		{`(?:a|long alternative)b`, literal{s: "b"}},
		// What a group repeated once or more holds is in every match: its longest word.
		{`(?:\d+ node\(s\) had taints?, )+`, literal{s: "node(s)"}},
		{`x(?:(?i)Long Word)+`, literal{s: "long", fold: true}},
		{`x(?:long literal)*`, literal{s: "x"}},
	} {
		if got := requiredLiteral(c.pattern); got != c.want {
			t.Errorf("requiredLiteral(%q) = %+v, want %+v", c.pattern, got, c.want)
		}
	}
}

// A pattern without a single required literal may still need one of an alternation's:
// the set whose shortest literal is longest, each branch by its own required literal;
// an alternation with a branch that needs nothing, or inside a repeat, needs none.
func TestRequiredAlternatives(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{`a|b`, nil}, // one-letter branches become a character class
		{`(?:alpha|beta)\s+\d+`, []string{"alpha", "beta"}},
		{`(?i)(?P<d>\b(?:powered|powering|shut|shutting|turned|switched)[ -](?:off|down)\b[^\n]{0,120}?\b(?:Terminating|Unknown)\b)`,
			[]string{"terminating", "unknown"}},
		{`(?:powered|shutting) (?:x|y)`, []string{"powered", "shutting"}},
		{`(?:alpha|\d+)`, nil},
		{`(?:alpha|beta)?z`, []string{"z"}},
		{`(?:alpha|beta)*`, nil},
		{`(?:ab(?:cd|ef)|gh)`, []string{"ab", "gh"}},
	} {
		var got []string
		for _, l := range requiredAlternatives(c.pattern) {
			got = append(got, l.s)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("requiredAlternatives(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

// Every match of a pattern holds one of its alternatives.
func TestRequiredAlternativesAreInEveryMatch(t *testing.T) {
	pattern := `(?i)\b(?:Terminating|Unknown)\b[^\n]{0,80}?\b(?:powered|shut|turned|switched)[ -](?:off|down)\b`
	re := regexp.MustCompile(pattern)
	alts := requiredAlternatives(pattern)
	for _, text := range []string{"pods stay UNKNOWN after the VM was shut down", "Terminating since the host was powered off", "unknown shut-down"} {
		if !re.MatchString(text) {
			t.Fatalf("%q does not match", text)
		}
		if !anyIn(alts, text) {
			t.Errorf("%q matches but holds none of %+v", text, alts)
		}
	}
}

// containsLower answers as strings.Contains(strings.ToLower(s), lit) does, ASCII or not.
func TestContainsLowerIsContainsOfTheLowerCaseText(t *testing.T) {
	texts := []string{"", "Error Syncing Pod", "error syncing pod", "ERROR", "Größe: Failed Quota: cpu", "ſtart", "KELVIN \u212a", "x"}
	lits := []string{"error", "syncing pod", "failed quota: ", "größe", "start", "k", "kelvin k", "x", "pod!"}
	for _, s := range texts {
		for _, lit := range lits {
			if got, want := containsLower(s, lit), strings.Contains(strings.ToLower(s), lit); got != want {
				t.Errorf("containsLower(%q, %q) = %v, want %v", s, lit, got, want)
			}
		}
	}
}

// A pattern indexed by alternatives still matches a text that capitalizes the message
// it quotes, as printed with its first letter lowered.
func TestAlternativesAndACapitalizedText(t *testing.T) {
	s := &Signature{ID: "t", Stage: StageTermination, Title: "t", Cause: "c", Fix: "f", Component: "c",
		Patterns: []string{`(?:shutting|turning)[ -](?:off|down)`}}
	s.Examples.Fires, s.Examples.Quiet = []string{"shutting down"}, []string{"rebooting"}
	if fe := s.compile(); fe != nil {
		t.Fatal(fe)
	}
	if s.lits[0].s != "" || len(s.alts[0]) != 2 {
		t.Fatalf("pattern literal %+v, alternatives %+v: want alternatives only", s.lits[0], s.alts[0])
	}
	for text, want := range map[string]bool{"Shutting down the node": true, "turning off": true, "Rebooting now": false} {
		if _, ok := s.match(text); ok != want {
			t.Errorf("match(%q) = %v, want %v", text, ok, want)
		}
	}
}
