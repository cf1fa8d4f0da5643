package rules

import (
	"strings"
	"testing"
)

// A reporter often says what they think the cause is next to the message. When the
// root's remedy speaks of the same things, the root names that sentence: the reader
// checks it first. A guess the remedy does not share stays out.
func TestRootNamesTheReportersSuspicionItsRemedyShares(t *testing.T) {
	refusal := "```Internal error occurred: failed calling webhook \"policy.example.io\": Post https://policy-webhook.guard.svc:443/validate?timeout=10s: context deadline exceeded```\n"
	cases := []struct {
		name, sentence string
		named          bool
	}{
		{"shared", "I think this has to do with the network policy we have in the guard namespace.", true},
		{"unrelated", "I think this started after we moved the office to the new building last week.", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := catalogRoots(t, map[string]string{"message.txt": "Installing the policy chart fails with this error\n\n" + refusal + "\n" + c.sentence + "\n"})
			cause := rootCauseHas(t, rs, "policy.example.io")
			if got := strings.Contains(cause, "the ticket suspects"); got != c.named {
				t.Errorf("cause names a suspicion: %v, want %v: %s", got, c.named, cause)
			}
		})
	}
}

// The amount a reporter says the pod requests ("requesting `435m` of CPU") is what the
// scheduler could not place: a scheduling root names it.
func TestSchedulingRootNamesTheRequestTheTextStates(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": "The new pods stay Pending:\n\n" +
		"  Warning  FailedScheduling  13s (x5 over 26s)  default-scheduler  0/1 nodes are available: 1 Insufficient cpu.\n\n" +
		"It looks like the service is requesting `750m` of CPU out of the box.\n"})
	rootCauseHas(t, rs, "Insufficient cpu", "cpu 750m")
}

// The node label a reporter says the pod's nodeSelector asks for is what no node
// carries: a scheduling root names it.
func TestSchedulingRootNamesTheNodeSelectorTheTextStates(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": "The manifest's nodeSelector is example.com/pool while our nodes are labelled otherwise. " +
		"The pods stay Pending with: 0/3 nodes are available: 3 node(s) didn't match node selector.\n"})
	rootCauseHas(t, rs, "nodeSelector example.com/pool")
}
