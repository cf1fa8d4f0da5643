package analyze

import (
	"strings"
	"testing"
)

// A pattern's clauses are in every text it matches: each built-in pattern, on every
// example of every built-in signature and on each with its line breaks joined, as
// match tries it.
func TestRequiredClausesAreInEveryMatch(t *testing.T) {
	sigs := builtinSignatures(t)
	var texts []string
	for _, s := range sigs {
		for _, ex := range append(append([]string{}, s.Examples.Fires...), s.Examples.Quiet...) {
			texts = append(texts, ex, unwrapLines(ex), strings.ReplaceAll(ex, `\"`, `"`))
		}
	}
	clauses, matches := 0, 0
	for _, s := range sigs {
		for i, re := range s.res {
			clauses += len(s.musts[i])
			for _, text := range texts {
				if re.MatchString(text) {
					matches++
					if !allIn(s.musts[i], text) {
						t.Errorf("%s: patterns[%d] matches %q, which lacks one of %+v", s.ID, i, text, s.musts[i])
					}
				}
			}
		}
	}
	if clauses == 0 || matches == 0 {
		t.Fatalf("nothing compared: %d clauses, %d matches", clauses, matches)
	}
}

// The rate limit's URL pattern is tried only on a text that holds the status, not on
// every one that holds a URL; optional parts and literals that ignore case give none.
func TestRequiredClauses(t *testing.T) {
	pattern := `(?:[Pp]ull(?:ing)? image "(?P<image>[^"]+)"[^\n]*?)?https?://(?P<registry>[\w.-]+)/v2/[^\s"]*?:? (?P<err>429 Too Many Requests|toomanyrequests(?:: [^.:"]+)?)`
	got := requiredClauses(pattern, requiredLiteral(pattern), nil)
	var texts []string
	for _, c := range got {
		var alts []string
		for _, l := range c {
			alts = append(alts, l.s)
		}
		texts = append(texts, strings.Join(alts, "|"))
	}
	if want := "://,/v2/,429 Too Many Requests|toomanyrequests"; strings.Join(texts, ",") != want {
		t.Errorf("clauses %q, want %q", texts, want)
	}
	if got := requiredClauses(`(?i)failed (?:to pull|pulling) image`, literal{}, nil); len(got) != 0 {
		t.Errorf("clauses of a pattern that ignores case: %+v", got)
	}
}
