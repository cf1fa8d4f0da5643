package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// AdmissionWebhookUnreachable finds workloads whose pods the API server refuses because
// it cannot call an admission webhook whose failurePolicy is Fail.
var AdmissionWebhookUnreachable = &analyze.Rule{
	ID:       "admission-webhook-unreachable",
	Stage:    analyze.StageAdmission,
	Title:    "an admission webhook cannot be called and fails closed",
	Doc:      admissionWebhookUnreachableDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets,
			analyze.ValidatingWebhooks, analyze.MutatingWebhooks},
	},
	Run: admissionWebhookUnreachable,
}

const admissionWebhookUnreachableDoc = `The API server must call an admission webhook before it creates the workload's pods,
and the call fails: the webhook's server does not answer within timeoutSeconds
("context deadline exceeded"), nothing listens at its address ("connection refused"),
its Service has no ready endpoints, or its certificate does not verify against the
configuration's caBundle. With failurePolicy Fail (the default) the API server then
refuses the request, so the controller records FailedCreate "Internal error occurred:
failed calling webhook "NAME": failed to call webhook: ..." and no pod exists. The
webhook did not judge the pod at all: every pod its namespaceSelector covers is refused
the same way, in every namespace it selects.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get validatingwebhookconfiguration CONFIG -o yaml
    kubectl get pods,endpointslices -n WEBHOOK_NAMESPACE

## Fix

Bring the webhook's server back: its pods running and ready, its Service selecting them,
its certificate matching the caBundle, and fast enough for timeoutSeconds. While it is
down, pods can be let through by narrowing the webhook's namespaceSelector or setting
failurePolicy Ignore, after review: with Ignore, pods skip the webhook's policy whenever
it cannot be reached.
`

// The failing-closed webhook call (k8s.io/apiserver/pkg/util/webhook/error.go,
// ErrCallingWebhook.Error: "failed calling webhook %q: %v", around the dispatcher's
// "failed to call webhook: %w" from validating/dispatcher.go and mutating/dispatcher.go
// callHook, which the dispatcher returns as an internal error when failurePolicy is Fail).
var reWebhookCallFailed = regexp.MustCompile(`failed calling webhook "([^"]+)": (.+)$`)

// webhookFailure is one way a call fails, recognized by the client error the API server
// quotes (Go's net/http and crypto/x509; k8s.io/apiserver/pkg/util/proxy's service
// resolver, "no endpoints available for service %q"): what a cause says about it and
// what to fix.
type webhookFailure struct {
	re          *regexp.Regexp
	said, fixed string
	timedOut    bool
}

var webhookFailures = []webhookFailure{
	{regexp.MustCompile(`context deadline exceeded|Client\.Timeout exceeded|i/o timeout`),
		"did not answer within its timeoutSeconds", "make the webhook's server answer within timeoutSeconds (it may be down or overloaded, or unreachable from the API server: a NetworkPolicy in the webhook's namespace or a firewall between the control plane and the nodes drops the calls)", true},
	{regexp.MustCompile(`connection refused`),
		"refused the connection: nothing listens at its address", "start the webhook's server or correct the address the configuration names", false},
	{regexp.MustCompile(`no endpoints available for service`),
		"has no ready endpoints behind its Service", "make the webhook's pods run and become ready, and its Service select them", false},
	{regexp.MustCompile(`x509: |tls: `),
		"failed TLS verification", "make the server's certificate match the configuration's caBundle and the name the API server dials", false},
	{regexp.MustCompile(`no such host`),
		"has a host name that does not resolve", "correct the host name in the configuration's URL", false},
	{regexp.MustCompile(`service "[^"]+" not found`),
		"points at a Service that does not exist", "create the webhook's Service or correct the configuration's service reference", false},
}

func classifyWebhookFailure(reason string) webhookFailure {
	for _, f := range webhookFailures {
		if f.re.MatchString(reason) {
			return f
		}
	}
	return webhookFailure{said: "could not be called", fixed: "make the webhook's server reachable from the API server"}
}

func admissionWebhookUnreachable(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	key := func(m []string) string { return m[1] + "\x00" + classifyWebhookFailure(m[2]).said }
	for _, g := range v.RefusalGroups(owners, reWebhookCallFailed, "failed calling webhook", key) {
		ns, name := g.Owner.Namespace, g.Match[1]
		reason := strings.TrimPrefix(g.Match[2], "failed to call webhook: ")
		failure := classifyWebhookFailure(reason)
		evidence, who, tail, progressEv := g.Summary(owners)
		subjects := []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner)}
		hook := v.FindWebhook(name)
		said, named := failure.said, hook.Describe(name)
		if hook != nil {
			evidence = append(evidence, hook.Evidence(name))
			subjects = append(subjects, hook.Config)
			named = hook.Describe(name, "failurePolicy "+hook.FailurePolicy, fmt.Sprintf("timeoutSeconds %d", hook.Timeout))
			if failure.timedOut {
				said = fmt.Sprintf("did not answer within its %ds timeout", hook.Timeout)
			}
		}
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause: fmt.Sprintf("the API server cannot call %s: the webhook %s (%s), so the API server fails closed and refuses every pod of %s%s",
				named, said, reason, who, tail),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Fix webhook %s: %s. Until it answers, every pod it selects is refused, in namespace %s and any other it covers; "+
				"narrowing its namespaceSelector or setting failurePolicy Ignore lets pods through without its policy, after review.",
				name, failure.fixed, ns),
			Confirm:  []string{g.ConfirmEvents(), hook.Confirm()},
			GroupKey: g.Workload.String() + "\x00" + name + "\x00" + failure.said,
		})
	}
	return out
}
