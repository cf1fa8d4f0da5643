package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// SandboxImagePullFailed finds pods whose sandbox fails because the container runtime
// cannot get its sandbox (pause) image.
var SandboxImagePullFailed = &analyze.Rule{
	ID:       "sandbox-image-pull-failed",
	Stage:    analyze.StageSandbox,
	Title:    "container runtime cannot get its sandbox (pause) image",
	Doc:      sandboxImagePullFailedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.RuntimeJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: sandboxImagePullFailed,
}

const sandboxImagePullFailedDoc = `Every pod sandbox starts from the container runtime's sandbox ("pause") image,
which the runtime's own configuration names (containerd: sandbox_image in the CRI
plugin's section of config.toml, or the pinned image of the kubelet's
--pod-infra-container-image on older nodes), not the pod. When it is not on the node,
the runtime pulls it, with the node's registry access and without the pod's
imagePullSecrets; when that fails no pod can start on the node, whatever its own images.
The kubelet records FailedCreatePodSandBox: "failed to get sandbox image "IMAGE": failed
to pull image "IMAGE": ..." followed by the registry error (DNS, TLS, 401, not found),
and retries with back-off; the pod stays Pending in ContainerCreating. It shows on new
nodes, after the image was garbage-collected or removed, or after the runtime's
configuration changed the image (a version bump to a registry the node cannot reach).

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=FailedCreatePodSandBox
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl info | grep -i sandboxImage
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl pull IMAGE

## Fix

Make the sandbox image available on the node: let the runtime reach and authenticate to
its registry (containerd's registry configuration, a mirror), pre-load it into the node
image, or point the runtime's sandbox image at one the node can pull, then restart the
runtime. Keep image garbage collection from removing it (containerd pins its sandbox
image; a manual removal is not prevented).
`

func sandboxImagePullFailed(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, s := range v.FailedSandboxes() {
		if s.Part.Kind != analyze.SandboxPauseImage {
			continue
		}
		out = append(out, sandboxImageFinding(v, s.Pod, s.Failure, s.Part))
	}
	return out
}

func sandboxImageFinding(v *analyze.View, p *analyze.Pod, f analyze.SandboxAttempt, part analyze.SandboxPart) analyze.Finding {
	node, image := p.Obj.Spec.NodeName, part.Detail
	// The registry's answer is what follows the runtime's own wrapping.
	why := f.Message
	prefix := fmt.Sprintf("failed to get sandbox image %q: ", image)
	if i := strings.Index(why, prefix); i >= 0 {
		why = why[i+len(prefix):]
	}
	why = strings.TrimPrefix(why, fmt.Sprintf("failed to pull image %q: ", image))
	cause := fmt.Sprintf("the container runtime on node %s cannot get its sandbox (pause) image %q, so it cannot create the sandbox of pod %s "+
		"or of any other new pod there%s; pulling it failed: %s", node, image, p.Ref().NamespacedName(), f.Tries(), why)
	return analyze.Finding{
		Subjects:    v.SandboxSubjects(p),
		Cause:       cause,
		Evidence:    analyze.SandboxEvidence(p, f),
		Remediation: analyze.SandboxFix(part, node),
		Confirm:     analyze.SandboxConfirm(part, p.Obj),
		GroupKey:    "sandbox-image\x00" + node + "\x00" + image,
	}
}
