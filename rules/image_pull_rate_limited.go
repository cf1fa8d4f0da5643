package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ImagePullRateLimited finds image pulls the registry refused because the puller
// exceeded its pull rate limit.
var ImagePullRateLimited = &analyze.Rule{
	ID:       "image-pull-rate-limited",
	Stage:    analyze.StageImage,
	Title:    "registry pull rate limit exceeded",
	Doc:      imagePullRateLimitedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.Secrets,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullRateLimited,
}

const imagePullRateLimitedDoc = `The registry answered the pull with HTTP 429 Too Many Requests: the node (or the address
all nodes share behind NAT) has used up the registry's pull rate limit. containerd reports
"pulling from host HOST failed with status code [manifests TAG]: 429 Too Many Requests";
CRI-O and Docker quote the registry's error, "toomanyrequests: You have reached your pull
rate limit" (Docker Hub limits anonymous and free accounts per source address and six
hours). The image may well exist; the pull is refused until the window resets. The
container waits in ErrImagePull, then ImagePullBackOff, and its retries spend the limit
further.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl pull IMAGE

## Fix

Authenticate the pulls (an imagePullSecret for the registry: authenticated accounts get
a higher or no limit), pull through a mirror or pull-through cache (a registry mirror
in the container runtime's configuration), or copy the image to a registry of your own.
Use imagePullPolicy IfNotPresent with a fixed tag so running nodes do not pull again.
Pods recover by themselves once the limit's window resets.
`

func imagePullRateLimited(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range v.PullAttemptsOf(analyze.PullErrorRateLimited) {
		out = append(out, rateLimitedFinding(v, a))
	}
	return out
}

func rateLimitedFinding(v *analyze.View, a analyze.PullAttempt) analyze.Finding {
	pod := a.Pod.Obj
	host := analyze.RegistryHost(a.Image)
	said := strings.TrimSpace(analyze.PullRateLimitPattern.FindString(a.Text))
	evidence := a.Evidence(said)
	how := "anonymously (the pod references no imagePullSecrets)"
	if len(pod.Spec.ImagePullSecrets) > 0 {
		var names []string
		for _, s := range pod.Spec.ImagePullSecrets {
			names = append(names, s.Name)
		}
		how = "with the credentials of imagePullSecrets " + strings.Join(names, ", ")
		_, secretEvidence := v.PullSecrets(a)
		evidence = append(evidence, secretEvidence...)
	}
	node := pod.Spec.NodeName
	by := "the node"
	if node != "" {
		by = "node " + node
	}
	cause := fmt.Sprintf("registry %s refused to serve image %q to container %s with %s: %s, pulling %s, exceeded the registry's pull rate limit",
		host, a.Image, a.Container.Name, said, by, how)
	fix := fmt.Sprintf("Authenticate pulls from %s with an imagePullSecret for an account with a higher limit, or pull through a mirror "+
		"or cache, or copy %q to a registry of your own; the pod recovers once the limit resets.", host, a.Image)
	if len(pod.Spec.ImagePullSecrets) > 0 {
		fix = fmt.Sprintf("The account of the pull secret has used up its limit at %s: use an account with a higher limit, pull through a "+
			"mirror or cache, or copy %q to a registry of your own; the pod recovers once the limit resets.", host, a.Image)
	}
	subjects := a.Subjects(v)
	if node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
	}
	confirm := a.Confirm()
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm:     confirm,
		GroupKey:    host + "\x00" + how,
	}
}
