package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// AdmissionQuotaResourcesRequired finds workloads whose pods a ResourceQuota refuses
// because their containers do not state the requests or limits the quota tracks.
var AdmissionQuotaResourcesRequired = &analyze.Rule{
	ID:       "admission-quota-resources-required",
	Stage:    analyze.StageAdmission,
	Title:    "a ResourceQuota refuses pods that do not state requests or limits",
	Doc:      admissionQuotaResourcesRequiredDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.ResourceQuotas},
	},
	Run: admissionQuotaResourcesRequired,
}

const admissionQuotaResourcesRequiredDoc = `A ResourceQuota in the namespace tracks cpu or memory (requests.cpu, limits.memory,
...), and a quota that tracks a compute resource requires every container of every new
pod to state it. The workload's containers do not, so the API server refuses every pod,
however much room the quota has: the controller records FailedCreate "pods ... is
forbidden: failed quota: NAME: must specify limits.memory for: app" and, on a
ReplicaSet, the ReplicaFailure condition. No pod exists to inspect. The refusal lasts
until the template changes or the namespace gets defaults.

## Confirm on a live cluster

    kubectl describe resourcequota -n NAMESPACE
    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get limitrange -n NAMESPACE

## Fix

Set the named requests and limits on every container (and init container) of the pod
template, or give the namespace a LimitRange whose defaults (default, defaultRequest)
fill them in for containers that do not state them.
`

// The quota admission error for a pod that does not state what a quota tracks
// (k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, checkRequest:
// "failed quota: %s: %v" around pkg/quota/v1/evaluator/core/pods.go
// podEvaluator.Constraints' "must specify %s", a "resource for: c1,c2; ..." list).
var (
	reQuotaMustSpecify  = regexp.MustCompile(`[Ff]ailed quota: ([^:\s]+): must specify (.+)$`)
	reMustSpecifyMissed = regexp.MustCompile(`([a-z0-9./-]+) for: ([^;]+)`)
)

func admissionQuotaResourcesRequired(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, reQuotaMustSpecify, "failed quota", analyze.WholeMatch) {
		ns := g.Owner.Namespace
		name, missing := g.Match[1], strings.TrimSpace(g.Match[2])
		them := "them"
		if len(reMustSpecifyMissed.FindAllString(missing, -1)) == 1 {
			them = "it"
		}
		quotaRef := analyze.ObjectRef{Kind: "ResourceQuota", Namespace: ns, Name: name}
		evidence, who, tail, progressEv := g.Summary(owners)
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		if quota := v.ResourceQuota(ns, name); quota != nil {
			quotaRef = quota.Ref()
			if len(quota.Obj.Status.Hard) > 0 {
				evidence = append(evidence, quota.Loc.At("status", "hard").Evidence(
					fmt.Sprintf("quota %s tracks %s", name, analyze.ResourceText("", quota.Obj.Status.Hard)), v.CollectedAt()))
			}
		}
		evidence = append(evidence, owners.TemplateResourceEvidence(g.Owner)...)
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner), quotaRef},
			Cause: fmt.Sprintf("ResourceQuota %s/%s refuses the pods of %s: the quota tracks %s, so every container must set %s, and the pod template does not (must specify %s)%s",
				ns, name, who, missingResources(missing), them, missing, tail),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Set %s on the named containers in the template of %s, or give namespace %s a LimitRange with defaults for them.",
				missingResources(missing), g.Workload.String(), ns),
			Confirm: []string{
				analyze.Command("kubectl describe resourcequota -n %s %s", ns, name),
				g.ConfirmEvents(),
			},
			GroupKey: g.Workload.String() + "\x00" + name + "\x00" + missing,
		})
	}
	return out
}

// missingResources lists the resources of a "must specify" message: "limits.cpu for:
// web; requests.memory for: web" → "limits.cpu, requests.memory".
func missingResources(missing string) string {
	var names []string
	for _, m := range reMustSpecifyMissed.FindAllStringSubmatch(missing, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		return missing
	}
	return strings.Join(names, ", ")
}
