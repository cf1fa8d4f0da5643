package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// AdmissionQuotaExceeded finds workloads whose pods a ResourceQuota refuses because the
// quota is used up.
var AdmissionQuotaExceeded = &analyze.Rule{
	ID:       "admission-quota-exceeded",
	Stage:    analyze.StageAdmission,
	Title:    "a ResourceQuota refuses the workload's pods",
	Doc:      admissionQuotaExceededDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.ResourceQuotas},
	},
	Run: admissionQuotaExceeded,
}

const admissionQuotaExceededDoc = `The API server's ResourceQuota admission refused to create the workload's pods, so
they do not exist at all: there is no Pending pod to look at, only the controller's
FailedCreate event ("exceeded quota: NAME, requested: ..., used: ..., limited: ...")
and, on a ReplicaSet, the ReplicaFailure condition. The namespace's quota is used up:
the pod's requests would push usage past a hard limit. The controller keeps retrying
and succeeds as soon as there is room. (A quota that refuses pods for not stating
requests or limits at all is admission-quota-resources-required.)

## Confirm on a live cluster

    kubectl describe resourcequota -n NAMESPACE
    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get rs -n NAMESPACE -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions}{"\n"}{end}'

## Fix

Raise the quota's hard limit, lower the pods' requests, or free quota by scaling down
or deleting other workloads in the namespace.
`

// The quota admission error (k8s.io/apiserver/pkg/admission/plugin/resourcequota/
// controller.go, checkRequest: "exceeded quota: %s, requested: %s, used: %s, limited: %s"
// with prettyPrint's "name=quantity,..." lists).
var reQuotaExceeded = regexp.MustCompile(`[Ee]xceeded quota: ([^,\s]+), requested: (\S+), used: (\S+), limited: (\S+)`)

func admissionQuotaExceeded(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	// One group per owner and quota; the latest refusal has the latest numbers.
	for _, g := range v.RefusalGroups(owners, reQuotaExceeded, "exceeded quota", func(m []string) string { return m[1] }) {
		out = append(out, quotaFinding(v, owners, g))
	}
	return out
}

func quotaFinding(v *analyze.View, owners *analyze.PodOwners, g *analyze.RefusalGroup) analyze.Finding {
	ns := g.Owner.Namespace
	name, requested, used, limited := g.Match[1], g.Match[2], g.Match[3], g.Match[4]
	quota := v.ResourceQuota(ns, name)
	quotaRef := analyze.ObjectRef{Kind: "ResourceQuota", Namespace: ns, Name: name}
	if quota != nil {
		quotaRef = quota.Ref()
	}
	evidence, who, tail, progressEv := g.Summary(owners)
	if progressEv != nil {
		evidence = append(evidence, *progressEv)
	}
	usage, usageEv := quotaUsage(v, quota, limited, used)
	if usageEv != nil {
		evidence = append(evidence, *usageEv)
	}
	evidence = append(evidence, owners.TemplateResourceEvidence(g.Owner)...)
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner), quotaRef},
		Cause: fmt.Sprintf("ResourceQuota %s/%s refuses the pods of %s: each new pod would add %s but the quota has used %s%s",
			ns, name, who, listText(requested), usage, tail),
		Evidence: evidence,
		Remediation: fmt.Sprintf("Raise the hard limit of ResourceQuota %s for %s (kubectl edit resourcequota -n %s %s), lower the requests of %s, "+
			"or free quota by scaling down other workloads in namespace %s; the controller retries on its own once there is room.",
			name, resourceNames(limited), ns, name, g.Workload.String(), ns),
		Confirm: []string{
			analyze.Command("kubectl describe resourcequota -n %s %s", ns, name),
			g.ConfirmEvents(),
		},
		GroupKey: g.Workload.String() + "\x00" + name + "\x00",
	}
}

// quotaUsage describes used against hard for each exceeded resource, from the quota's
// status when the bundle has it, else from the refusal message.
func quotaUsage(v *analyze.View, q *analyze.ResourceQuota, limitedList, usedList string) (string, *analyze.Evidence) {
	limited := parseList(limitedList)
	used := parseList(usedList)
	names := make([]string, 0, len(limited))
	for _, kv := range limited {
		names = append(names, kv[0])
	}
	var parts []string
	if q == nil {
		for i, name := range names {
			u := ""
			if i < len(used) {
				u = used[i][1]
			}
			parts = append(parts, fmt.Sprintf("%s of its %s %s", u, limited[i][1], name))
		}
		// The refusal's own words follow, as a ticket quotes them.
		return strings.Join(parts, ", ") + " (when the pod was refused: used: " + usedList + ", limited: " + limitedList + ")", nil
	}
	for _, name := range names {
		u := analyze.Quantity(q.Obj.Status.Used, corev1.ResourceName(name))
		h := analyze.Quantity(q.Obj.Status.Hard, corev1.ResourceName(name))
		parts = append(parts, fmt.Sprintf("%s of its %s %s", u.String(), h.String(), name))
	}
	text := strings.Join(parts, ", ")
	loc := q.Loc.At("status")
	ev := loc.Evidence(fmt.Sprintf("quota %s: used %s", q.Obj.Name, text), v.CollectedAt())
	return text, &ev
}

// parseList splits "a=1,b=2" into pairs.
func parseList(s string) [][2]string {
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		k, val, ok := strings.Cut(part, "=")
		if ok {
			out = append(out, [2]string{k, val})
		}
	}
	return out
}

func listText(s string) string { return strings.ReplaceAll(s, ",", ", ") }

func resourceNames(list string) string {
	var names []string
	for _, kv := range parseList(list) {
		names = append(names, kv[0])
	}
	return strings.Join(names, ", ")
}
