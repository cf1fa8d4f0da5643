package e2e

import (
	"regexp"
	"strings"
)

// redactedLines counts the redaction marks of a served log that differs from the live
// one only where collection redacted it: the served text with each mark standing for
// live text (a private key's block is several lines, its mark one) matches the
// whole live log. 0 when the logs differ otherwise.
func redactedLines(live, served []byte) int {
	marks := reRedactionMark.FindAllIndex(served, -1)
	if len(marks) == 0 {
		return 0
	}
	var pat strings.Builder
	pat.WriteString(`\A`)
	last := 0
	for _, m := range marks {
		pat.WriteString(regexp.QuoteMeta(string(served[last:m[0]])))
		// A key or certificate block is several lines under one mark; any other secret
		// stays within its line.
		if kind := string(served[m[0]:m[1]]); strings.Contains(kind, "private-key") || strings.Contains(kind, "certificate") {
			pat.WriteString(`(?s:.+?)`)
		} else {
			pat.WriteString(`[^\n]+?`)
		}
		last = m[1]
	}
	pat.WriteString(regexp.QuoteMeta(string(served[last:])))
	pat.WriteString(`\z`)
	re, err := regexp.Compile(pat.String())
	if err != nil || !re.Match(live) {
		return 0
	}
	return len(marks)
}

var reRedactionMark = regexp.MustCompile(`<redacted:[a-z0-9-]+:[0-9a-f]+>`)
