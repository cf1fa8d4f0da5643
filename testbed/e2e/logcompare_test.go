package e2e

import (
	"strings"
	"testing"
)

// The comparison accepts a served log that differs from the live one only where
// collection put redaction marks, including a several-line secret under one mark.
func TestRedactedLines(t *testing.T) {
	live := "starting\npassword=PFCANARY-1\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\nready\n"
	cases := []struct {
		served string
		want   int
	}{
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n<redacted:private-key:2db540>\nready\n", 2},
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n<redacted:private-key:2db540>\nready, changed\n", 0},
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n", 0},
		{live, 0},
	}
	for _, c := range cases {
		if got := redactedLines([]byte(live), []byte(c.served)); got != c.want {
			t.Errorf("redactedLines(%q) = %d, want %d", c.served, got, c.want)
		}
	}
}

// A served log lies between the two live reads; a restarted container's log begins
// again, so serve's may be a prefix of either read. Anything else is a difference.
func TestCompareLog(t *testing.T) {
	cases := []struct {
		name, l1, l2, served string
		same                 bool
	}{
		{"equal to the first read", "a\nb\n", "a\nb\nc\n", "a\nb\n", true},
		{"between the reads", "a\n", "a\nb\nc\n", "a\nb\n", true},
		{"restarted before collection", "started\nstalled\n", "started\nstalled\n", "started\n", true},
		{"restarted after collection", "started\n", "started\n", "started\nstalled\n", true},
		{"another text", "started\nstalled\n", "started\nstalled\n", "stopped\n", false},
		{"empty where the live log is not", "started\n", "started\n", "", false},
		{"redacted", "password=PFCANARY-1\n", "password=PFCANARY-1\n", "password=<redacted:credential-assignment:c6e060>\n", true},
	}
	for _, c := range cases {
		diff := compareLog([]byte(c.l1), []byte(c.l2), []byte(c.served))
		if (diff == "" || strings.HasPrefix(diff, "redacted:")) != c.same {
			t.Errorf("%s: compareLog = %q, want same=%v", c.name, diff, c.same)
		}
	}
}
