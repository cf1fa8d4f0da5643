package rules

import (
	"strings"
	"testing"
)

// The scheduler's FitError message as other programs quote it: inside parentheses
// (a CI system's "There are no nodes that your pod can schedule to (0/57 nodes are
// available: …)"), with the sentence's final period. The resource the cause names is
// the scheduler's, without the punctuation around it.
func TestSchedulerMessageInParenthesesNamesTheResource(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"There are no nodes that your pod can schedule to - check your requests (0/12 nodes are available: 4 Insufficient memory, 8 Insufficient cpu.)", "Insufficient cpu)"},
		{"Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 Insufficient memory.", "Insufficient memory)"},
	} {
		roots := catalogRoots(t, map[string]string{"events.txt": c.line + "\n"})
		if len(roots) != 1 || roots[0].Rule != "scheduling-insufficient-resources" || !strings.Contains(roots[0].Cause, c.want) {
			for _, f := range roots {
				t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
			}
			t.Errorf("%q: want one scheduling-insufficient-resources root whose cause holds %q", c.line, c.want)
		}
	}
}
