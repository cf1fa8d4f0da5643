package rules

import (
	"fmt"
	"regexp"

	"podflow.dev/podflow/analyze"
)

// AdmissionWebhookDenied finds workloads whose pods an admission webhook denies.
var AdmissionWebhookDenied = &analyze.Rule{
	ID:       "admission-webhook-denied",
	Stage:    analyze.StageAdmission,
	Title:    "an admission webhook denies the workload's pods",
	Doc:      admissionWebhookDeniedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets,
			analyze.ValidatingWebhooks, analyze.MutatingWebhooks},
	},
	Run: admissionWebhookDenied,
}

const admissionWebhookDeniedDoc = `An admission webhook (a policy server the cluster's administrators registered with a
ValidatingWebhookConfiguration or MutatingWebhookConfiguration: Gatekeeper, Kyverno, an
in-house checker) looked at the workload's pods and said no, so the API server refuses
to create them. No pod exists; the controller records FailedCreate "admission webhook
"NAME" denied the request: MESSAGE" and, on a ReplicaSet, the ReplicaFailure condition.
The message is the webhook's own and usually says which policy failed and what to change.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations
    kubectl get validatingwebhookconfiguration CONFIG -o yaml

## Fix

Change the pod template to meet the policy the message names (a label, a registry, a
security setting), or ask the webhook's owners for an exception for the workload or its
namespace. Do not delete the webhook configuration to get pods through: it enforces the
cluster's policy for every namespace it selects.
`

// The webhook rejection (k8s.io/apiserver/pkg/admission/plugin/webhook/errors/
// statuserror.go, ToStatusErr: "admission webhook %q denied the request" followed by
// ": MESSAGE", ": REASON" or " without explanation").
var reWebhookDenied = regexp.MustCompile(`admission webhook "([^"]+)" denied the request(?:: (.*)| without explanation)$`)

func admissionWebhookDenied(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, reWebhookDenied, "denied the request", analyze.WholeMatch) {
		ns, name, message := g.Owner.Namespace, g.Match[1], g.Match[2]
		evidence, who, tail, progressEv := g.Summary(owners)
		subjects := []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner)}
		hook := v.FindWebhook(name)
		target := ""
		if hook != nil {
			evidence = append(evidence, hook.Evidence(name))
			subjects = append(subjects, hook.Config)
			target = " (it is called at " + hook.Target + ")"
		}
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		said, meet := " without explanation", "find out from its owners what it requires"
		if message != "" {
			said, meet = fmt.Sprintf(": %q", message), "as its message says"
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    fmt.Sprintf("%s denies every pod of %s%s%s", hook.Describe(name), who, said, tail),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Change the pod template of %s to meet the policy of webhook %s (%s), "+
				"or ask the webhook's owners%s for an exception for the workload or namespace %s; the controller retries on its own once pods are admitted.",
				g.Workload.String(), name, meet, target, ns),
			Confirm:  []string{g.ConfirmEvents(), hook.Confirm()},
			GroupKey: g.Workload.String() + "\x00" + name + "\x00" + message,
		})
	}
	return out
}
