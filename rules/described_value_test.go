package rules

import (
	"strings"
	"testing"
)

// A prose reading quotes the sentences that share the most with the failure it names
// and, when neither states a value, the best one that does: the limit, port or path
// the fix changes is what the reader needs from the ticket.
func TestProseReadingQuotesTheSentenceWithTheValue(t *testing.T) {
	text := "Our worker pod is OOMKilled by the kernel again and again, and each time the container restarts.\n" +
		"The container is killed with exit code 137 and the pod shows OOMKilled as the last state reason.\n" +
		"The chart sets its memory limit to `768Mi` since the last release.\n"
	rs := roots(analyzePaste(t, map[string]string{"ticket.txt": text}))
	if len(rs) != 1 || rs[0].Rule != "runtime-oom-killed" || !strings.Contains(rs[0].Cause, "768Mi") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want one runtime-oom-killed root whose cause quotes the sentence with the limit")
	}
}
