package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ImagePullNotFound finds image pulls that fail because the registry has no such image.
var ImagePullNotFound = &analyze.Rule{
	ID:       "image-pull-not-found",
	Stage:    analyze.StageImage,
	Title:    "image reference does not exist in the registry",
	Doc:      imagePullNotFoundDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imagePullNotFound,
}

const imagePullNotFoundDoc = `The registry answered the pull, but it has no image under that reference: containerd
reports "failed to resolve reference "IMAGE": IMAGE: not found", CRI-O and registries
speaking the distribution API say "manifest unknown" (the tag or digest does not exist)
or "name unknown" (the repository does not exist). The container waits in ErrImagePull,
then ImagePullBackOff. This is neither a DNS failure (no registry was reached) nor
"unauthorized" (the registry refused the credentials).

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl pull IMAGE

## Fix

Correct the image reference: a typo in the repository or the tag, a tag that was never
pushed (the CI build failed or pushed elsewhere), or a tag deleted by a retention
policy. A chart whose release bumped its imageTag to a non-existent version (a version
of the chart used as the image's, a doubled "v" prefix) fails the same way for every
install. Pin images by a tag or digest that exists, and push it before rolling out.
`

func imagePullNotFound(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, a := range v.PullAttemptsOf(analyze.PullErrorNotFound) {
		out = append(out, notFoundFinding(v, a))
	}
	return out
}

func notFoundFinding(v *analyze.View, a analyze.PullAttempt) analyze.Finding {
	repo, version := analyze.SplitImage(a.Image)
	host := analyze.RegistryHost(a.Image)
	said := analyze.PullRefNotFoundPattern.FindString(a.Text)
	missing := fmt.Sprintf("the repository %s or its tag %q does not exist", repo, version)
	if m := analyze.PullManifestUnknownPattern.FindString(a.Text); m != "" {
		said = m
		switch {
		case strings.Contains(m, "name unknown"):
			missing = fmt.Sprintf("the repository %s does not exist", repo)
		case strings.HasPrefix(version, "sha256:"):
			missing = fmt.Sprintf("repository %s has no manifest with digest %s", repo, version)
		default:
			missing = fmt.Sprintf("repository %s has no tag %q", repo, version)
		}
	}
	private := ""
	if m := analyze.AnonymousRefusalPattern.FindString(a.Text); m != "" && said == "" {
		// The registry's answer to a pull without credentials, the same for a repository
		// that does not exist and a private one; the pod gives no pull secret.
		said = refusalStart(m)
		missing = fmt.Sprintf("the repository %s does not exist under that name, or is private and the pod gives no pull secret for it", repo)
		private = fmt.Sprintf("; if the repository is private, name a pull secret for %s in the pod template's imagePullSecrets", host)
	}
	needle := said
	if needle == "" {
		needle = "not found"
	}
	cause := fmt.Sprintf("image %q of container %s cannot be pulled: registry %s answered that %s (%s)",
		a.Image, a.Container.Name, host, missing, said)
	return analyze.Finding{
		Subjects: a.Subjects(v),
		Cause:    cause,
		Evidence: a.Evidence(needle),
		Remediation: fmt.Sprintf("Correct the image reference %q (a typo in the repository or tag, or a tag that was never pushed "+
			"or has been deleted), or push the image to %s%s, then roll the workload out again.", a.Image, host, private),
		Confirm:  a.Confirm(),
		GroupKey: a.Image,
	}
}

// refusalStart is where an anonymous refusal's words begin in what the pattern matched:
// its "pull access denied", or the GitHub registry's status after the image.
func refusalStart(m string) string {
	for _, w := range []string{"pull access denied", "403 Forbidden", "error from registry: denied", "denied"} {
		if i := strings.Index(m, w); i >= 0 {
			return m[i:]
		}
	}
	return m
}
