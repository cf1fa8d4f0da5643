// Package rules holds podflow's diagnosis rules, one file per rule, and the registry
// that lists them.
//
// Writing a rule:
//
//   - One file, named after the ID: rule "image-pull-dns" lives in image_pull_dns.go and
//     declares `var ImagePullDNS = &analyze.Rule{...}` with its stage, title, severity,
//     documentation (meaning, "## Confirm on a live cluster", "## Fix") and Needs.
//   - Run reads facts, not raw evidence: v.PullFailures(), v.ContainerWaits(),
//     v.ContainerRuns() (a container's events, journal lines, attempts, logs, OOM kills),
//     v.SandboxFailures(), v.SchedulingFailures(), v.MountFailures(),
//     v.AdmissionRejections(), v.Evictions(), v.NodeAgent(node). Facts are built once per
//     graph from every source and hold only the pieces of kinds the rule declared; a
//     fact's subject may be partial (a pod known by name from an event, or not at all).
//     Objects the rule compares with (nodes, claims, other pods as the cluster's state)
//     it reads through the View too. structure_test.go and facts_structure_test.go fail
//     when a fact-reading rule calls a raw reader (v.EventsFor, v.JournalFor, v.Log, …).
//     Undeclared kinds return nothing and fail the tests. Optional kinds may be absent:
//     v.Has(kind) tells "no evidence" from "nothing wrong".
//   - Each analyze.Finding lists its Subjects (the pods affected first, then the owner
//     from v.Workload, the node, the service), a one-sentence Cause with concrete values,
//     Evidence citing bundle locations (obj.Loc.At("status", "conditions", i).Evidence(…),
//     event.Evidence(), entry.Evidence()), a Remediation and Confirm commands. Findings
//     that share a cause share a GroupKey and become one finding.
//   - List the pods a cause affects: the engine makes a pod's earliest-stage finding its
//     root cause and its later-stage findings consequences, through shared pods.
//   - The rule file holds the declaration, Doc, Run and finding builder only, and uses
//     no name another file of the package declares. Reasoning two rules share is a fact
//     in analyze/facts_*.go (v.PullAttemptsOf(kind), v.FailedSandboxes(),
//     v.UnscheduledPods(), analyze.NodeMismatches, …); a failure kind is a constant
//     there, computed once on the fact, that one rule claims; generic wording is in
//     internal/phrase. structure_test.go checks all three.
//   - A rule that reads a component's messages ties to the catalog's call sites of its
//     companion signatures' examples (a signature whose rule field names it); a wording
//     its classifier knows and no companion shows goes in Examples (Fires, and the near
//     misses of the same call sites in Quiet), written from the component's source, so
//     another release's wording of it carries the rule's finding (docs/signatures.md,
//     "Ties of Go rules"). TestRuleExamplesFireTheRule checks each fires and stays quiet.
//   - Add testdata/<id>/fires-*/ and testdata/<id>/quiet-*/ cases (a trimmed bundle
//     directory each), one Test<Name> line in rules_test.go, run
//     `go test ./rules -update` and read the want.golden it writes.
package rules

import "podflow.dev/podflow/analyze"

// All returns every rule, sorted by ID. The list is written by hand: adding a rule means
// adding its file, its test cases under testdata/<id>/ and one line here.
func All() []*analyze.Rule {
	return []*analyze.Rule{
		AdmissionLimitRangeViolated,
		AdmissionPodSecurity,
		AdmissionPriorityClassMissing,
		AdmissionQuotaExceeded,
		AdmissionQuotaResourcesRequired,
		AdmissionServiceAccountMissing,
		AdmissionWebhookDenied,
		AdmissionWebhookUnreachable,
		ConfigRunAsNonRoot,
		ConfigSecretKeyMissing,
		ControllerDaemonSetFailedPlacement,
		ControllerJobBackoffLimit,
		ControllerProgressDeadlineExceeded,
		ControllerReplicasZero,
		ControllerRolloutStuck,
		ControllerStatefulSetStuck,
		ImageInvalidName,
		ImageNeverPull,
		ImagePullDNS,
		ImagePullNotFound,
		ImagePullRateLimited,
		ImagePullUnauthorized,
		ImagePullX509,
		NodeNotReady,
		NodePodEvicted,
		ProbeLivenessRestarts,
		ProbeReadinessFailing,
		ProbeStartupFailing,
		RuntimeCrashExit,
		RuntimeOOMKilled,
		SandboxCreateFailed,
		SandboxImagePullFailed,
		SandboxIPExhausted,
		SandboxNetworkNotReady,
		SchedulingAffinityUnsatisfiable,
		SchedulingHostPortConflict,
		SchedulingInsufficientResources,
		SchedulingNodeSelectorMismatch,
		SchedulingTopologySpreadUnsatisfiable,
		SchedulingUntoleratedTaint,
		ServiceEndpointSliceMissing,
		ServiceNoReadyEndpoints,
		ServiceSelectorMatchesNothing,
		ServiceTargetPortMismatch,
		ServiceWithoutEndpoints,
		StartCommandNotFound,
		StartExecFormatError,
		StartInitContainerFailed,
		StartPermissionDenied,
		TerminationDeletionStalled,
		TerminationFinalizersStuck,
		TerminationGracePeriodOverrun,
		TerminationNodeLost,
		VolumeConfigMapMissing,
		VolumeCSIDriverMissing,
		VolumeMultiAttach,
		VolumeNodeAffinityConflict,
		VolumePVCUnbound,
	}
}

// ByID returns the rule with an ID, or nil.
func ByID(id string) *analyze.Rule {
	for _, r := range All() {
		if r.ID == id {
			return r
		}
	}
	return nil
}
