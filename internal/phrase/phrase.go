// Package phrase holds the text helpers the standard library lacks for the sentences
// findings are made of: lists capped at a few items, quoted lists, times, label
// selectors. They know nothing of evidence; what a message means lives in analyze.
package phrase

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// QuoteJoin quotes lines and joins them: "a" and "b".
func QuoteJoin(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, " and ")
}

// LastTwo is the end of a list, at most two items.
func LastTwo(s []string) []string { return s[max(0, len(s)-2):] }

// FirstLine is the first line of s, trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// JoinCapped joins up to three items and counts the rest as more of what.
func JoinCapped(items []string, what string) string {
	const shown = 3
	if len(items) <= shown {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:shown], "; ") + fmt.Sprintf("; and %d more %s", len(items)-shown, what)
}

// ContainsAny reports whether s contains any of subs.
func ContainsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Unique drops repeated strings, keeping the first of each in order.
func Unique(in []string) []string {
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

// Stamp renders a time for a cause: RFC 3339 in UTC, "never" when unset.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// Selector renders an equality label selector as kubectl takes it: k=v pairs sorted by
// key and joined by commas.
func Selector(sel map[string]string) string {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sel[k]
	}
	return strings.Join(parts, ",")
}

// ReplaceName replaces old by new in s where old stands as a name of its own: not
// inside a longer name (a letter, digit, '-', '.' or '_' on either side).
func ReplaceName(s, old, new string) string {
	if old == "" {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		if (i > 0 && nameByte(s[i-1])) || (end < len(s) && nameByte(s[end])) {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(new)
		s = s[end:]
	}
}

func nameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
