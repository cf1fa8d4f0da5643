package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestVendorSignatureExample runs `podflow signatures test` on the vendor example of
// docs/examples/vendor-signatures: its incident is diagnosed by its signature (and not
// without it), and broken copies of the signature file are refused with the file, line
// and field, or fail the incident.
func TestVendorSignatureExample(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "examples", "vendor-signatures")
	sigs := filepath.Join(dir, "signatures.yaml")
	incidents := filepath.Join(dir, "incidents")

	code, out, errOut := runPodflow(t, "signatures", "test", incidents, "--signatures", sigs)
	if code != exitOK {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitOK, out, errOut)
	}
	for _, want := range []string{
		"ok  001-acme-attach-quota-team-a",
		"got   volume acme-volume-attach-quota-exceeded: the Acme volume operator will not attach volume vol-0abc123",
		"fired acme-volume-attach-quota-exceeded at describe.txt:22",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The built-in catalog alone does not know the vendor's message.
	if code, out, _ := runPodflow(t, "signatures", "test", incidents); code != exitFindings || !strings.Contains(out, "FAIL  001-acme-attach-quota-team-a") {
		t.Errorf("without the vendor signatures: exit %d, want %d and a FAIL line:\n%s", code, exitFindings, out)
	}

	data, err := os.ReadFile(sigs)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	lineOf := func(s string) string {
		i := strings.Index(text, s)
		if i < 0 {
			t.Fatalf("signatures.yaml lacks %q", s)
		}
		return strconv.Itoa(strings.Count(text[:i], "\n") + 1)
	}
	// Each broken copy is refused, naming the file, the line of the field and the field.
	for _, tc := range []struct {
		name, from, to string
		line, msg      string // the error is FILE:LINE: MSG, LINE that of the text line
	}{
		{"misspelled field", "  fix: >-", "  fixx: >-", "  fix: >-", "field fixx: unknown field"},
		{"pattern that does not compile", "(?P<volume>vol-[0-9a-f]+)", "(?P<volume>vol-[0-9a-f]+", "  patterns:", "field patterns[0]: error parsing regexp"},
		{"placeholder with no capture", "{tenant} already", "{team} already", "  cause:", "field cause: {team} is not a capture"},
		{"pattern that no longer matches its example", "volumes attached'", "volumes in use'", "  examples:", "field examples.fires[0]: no pattern matches it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(text, tc.from) {
				t.Fatalf("signatures.yaml lacks %q", tc.from)
			}
			broken := filepath.Join(t.TempDir(), "signatures.yaml")
			if err := os.WriteFile(broken, []byte(strings.Replace(text, tc.from, tc.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runPodflow(t, "signatures", "test", incidents, "--signatures", broken)
			if code != exitError {
				t.Errorf("exit %d, want %d:\n%s%s", code, exitError, out, errOut)
			}
			if want := broken + ":" + lineOf(tc.line) + ": " + tc.msg; !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		})
	}

	// A signature that loads but whose cause no longer says what the incident
	// established fails the incident.
	broken := filepath.Join(t.TempDir(), "signatures.yaml")
	if err := os.WriteFile(broken, []byte(strings.Replace(text, "already has {used} of its {limit} attached volumes", "is over its quota", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runPodflow(t, "signatures", "test", incidents, "--signatures", broken)
	if code != exitFindings || !strings.Contains(out, "FAIL  001-acme-attach-quota-team-a") || !strings.Contains(out, "the cause does not mention 20 of its 20") {
		t.Errorf("cause without the quota: exit %d, want %d and the missing mention:\n%s", code, exitFindings, out)
	}
}
