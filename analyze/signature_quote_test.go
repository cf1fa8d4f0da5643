package analyze

import (
	"strings"
	"testing"
)

// A signature's cause ends with the component's own words it matched when it does
// not already hold them: the values they print (a path, an API version) are read as
// printed. A match the cause holds, a very short one and one too long to quote whole
// change nothing.
func TestACauseQuotesTheMatchedWords(t *testing.T) {
	const cause = "the container may not change the owner of /data (Operation not permitted)"
	got := quoteMatch(cause, "chown: /data: Operation not permitted", "chown: ")
	if !strings.HasSuffix(got, ": “chown: /data: Operation not permitted”") {
		t.Errorf("not quoted: %q", got)
	}
	for _, m := range []string{"the owner of  /data", "chown", strings.Repeat("x", quoteMaxRunes+1)} {
		if got := quoteMatch(cause, m, m[:2]); got != cause {
			t.Errorf("%q: cause changed to %q", m, got)
		}
	}
	// A long match is quoted by the component's words before its first value.
	long := `Failed to execute iptables-restore" err=<exit status 2: ` + strings.Repeat("iptables-restore output ", 10)
	got = quoteMatch(cause, long, `Failed to execute iptables-restore" err=<`)
	if !strings.HasSuffix(got, ": “Failed to execute iptables-restore …”") {
		t.Errorf("long match: %q", got)
	}
}
