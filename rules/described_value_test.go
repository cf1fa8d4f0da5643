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

// A prose reading of an image's failure quotes the line that names the image, since the
// fix changes it, even when the sentences that name the failure do not.
func TestProseReadingOfAnImageQuotesTheImage(t *testing.T) {
	text := "Looks like the last commit changed the imageTag to a non-existent version of the concourse image.\n" +
		"The pods never start since the registry has no such tag and the manifest is unknown.\n\n" +
		"```\nFailed to pull image \"concourse/concourse:8.4.1\": rpc error: code = Unknown desc = Error reading manifest 8.4.1\n```\n"
	rs := roots(analyzePaste(t, map[string]string{"ticket.txt": text}))
	if len(rs) == 0 || rs[0].Stage != "image" || !strings.Contains(rs[0].Cause, "concourse/concourse:8.4.1") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want an image-stage root whose cause quotes the image")
	}
}
