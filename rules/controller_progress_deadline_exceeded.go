package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ControllerProgressDeadlineExceeded finds Deployments whose rollout stalled past
// progressDeadlineSeconds.
var ControllerProgressDeadlineExceeded = &analyze.Rule{
	ID:       "controller-progress-deadline-exceeded",
	Stage:    analyze.StageController,
	Title:    "Deployment rollout stalled past its progress deadline",
	Doc:      controllerProgressDeadlineExceededDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Deployments},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Pods, analyze.Events},
	},
	Run:     controllerProgressDeadlineExceeded,
	Outcome: true,
}

const controllerProgressDeadlineExceededDoc = `The Deployment controller expects a rollout to make progress (a new pod created, or
one becoming ready and available) at least every spec.progressDeadlineSeconds (default
600). When none happens in time it sets the Progressing condition to False with reason
ProgressDeadlineExceeded ("ReplicaSet NAME has timed out progressing."). The
controller does not stop or roll back: the stuck ReplicaSet stays, and the rollout
resumes by itself if its pods become ready. No event is recorded; the condition is the
evidence. kubectl rollout status exits with an error on it, so CI pipelines fail here.

The deadline says only that the rollout stalled; why is in the stuck ReplicaSet's pods
(not ready because a probe fails, crashing, waiting for an image or a volume, or not
scheduled). The finding names the stuck ReplicaSet, its ready and desired pods, when
it timed out, and what its pods show. It lists those pods as subjects. It reports an
outcome, not a broken link: when the pods have findings of their own (a failing
readiness probe, a crash, a pull error), those are the root cause and this one is listed
as their consequence; only when the pods left no evidence is this the root.

## Confirm on a live cluster

    kubectl rollout status deployment/NAME -n NAMESPACE
    kubectl get deployment -n NAMESPACE NAME -o jsonpath='{.status.conditions}'
    kubectl get rs,pods -n NAMESPACE -l SELECTOR
    kubectl describe pod -n NAMESPACE POD

## Fix

Fix what keeps the new pods from becoming ready (the pod findings say what); the
rollout then completes on its own. To restore service first, roll back with
kubectl rollout undo. Raise progressDeadlineSeconds only when pods legitimately take
longer than the deadline to become ready.
`

// reTimedOutRS reads the stuck ReplicaSet from the condition's message
// (pkg/controller/deployment/progress.go: "ReplicaSet %q has timed out progressing.").
var reTimedOutRS = regexp.MustCompile(`^ReplicaSet "([^"]+)" has timed out progressing`)

func controllerProgressDeadlineExceeded(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, d := range v.Deployments() {
		for i, c := range d.Obj.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == analyze.ProgressDeadlineReason {
				out = append(out, progressDeadlineFinding(v, d, i, c))
				break
			}
		}
	}
	return out
}

func progressDeadlineFinding(v *analyze.View, d *analyze.Deployment, i int, c appsv1.DeploymentCondition) analyze.Finding {
	dep := d.Obj
	deadline := int32(600)
	if dep.Spec.ProgressDeadlineSeconds != nil {
		deadline = *dep.Spec.ProgressDeadlineSeconds
	}
	evidence := []analyze.Evidence{
		d.Loc.At("status", "conditions", i).Evidence(fmt.Sprintf("Progressing %s %s: %s", c.Status, c.Reason, c.Message), c.LastTransitionTime.Time),
	}
	if dep.Spec.ProgressDeadlineSeconds != nil {
		evidence = append(evidence, d.Loc.At("spec", "progressDeadlineSeconds").Evidence(fmt.Sprintf("progressDeadlineSeconds %d", deadline), time.Time{}))
	}
	subjects := []analyze.ObjectRef{d.Ref()}
	rs := stuckReplicaSet(v, d, c.Message)
	stuck := "its rollout"
	var pods []*analyze.Pod
	if rs != nil {
		subjects = append(subjects, rs.Ref())
		want := analyze.Replicas(rs.Obj.Spec.Replicas)
		stuck = fmt.Sprintf("ReplicaSet %s (created %s) has %d of %d pod(s) ready", rs.Obj.Name,
			rs.Obj.CreationTimestamp.UTC().Format(time.RFC3339), rs.Obj.Status.ReadyReplicas, want)
		evidence = append(evidence, rs.Loc.At("status").Evidence(fmt.Sprintf("replicas %d, ready %d, available %d of %d desired",
			rs.Obj.Status.Replicas, rs.Obj.Status.ReadyReplicas, rs.Obj.Status.AvailableReplicas, want), v.CollectedAt()))
		pods = v.NotReadyPods(rs)
	} else {
		stuck = fmt.Sprintf("it has %d of %d pod(s) ready", dep.Status.ReadyReplicas, analyze.Replicas(dep.Spec.Replicas))
		evidence = append(evidence, d.Loc.At("status").Evidence(stuck, v.CollectedAt()))
	}
	cause := fmt.Sprintf("Deployment %s stopped progressing: %s and made no progress within progressDeadlineSeconds %d (timed out at %s)",
		d.Ref().NamespacedName(), stuck, deadline, c.LastTransitionTime.UTC().Format(time.RFC3339))
	why := "the stuck pods"
	for _, p := range pods {
		subjects = append(subjects, p.Ref())
	}
	if len(pods) > 0 {
		phrase, text, ev := v.FirstPodState(pods, "not ready")
		evidence = append(evidence, ev...)
		cause += "; pod " + phrase
		why = fmt.Sprintf("pod %s (%s)", pods[0].Obj.Name, text)
	}
	confirm := []string{
		analyze.Command("kubectl rollout status deployment/%s -n %s", dep.Name, dep.Namespace),
		analyze.Command("kubectl get deployment -n %s %s -o jsonpath='{.status.conditions}'", dep.Namespace, dep.Name),
	}
	if len(pods) > 0 {
		confirm = append(confirm, analyze.Command("kubectl describe pod -n %s %s", dep.Namespace, pods[0].Obj.Name))
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Fix what keeps %s from becoming ready; the rollout of Deployment %s then completes on its own. "+
			"To restore the previous version first: kubectl rollout undo deployment/%s -n %s.", why, d.Ref().NamespacedName(), dep.Name, dep.Namespace),
		Confirm:  confirm,
		GroupKey: d.Ref().String(),
	}
}

// stuckReplicaSet is the ReplicaSet the condition names, or else the Deployment's
// newest one by revision.
func stuckReplicaSet(v *analyze.View, d *analyze.Deployment, message string) *analyze.ReplicaSet {
	name := ""
	if m := reTimedOutRS.FindStringSubmatch(message); m != nil {
		name = m[1]
	}
	var newest *analyze.ReplicaSet
	newestRev := -1
	for _, rs := range v.ReplicaSets() {
		if rs.Obj.Namespace != d.Obj.Namespace {
			continue
		}
		if name != "" {
			if rs.Obj.Name == name {
				return rs
			}
			continue
		}
		owner := v.Controller(rs.Meta())
		if owner == nil || owner.Kind != "Deployment" || owner.Name != d.Obj.Name {
			continue
		}
		rev, err := strconv.Atoi(rs.Obj.Annotations["deployment.kubernetes.io/revision"])
		if err == nil && rev > newestRev {
			newest, newestRev = rs, rev
		}
	}
	return newest
}
