package e2e

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// compareLog: a log read while it grows is a prefix of the later read, so serve's must
// lie between the two live reads. A container the kubelet restarts (a liveness kill, a
// crash loop) may start a new instance between the reads and the collection: its log
// then begins again, so serve's is a prefix of either live read, or extends one.
func compareLog(l1, l2, s []byte) string {
	switch {
	case bytes.Equal(s, l1) || bytes.Equal(s, l2):
		return ""
	case bytes.HasPrefix(s, l1) && bytes.HasPrefix(l2, s):
		return ""
	case len(s) > 0 && (bytes.HasPrefix(l1, s) || bytes.HasPrefix(l2, s) || bytes.HasPrefix(s, l2)):
		return ""
	}
	for _, l := range [][]byte{l1, l2} {
		if n := redactedLines(l, s); n > 0 {
			return fmt.Sprintf("redacted: %d secret(s) of the log replaced", n)
		}
	}
	return fmt.Sprintf("body: live %d bytes %q, serve %d bytes %q", len(l1), clip(l1), len(s), clip(s))
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

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
