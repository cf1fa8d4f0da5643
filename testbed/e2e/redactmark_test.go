package e2e

import "testing"

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
