package rules

import "testing"

// A deploy tool's output gives a rollout's outcome (past its progress deadline) and,
// before it, why its pods never became available: the scheduler's refusal. The outcome
// follows from the refusal, whatever their stages' order in the chain, so the refusal
// is the root and the deadline its consequence.
func TestARolloutDeadlineFollowsItsPodsRefusal(t *testing.T) {
	const out = `Waiting for deployment "api" rollout to finish: 0 of 2 updated replicas are available...
  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.
error: deployment "api" exceeded its progress deadline
`
	wantOneRoot(t, catalogRoots(t, map[string]string{"rollout.txt": out}), "scheduling-insufficient-resources", "Insufficient memory")

	// Alone, the outcome is all the evidence says: it stays the root.
	wantOneRoot(t, catalogRoots(t, map[string]string{"rollout.txt": `error: deployment "api" exceeded its progress deadline` + "\n"}),
		"controller-progress-deadline-exceeded", `deployment "api"`)
}
