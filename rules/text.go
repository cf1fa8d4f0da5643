package rules

import (
	"fmt"
	"strings"
)

// Text helpers the standard library lacks, for the sentences findings are made of.

// quoteJoin quotes lines and joins them: "a" and "b".
func quoteJoin(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, " and ")
}

// lastTwo is the end of a list, at most two items.
func lastTwo(s []string) []string { return s[max(0, len(s)-2):] }

// firstLine is the first line of s, trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// joinCapped joins up to three items and counts the rest as more of what.
func joinCapped(items []string, what string) string {
	const shown = 3
	if len(items) <= shown {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:shown], "; ") + fmt.Sprintf("; and %d more %s", len(items)-shown, what)
}

// containsAny reports whether s contains any of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// uniqueStrings drops repeated strings, keeping the first of each in order.
func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
