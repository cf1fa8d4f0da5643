package rules

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ControllerRolloutStuck finds Deployments whose rollout to a new template is blocked by
// failing new pods while the old ReplicaSet keeps running.
var ControllerRolloutStuck = &analyze.Rule{
	ID:       "controller-rollout-stuck",
	Stage:    analyze.StageController,
	Title:    "Deployment rollout is stuck: the new ReplicaSet's pods fail while the old one keeps serving",
	Doc:      controllerRolloutStuckDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Deployments, analyze.ReplicaSets, analyze.Pods},
		Optional: []analyze.Kind{analyze.Events},
	},
	Run:     controllerRolloutStuck,
	Outcome: true,
}

const controllerRolloutStuckDoc = `The Deployment's template changed (a new image, an edited env, a new config) and the
Deployment controller started a new ReplicaSet for the new revision, but the new pods
fail: they cannot pull their image, crash, fail their readiness probe or are not
scheduled. A rolling update replaces old pods only as new ones become available
(maxUnavailable), so the old ReplicaSet keeps running the previous revision and the
rollout stops half way: the application still answers, on the old version, and
kubectl rollout status waits. After progressDeadlineSeconds (default 600) the
Deployment reports ProgressDeadlineExceeded, which controller-progress-deadline-exceeded
reports; this rule covers the time before, when nothing on the Deployment says it is
stuck yet, and stays quiet once the deadline has passed.

The finding names the revision, the new and old ReplicaSets with their pod counts, the
template change between them, and what the new pods show. It lists the new pods as
subjects and reports an outcome, not a broken link of its own: the new pods' own
findings (the pull error, the crash) are the root cause and this one is listed as their
consequence, so the report reads from what to fix to what it did to the rollout (undo
it, or fix the template and roll forward). Only when the pods left no evidence of their
own is the stuck rollout the root.

## Confirm on a live cluster

    kubectl rollout status deployment/NAME -n NAMESPACE
    kubectl rollout history deployment/NAME -n NAMESPACE
    kubectl get rs -n NAMESPACE -l SELECTOR -o wide
    kubectl describe pod -n NAMESPACE NEW_POD

## Fix

Fix the new template (the pod findings say what) and apply it; the rollout resumes.
To go back to the working revision: kubectl rollout undo deployment/NAME -n NAMESPACE.
`

func controllerRolloutStuck(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, d := range v.Deployments() {
		if d.Obj.Spec.Paused || deadlineExceeded(d.Obj) {
			continue
		}
		newRS, olds := deploymentReplicaSets(v, d)
		if newRS == nil || len(olds) == 0 {
			continue
		}
		if newRS.Obj.Status.AvailableReplicas >= analyze.Replicas(newRS.Obj.Spec.Replicas) && analyze.Replicas(newRS.Obj.Spec.Replicas) > 0 {
			continue
		}
		var failing []*analyze.Pod
		for _, p := range v.NotReadyPods(newRS) {
			if podFailing(v, p) {
				failing = append(failing, p)
			}
		}
		if len(failing) == 0 {
			continue // still rolling out: new pods are starting, nothing fails yet
		}
		out = append(out, rolloutStuckFinding(v, d, newRS, olds, failing))
	}
	return out
}

func deadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == analyze.ProgressDeadlineReason {
			return true
		}
	}
	return false
}

// deploymentReplicaSets returns the Deployment's ReplicaSet of its current revision and
// its older ReplicaSets that still have pods, newest first.
func deploymentReplicaSets(v *analyze.View, d *analyze.Deployment) (*analyze.ReplicaSet, []*analyze.ReplicaSet) {
	current := analyze.Revision(d.Meta())
	var newRS *analyze.ReplicaSet
	var olds []*analyze.ReplicaSet
	for _, rs := range v.ReplicaSetsOf(d) {
		switch {
		case current >= 0 && analyze.Revision(rs.Meta()) == current:
			newRS = rs
		case rs.Obj.Status.Replicas > 0:
			olds = append(olds, rs)
		}
	}
	return newRS, olds
}

// podFailing reports whether a pod shows a failure rather than a start in progress: not
// scheduled, a container waiting for a reason other than creation, a container that
// restarted, or a Warning event.
func podFailing(v *analyze.View, p *analyze.Pod) bool {
	if c, _ := analyze.PodCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		return true
	}
	for _, c := range analyze.Containers(p) {
		if c.Status == nil {
			continue
		}
		if w := c.Status.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return true
		}
		if c.Status.RestartCount > 0 {
			return true
		}
	}
	return v.PodWarning(p) != nil
}

func rolloutStuckFinding(v *analyze.View, d *analyze.Deployment, newRS *analyze.ReplicaSet, olds []*analyze.ReplicaSet, failing []*analyze.Pod) analyze.Finding {
	dep := d.Obj
	revision := dep.Annotations[analyze.RevisionAnnotation]
	evidence := []analyze.Evidence{
		d.Loc.At("metadata", "annotations", analyze.RevisionAnnotation).Evidence("revision "+revision, time.Time{}),
		d.Loc.At("status").Evidence(fmt.Sprintf("replicas %d desired, %d updated, %d available, %d unavailable",
			analyze.Replicas(dep.Spec.Replicas), dep.Status.UpdatedReplicas, dep.Status.AvailableReplicas, dep.Status.UnavailableReplicas), v.CollectedAt()),
		newRS.Loc.At("status").Evidence(rsCounts(newRS), v.CollectedAt()),
	}
	subjects := []analyze.ObjectRef{d.Ref(), newRS.Ref()}
	var oldTexts []string
	for _, rs := range olds {
		subjects = append(subjects, rs.Ref())
		oldTexts = append(oldTexts, fmt.Sprintf("old ReplicaSet %s (revision %s) still runs %d pod(s), %d ready",
			rs.Obj.Name, rs.Obj.Annotations[analyze.RevisionAnnotation], rs.Obj.Status.Replicas, rs.Obj.Status.ReadyReplicas))
		evidence = append(evidence, rs.Loc.At("status").Evidence(rsCounts(rs), v.CollectedAt()))
	}
	change, changeEvidence := templateChange(newRS, olds[0])
	evidence = append(evidence, changeEvidence...)
	cause := fmt.Sprintf("the rollout of Deployment %s to revision %s is stuck: new ReplicaSet %s has %d of %d pod(s) available while %s",
		d.Ref().NamespacedName(), revision, newRS.Obj.Name, newRS.Obj.Status.AvailableReplicas, analyze.Replicas(newRS.Obj.Spec.Replicas), strings.Join(oldTexts, " and "))
	if change != "" {
		cause += "; the new template changes " + change
	}
	why := "the new pods"
	for _, p := range failing {
		subjects = append(subjects, p.Ref())
	}
	if len(failing) > 0 {
		phrase, _, ev := v.FirstPodState(failing, "failing")
		evidence = append(evidence, ev...)
		cause += "; new pod " + phrase
		why = "new pod " + failing[0].Obj.Name
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Fix what fails in %s and apply the corrected template; the rollout then resumes. "+
			"To return to the working revision %s: kubectl rollout undo deployment/%s -n %s.", why, olds[0].Obj.Annotations[analyze.RevisionAnnotation], dep.Name, dep.Namespace),
		Confirm: []string{
			analyze.Command("kubectl rollout status deployment/%s -n %s", dep.Name, dep.Namespace),
			analyze.Command("kubectl rollout history deployment/%s -n %s", dep.Name, dep.Namespace),
			analyze.Command("kubectl describe pod -n %s %s", dep.Namespace, failing[0].Obj.Name),
		},
		GroupKey: d.Ref().String(),
	}
}

func rsCounts(rs *analyze.ReplicaSet) string {
	return fmt.Sprintf("ReplicaSet %s revision %s: %d desired, %d current, %d ready, %d available", rs.Obj.Name,
		rs.Obj.Annotations[analyze.RevisionAnnotation], analyze.Replicas(rs.Obj.Spec.Replicas), rs.Obj.Status.Replicas, rs.Obj.Status.ReadyReplicas, rs.Obj.Status.AvailableReplicas)
}

// templateChange names the container images that differ between the old and the new
// ReplicaSet's template, citing the new ones.
func templateChange(newRS, old *analyze.ReplicaSet) (string, []analyze.Evidence) {
	oldImages := map[string]string{}
	for _, c := range old.Obj.Spec.Template.Spec.Containers {
		oldImages[c.Name] = c.Image
	}
	var parts []string
	var evidence []analyze.Evidence
	for i, c := range newRS.Obj.Spec.Template.Spec.Containers {
		was, ok := oldImages[c.Name]
		if ok && was == c.Image {
			continue
		}
		text := fmt.Sprintf("container %s image to %s", c.Name, c.Image)
		if ok {
			text += " (was " + was + ")"
		}
		parts = append(parts, text)
		evidence = append(evidence, newRS.Loc.At("spec", "template", "spec", "containers", i, "image").Evidence(text, newRS.Obj.CreationTimestamp.Time))
	}
	return strings.Join(parts, ", "), evidence
}
