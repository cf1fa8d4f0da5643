package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// An event's message that a terminal wrapped, a word cut across two lines, is read
// whole: the sandbox failure's part is the CNI setup its runtime names, not the
// container runtime. The rows follow kubectl's describe Events and get events columns;
// the wrap is what a terminal of the output's width does to them.
func TestTerminalWrappedEventMessage(t *testing.T) {
	const msg = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "3f9e0c41d2b7": plugin type="bridge" failed (add): failed to find plugin "host-local" in path [/opt/cni/bin]`
	// wrap cuts a line at width, as a terminal does.
	wrap := func(line string, width int) string {
		var b strings.Builder
		for len(line) > width {
			b.WriteString(line[:width] + "\n")
			line = line[width:]
		}
		return b.String() + line + "\n"
	}
	row := "  Warning  FailedCreatePodSandBox  41s (x4 over 2m)  kubelet  " + msg
	describe := "Name:         api-7d9f8-k2x4q\nNamespace:    shop\nStatus:       Pending\nEvents:\n" +
		"  Type     Reason                  Age              From     Message\n" +
		"  ----     ------                  ----             ----     -------\n" + wrap(row, 120)
	getEvents := wrap("LAST SEEN   TYPE      REASON                   OBJECT                    MESSAGE", 200) +
		wrap("41s         Warning   FailedCreatePodSandBox   pod/api-7d9f8-k2x4q       "+msg, 100)
	for _, c := range []struct{ name, text string }{
		{"describe events rows alone", wrap(row, 128)},
		{"describe with its events table", describe},
		{"kubectl get events", getEvents},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := catalogRoots(t, map[string]string{"events.txt": c.text})
			if len(root) != 1 {
				t.Fatalf("want one root, got %v", ruleIDs(root))
			}
			cause := root[0].Cause
			if root[0].Stage != analyze.StageSandbox || !strings.Contains(cause, "host-local") || strings.Contains(cause, "container runtime") ||
				!strings.Contains(cause, "plugin") {
				t.Errorf("the wrapped message is not read whole: %s %s: %s", root[0].Rule, root[0].Stage, cause)
			}
		})
	}
}

// A message a reporter's editor wrapped by words (each line broken before the word that
// did not fit, so the lines end ragged) reads as one: the refusal's subject on the first
// line and its reason on the next are one admission error. (Lines that all end at one
// width are a terminal's cut, joined where it cut: TestTerminalWrappedEventMessage.)
func TestMessageWrappedByWords(t *testing.T) {
	const text = `Error creating: pods "web-6d4cf56db6-" is forbidden: unable to validate
against any security context constraint: [provider "anyuid": Forbidden: not
usable by user or serviceaccount,
spec.containers[0].securityContext.runAsUser: Invalid value: 0: must be in
the ranges: [1000680000, 1000689999]]
`
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": text}), "admission-scc-denied", "web-6d4cf56db6-", "1000680000")
}
