package analyze

import (
	"strings"
	"testing"
)

// "No problems" is said only when every pod positively shows health.
func TestHeadlineNeverSaysNoProblemsWithoutHealth(t *testing.T) {
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{Pods: 3, healthy: 3}, "No problems found in 3 pod(s)"},
		{Summary{Pods: 0}, "No finding, and no pod in the evidence"},
		{Summary{Pods: 2, healthy: 1}, "No finding, but only 1 of 2 pod(s) positively show health"},
		{Summary{Pods: 2, Findings: 1, RootCauses: 1, PodsWithFindings: 1}, "1 root cause(s), 1 finding(s) in all, affecting 1 of 2 pod(s)"},
		// Pods known only from events or a paste are not counted against the pod list.
		{Summary{Pods: 0, Findings: 3, RootCauses: 3, PodsWithFindings: 3}, "3 root cause(s), 3 finding(s) in all, affecting 3 pod(s), 3 of them known only from events, logs or text"},
	} {
		if got := headline(&Report{Summary: tc.s}); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want %q...", tc.s, got, tc.want)
		}
	}
}
