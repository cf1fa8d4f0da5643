package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ImageNeverPull finds containers whose image is not on the node while their pull policy
// forbids pulling it.
var ImageNeverPull = &analyze.Rule{
	ID:       "image-never-pull",
	Stage:    analyze.StageImage,
	Title:    "image is not on the node and imagePullPolicy Never forbids pulling it",
	Doc:      imageNeverPullDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: imageNeverPull,
}

const imageNeverPullDoc = `The container's imagePullPolicy is Never, so the kubelet only uses an image that is
already on the node, and the node does not have this one. The kubelet does not try a
registry at all: the container waits in ErrImageNeverPull with "Container image "IMAGE"
is not present with pull policy of Never", and an ErrImageNeverPull event repeats on
every sync. Never is meant for images loaded onto nodes out of band (kind load, a node
image build, a pre-pull DaemonSet); the pod fails on any node where that did not happen,
or when the tag differs from the one loaded.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl images

## Fix

Load the image onto every node the pod can land on (and keep the tag the same as in
the pod), or let the kubelet pull it: set imagePullPolicy to IfNotPresent (or Always)
and make sure a registry holds the image. Pin the pod to the nodes that have the image
only as a stopgap.
`

func imageNeverPull(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, w := range v.ImageWaits("ErrImageNeverPull", "ErrImageNeverPull", neverPullMessage) {
		out = append(out, neverPullFinding(v, w))
	}
	return out
}

// neverPullMessage is the kubelet's event for an image absent under pull policy Never
// (image_manager.go imageNotPresentOnNeverPolicyError).
func neverPullMessage(image, msg string) bool {
	return strings.Contains(msg, fmt.Sprintf("Container image %q is not present with pull policy of Never", image))
}

func neverPullFinding(v *analyze.View, w analyze.ImageWait) analyze.Finding {
	pod := w.Pod.Obj
	image := w.Container.Spec.Image
	node := pod.Spec.NodeName
	where := "the node"
	if node != "" {
		where = "node " + node
	}
	cause := fmt.Sprintf("container %s of pod %s never starts: its image %q is not on %s and imagePullPolicy Never forbids pulling it%s",
		w.Container.Name, w.Pod.Ref().NamespacedName(), image, where, w.Repeated())
	evidence := w.Evidence("is not present with pull policy of Never")
	evidence = append(evidence, w.Container.SpecLoc().At("imagePullPolicy").Evidence(
		fmt.Sprintf("container %s: image %s, imagePullPolicy %s", w.Container.Name, image, w.Container.Spec.ImagePullPolicy), pod.CreationTimestamp.Time))
	confirm := []string{
		analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].state.waiting.message}'", pod.Namespace, pod.Name, w.Container.Name),
	}
	if node != "" {
		confirm = append(confirm, analyze.Command("kubectl debug node/%s -it --image=busybox -- chroot /host crictl images", node))
	}
	subjects, group := v.PodAndWorkload(w.Pod)
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Load image %s onto every node the pod can run on (with exactly this tag), or set imagePullPolicy "+
			"of container %s to IfNotPresent so the kubelet pulls it from a registry that holds it.", image, w.Container.Name),
		Confirm:  confirm,
		GroupKey: group + "\x00" + image + "\x00" + node,
	}
}
