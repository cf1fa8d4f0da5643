package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ImagePullUnauthorized finds image pulls the registry refused for want of credentials.
var ImagePullUnauthorized = &analyze.Rule{
	ID:       "image-pull-unauthorized",
	Stage:    analyze.StageImage,
	Title:    "registry rejected the pull credentials",
	Doc:      imagePullUnauthorizedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.Secrets, analyze.ServiceAccounts,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullUnauthorized,
}

const imagePullUnauthorizedDoc = `The registry refused to serve the image: it answered 401 Unauthorized or 403 Forbidden
("failed to authorize", "authorization failed", "pull access denied", "no basic auth
credentials"). The node pulled with the credentials of the pod's imagePullSecrets (and
the node's own credential providers); either none applied to this registry or they were
wrong or expired. Docker Hub answers "pull access denied, repository does not exist or
may require authorization" for a private repository and for one that does not exist
alike; for a name of its official library (no user or organization, "controller:latest"),
which is public, it means the repository does not exist, and image-pull-not-found
reports it. The container waits in ErrImagePull, then ImagePullBackOff.

The kubelet only uses pull secrets of type kubernetes.io/dockerconfigjson (key
.dockerconfigjson) or kubernetes.io/dockercfg (key .dockercfg) in the pod's namespace;
a missing one is reported by a FailedToRetrieveImagePullSecret event.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.imagePullSecrets}'
    kubectl get secret -n NAMESPACE SECRET -o jsonpath='{.type}'
    kubectl get secret -n NAMESPACE SECRET -o jsonpath='{.data.\.dockerconfigjson}' | base64 -d | grep -o '"auths":{"[^"]*"'

## Fix

Create a pull secret with credentials for the registry host
(kubectl create secret docker-registry NAME --docker-server=HOST ...) in the pod's
namespace and reference it in the pod template's imagePullSecrets or in its
ServiceAccount's imagePullSecrets (new pods pick those up). Renew expired tokens; check
that the account may read the repository.
`

// Where the refusal is said, in the order to quote it: the HTTP status line first.
var reRefusal = regexp.MustCompile(`(?i)(\d{3} (?:Unauthorized|Forbidden)|pull access denied[^"\n]*|no basic auth credentials|requested access to the resource is denied|authentication required|authorization failed|unauthorized[^"\n]*)`)

func imagePullUnauthorized(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range v.PullAttemptsOf(analyze.PullErrorUnauthorized) {
		out = append(out, unauthorizedFinding(v, a))
	}
	return out
}

func unauthorizedFinding(v *analyze.View, a analyze.PullAttempt) analyze.Finding {
	pod := a.Pod.Obj
	host := analyze.RegistryHost(a.Image)
	said := reRefusal.FindString(a.Text)
	if said == "" {
		said = "unauthorized"
	}
	evidence := a.Evidence(said)
	secrets, secretEvidence := v.PullSecrets(a)
	evidence = append(evidence, secretEvidence...)
	cause := fmt.Sprintf("registry %s refused to serve image %q to container %s (%s): %s",
		host, a.Image, a.Container.Name, said, describePullSecrets(v, a.Pod, secrets))
	if strings.Contains(strings.ToLower(said), "pull access denied") {
		cause += "; the registry gives this answer for a repository that does not exist, too"
	}
	fix := pullSecretFix(pod, host, secrets)
	confirm := []string{
		analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.imagePullSecrets}'", pod.Namespace, pod.Name),
	}
	if len(secrets) == 0 {
		confirm = append(confirm, analyze.Command("kubectl get serviceaccount -n %s %s -o jsonpath='{.imagePullSecrets}'", pod.Namespace, serviceAccountName(pod)))
	}
	var names []string
	for _, s := range secrets {
		names = append(names, s.Name)
		confirm = append(confirm, analyze.Command("kubectl get secret -n %s %s -o jsonpath='{.type}'", pod.Namespace, s.Name))
	}
	return analyze.Finding{
		Subjects:    a.Subjects(v),
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm:     confirm,
		GroupKey:    pod.Namespace + "\x00" + a.Image + "\x00" + strings.Join(names, ","),
	}
}

// pullSecretFix says what to do about the credentials, from what is known of them.
func pullSecretFix(pod *corev1.Pod, host string, secrets []analyze.PullSecret) string {
	create := analyze.Command("kubectl create secret docker-registry -n %s NAME --docker-server=%s ...", pod.Namespace, analyze.Value(host))
	var missing, unusable, present []string
	for _, s := range secrets {
		switch s.State {
		case "missing":
			missing = append(missing, s.Name)
		case "unusable":
			unusable = append(unusable, s.Name)
		case "exists":
			present = append(present, s.Name)
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Sprintf("Create the pull secret(s) %s in namespace %s with credentials for %s (%s, named as referenced).",
			strings.Join(missing, ", "), pod.Namespace, host, create)
	case len(unusable) > 0:
		return fmt.Sprintf("Recreate %s as a kubernetes.io/dockerconfigjson Secret with credentials for %s (%s).",
			strings.Join(unusable, ", "), host, create)
	case len(present) > 0:
		return fmt.Sprintf("Check that %s holds current credentials for %s (an entry for that host, a token that has not expired) "+
			"and that the account may read the repository; renew the Secret if not.", strings.Join(present, ", "), host)
	case len(secrets) > 0:
		return fmt.Sprintf("Check that %s exists in namespace %s and holds current credentials for %s; create or renew it (%s).",
			secrets[0].Name, pod.Namespace, host, create)
	}
	return fmt.Sprintf("Give the pod credentials for %s: create a pull secret (%s) and list it in the pod template's "+
		"imagePullSecrets or in ServiceAccount %s's imagePullSecrets, then recreate the pods.", host, create, serviceAccountName(pod))
}

func serviceAccountName(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// describePullSecrets says which pull secrets the pod references and their state.
func describePullSecrets(v *analyze.View, p *analyze.Pod, secrets []analyze.PullSecret) string {
	if len(secrets) == 0 {
		text := "the pod references no imagePullSecrets, so only the node's own credentials were tried"
		if v.Has(analyze.ServiceAccounts) {
			sa := serviceAccountName(p.Obj)
			if obj := v.ServiceAccount(p.Obj.Namespace, sa); obj != nil && len(obj.Obj.ImagePullSecrets) > 0 {
				text += fmt.Sprintf(" (ServiceAccount %s lists %d pull secret(s), added after the pod was created)", sa, len(obj.Obj.ImagePullSecrets))
			}
		}
		return text
	}
	parts := make([]string, len(secrets))
	for i, s := range secrets {
		parts[i] = fmt.Sprintf("%s %s", s.Name, s.Detail)
	}
	return "the pod's imagePullSecrets: " + strings.Join(parts, "; ")
}
