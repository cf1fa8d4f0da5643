package analyze

import (
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
	} {
		if got := requiredLiteral(c.pattern); got != c.want {
			t.Errorf("requiredLiteral(%q) = %+v, want %+v", c.pattern, got, c.want)
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
