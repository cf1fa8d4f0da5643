package rules

import (
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
		t.Run(c.want, func(t *testing.T) {
			wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": c.line + "\n"}), "scheduling-insufficient-resources", c.want)
		})
	}
}
