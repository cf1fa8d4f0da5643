package rules

import (
	"fmt"
	"regexp"

	"podflow.dev/podflow/analyze"
)

// AdmissionServiceAccountMissing finds workloads whose pods name a ServiceAccount that
// does not exist.
var AdmissionServiceAccountMissing = &analyze.Rule{
	ID:       "admission-serviceaccount-missing",
	Stage:    analyze.StageAdmission,
	Title:    "the workload's ServiceAccount does not exist",
	Doc:      admissionServiceAccountMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.ServiceAccounts},
	},
	Run: admissionServiceAccountMissing,
}

const admissionServiceAccountMissingDoc = `The pod template names a ServiceAccount (spec.serviceAccountName) that does not exist
in the namespace, so the ServiceAccount admission plugin refuses every pod: the
controller records FailedCreate "pods ... is forbidden: error looking up service account
NAMESPACE/NAME: serviceaccount "NAME" not found" and, on a ReplicaSet, the
ReplicaFailure condition. No pod exists. Usually the ServiceAccount belongs to another
manifest or Helm release that was not applied (or was applied to another namespace). A
template without serviceAccountName runs as "default", which the controller-manager
creates in every namespace; if that one is missing, the serviceaccount controller is not
running.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get serviceaccounts -n NAMESPACE

## Fix

Create the ServiceAccount (kubectl create serviceaccount -n NAMESPACE NAME) with the
RBAC bindings the workload needs, or correct serviceAccountName in the pod template.
The controller retries on its own and creates the pods once it exists.
`

// The ServiceAccount admission error (plugin/pkg/admission/serviceaccount/admission.go,
// Admit and Validate: "error looking up service account %s/%s: %v" around
// getServiceAccount's NotFound, `serviceaccount "NAME" not found`).
var reServiceAccountMissing = regexp.MustCompile(`error looking up service account ([^/\s]+)/([^:\s]+): (serviceaccount "[^"]+" not found)`)

func admissionServiceAccountMissing(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, reServiceAccountMissing, "error looking up service account", func(m []string) string { return m[2] }) {
		ns, name := g.Match[1], g.Match[2]
		if v.ServiceAccount(ns, name) != nil {
			// It exists now: the controller's next attempt succeeds.
			continue
		}
		evidence, who, tail, progressEv := g.Summary(owners)
		evidence = append(evidence, owners.TemplateFieldEvidence(g.Owner, "serviceAccountName",
			"pod template sets serviceAccountName "+name, "pod template sets no serviceAccountName, so its pods run as default")...)
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		why := fmt.Sprintf("the pods run as ServiceAccount %s/%s, which does not exist (%s)", ns, name, g.Match[3])
		fix := fmt.Sprintf("Create ServiceAccount %s in namespace %s (kubectl create serviceaccount -n %s %s) with the RBAC bindings the workload needs, "+
			"or correct serviceAccountName in the template of %s; the controller retries on its own once it exists.", name, ns, ns, name, g.Workload.String())
		if name == "default" {
			why += "; the controller-manager's serviceaccount controller creates it in every namespace, so that controller is not running or cannot write"
			fix = "Check that kube-controller-manager runs with the serviceaccount controller enabled and can create ServiceAccounts in namespace " + ns +
				"; it creates default on its own, and the pods follow."
		}
		out = append(out, analyze.Finding{
			Subjects:    []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner), {Kind: "ServiceAccount", Namespace: ns, Name: name}},
			Cause:       fmt.Sprintf("ServiceAccount admission refuses every pod of %s: %s%s", who, why, tail),
			Evidence:    evidence,
			Remediation: fix,
			Confirm:     []string{g.ConfirmEvents(), analyze.Command("kubectl get serviceaccounts -n %s", ns)},
			GroupKey:    g.Workload.String() + "\x00" + name,
		})
	}
	return out
}
