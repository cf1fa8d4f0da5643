package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ImageInvalidName finds containers whose image reference cannot be parsed.
var ImageInvalidName = &analyze.Rule{
	ID:       "image-invalid-name",
	Stage:    analyze.StageImage,
	Title:    "image reference is not a valid image name",
	Doc:      imageInvalidNameDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imageInvalidName,
}

const imageInvalidNameDoc = `The container's image field is not a valid image reference, so the kubelet refuses it
before asking the runtime for anything: the container waits in InvalidImageName with
"Failed to apply default image tag "IMAGE": couldn't parse image name "IMAGE": invalid
reference format…" and an InspectFailed event repeats on every sync. The API server
accepts any non-empty image string; only the kubelet parses it. Typical mistakes:
upper-case letters in the repository path ("repository name (…) must be lowercase"), a
scheme ("https://registry/app"), a space or an unexpanded template variable, two tags,
or a digest that is not "sha256:" and 64 hex digits.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].image}'

## Fix

Correct the image reference in the pod template: lower-case registry host and
repository path, no scheme, at most one ":tag" (letters, digits, "_", "." and "-", up
to 128 characters) and at most one "@sha256:" digest. Then roll the workload out again;
the pod does not recover on its own.
`

// The kubelet's message for a reference it cannot parse (pkg/kubelet/images/
// image_manager.go EnsureImageExists via applyDefaultImageTag and
// pkg/util/parsers ParseImageName): `Failed to apply default image tag "R": couldn't
// parse image name "R": invalid reference format[: detail]`.
var reInvalidReference = regexp.MustCompile(`invalid reference format(?:: ([^"\n]+))?`)

func imageInvalidName(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, w := range v.ImageWaits("InvalidImageName", "InspectFailed", unparsableMessage) {
		out = append(out, invalidNameFinding(v, w))
	}
	return out
}

// unparsableMessage tells the kubelet's InspectFailed event for a reference it cannot
// parse from the one for an image the runtime cannot inspect ("Failed to inspect image").
func unparsableMessage(image, msg string) bool {
	return strings.Contains(msg, fmt.Sprintf("Failed to apply default image tag %q", image))
}

func invalidNameFinding(v *analyze.View, w analyze.ImageWait) analyze.Finding {
	pod := w.Pod.Obj
	image := w.Container.Spec.Image
	text := w.Waiting.Message
	if w.Event != nil {
		text += "\n" + w.Event.Message
	}
	why := "the kubelet cannot parse it"
	needle := "Failed to apply default image tag"
	if m := reInvalidReference.FindStringSubmatch(text); m != nil {
		needle = m[0]
		why = "the kubelet cannot parse it: " + m[0]
	}
	cause := fmt.Sprintf("image %q of container %s in pod %s is not a valid image reference, %s; nothing is pulled and the container never starts%s",
		image, w.Container.Name, w.Pod.Ref().NamespacedName(), why, w.Repeated())
	evidence := w.Evidence(needle)
	evidence = append(evidence, w.Container.SpecLoc().At("image").Evidence(
		fmt.Sprintf("container %s: image %s", w.Container.Name, image), pod.CreationTimestamp.Time))
	fix := fmt.Sprintf("Correct the image of container %s (%q) in the pod template", w.Container.Name, image)
	if strings.Contains(text, "must be lowercase") {
		fix += fmt.Sprintf(": registry and repository names are lower-case (%q)", lowerRepository(image))
	}
	subjects, group := v.PodAndWorkload(w.Pod)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix + ", then roll the workload out again; the pod does not recover on its own.",
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.containers[?(@.name==\"%s\")].image}'", pod.Namespace, pod.Name, w.Container.Name),
		},
		GroupKey: group + "\x00" + image,
	}
}

// lowerRepository lower-cases an image reference's registry and repository, keeping
// the tag or digest as written (tags may hold upper-case letters).
func lowerRepository(image string) string {
	repo, version := analyze.SplitImage(image)
	sep := ":"
	if strings.Contains(image, "@") {
		sep = "@"
	}
	if !strings.Contains(image, sep+version) {
		return strings.ToLower(repo)
	}
	return strings.ToLower(repo) + sep + version
}
