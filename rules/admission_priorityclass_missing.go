package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"podflow.dev/podflow/analyze"
)

// AdmissionPriorityClassMissing finds workloads whose pods name a PriorityClass that
// does not exist.
var AdmissionPriorityClassMissing = &analyze.Rule{
	ID:       "admission-priorityclass-missing",
	Stage:    analyze.StageAdmission,
	Title:    "the workload's PriorityClass does not exist",
	Doc:      admissionPriorityClassMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.PriorityClasses},
	},
	Run: admissionPriorityClassMissing,
}

const admissionPriorityClassMissingDoc = `The pod template names a PriorityClass (spec.priorityClassName) that does not exist
in the cluster, so the Priority admission plugin refuses every pod: the controller
records FailedCreate "pods ... is forbidden: no PriorityClass with name NAME was found"
and, on a ReplicaSet, the ReplicaFailure condition. No pod exists. PriorityClasses are
cluster-scoped; usually the class comes with a chart or platform component that is not
installed on this cluster, or its name is misspelt.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get priorityclasses

## Fix

Create the PriorityClass (with the value the platform's owners choose for it), or set
priorityClassName in the pod template to one that exists (kubectl get priorityclasses).
The controller retries on its own and creates the pods once the class exists.
`

// The Priority admission error (plugin/pkg/admission/priority/admission.go,
// getPriorityClass: "no PriorityClass with name %v was found").
var rePriorityClassMissing = regexp.MustCompile(`no PriorityClass with name (\S+) was found`)

func admissionPriorityClassMissing(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var existing []string
	exists := map[string]bool{}
	for _, pc := range v.PriorityClasses() {
		existing = append(existing, pc.Obj.Name)
		exists[pc.Obj.Name] = true
	}
	sort.Strings(existing)
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, rePriorityClassMissing, "no PriorityClass", analyze.WholeMatch) {
		name := g.Match[1]
		if exists[name] {
			// It exists now: the controller's next attempt succeeds.
			continue
		}
		evidence, who, tail, progressEv := g.Summary(owners)
		evidence = append(evidence, owners.TemplateFieldEvidence(g.Owner, "priorityClassName",
			"pod template sets priorityClassName "+name, "pod template sets no priorityClassName")...)
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		choices := ""
		if len(existing) > 0 {
			choices = " (the cluster has " + strings.Join(existing, ", ") + ")"
		}
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner), {Kind: "PriorityClass", Name: name}},
			Cause:    fmt.Sprintf("Priority admission refuses every pod of %s: the pods name PriorityClass %s, which does not exist in the cluster%s", who, name, tail),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Create PriorityClass %s with the value the cluster's owners choose, or set priorityClassName in the template of %s to a class that exists%s; "+
				"the controller retries on its own once it resolves.", name, g.Workload.String(), choices),
			Confirm:  []string{g.ConfirmEvents(), "kubectl get priorityclasses"},
			GroupKey: g.Workload.String() + "\x00" + name,
		})
	}
	return out
}
