package analyze

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/internal/phrase"
)

// What a controller waits on, read from its pods: a Deployment's progress deadline, the
// pods that are not ready and how their state reads. The controller rules read these.

// Replicas reads a replica count that defaults to 1 when unset.
func Replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// ProgressDeadlineReason is the Progressing condition's reason on a timeout
// (pkg/controller/deployment/util TimedOutReason).
const ProgressDeadlineReason = "ProgressDeadlineExceeded"

// NotReadyPods lists the ReplicaSet's pods that are not ready, sorted by name.
func (v *View) NotReadyPods(rs *ReplicaSet) []*Pod {
	var out []*Pod
	for _, p := range v.Pods() {
		owner := v.Controller(p.Meta())
		if owner == nil || owner.Kind != "ReplicaSet" || owner.Namespace != rs.Obj.Namespace || owner.Name != rs.Obj.Name ||
			p.Obj.DeletionTimestamp != nil || IsReady(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// FirstPodState describes the first of a controller's troubled pods, which stands for
// them all: "NAME (and N more <more>) STATE" when there are others, its state alone
// (PodStateText), and the evidence for it.
func (v *View) FirstPodState(pods []*Pod, more string) (text, state string, evidence []Evidence) {
	p := pods[0]
	state, evidence = v.PodStateText(p)
	others := ""
	if len(pods) > 1 {
		others = fmt.Sprintf(" (and %d more %s)", len(pods)-1, more)
	}
	return fmt.Sprintf("%s%s %s", p.Obj.Name, others, state), state, evidence
}

// PodStateText says what keeps a pod from being ready, from its status and its latest
// warning event: "runs but is not ready: Readiness probe failed: … (x15)", "waits in
// CrashLoopBackOff: …", "is not scheduled: …".
func (v *View) PodStateText(p *Pod) (string, []Evidence) {
	pod := p.Obj
	if c, loc := PodCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		text := "is not scheduled: " + phrase.FirstLine(c.Message)
		return text, []Evidence{loc.Evidence(text, c.LastTransitionTime.Time)}
	}
	for _, c := range Containers(p) {
		if c.Status == nil {
			continue
		}
		if w := c.Status.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			text := fmt.Sprintf("has container %s waiting in %s", c.Name, w.Reason)
			if w.Message != "" {
				text += ": " + phrase.FirstLine(w.Message)
			}
			return text, []Evidence{c.StatusLoc().At("state", "waiting").Evidence(text, time.Time{})}
		}
	}
	if e := v.PodWarning(p); e != nil {
		state := "is " + string(pod.Status.Phase)
		if pod.Status.Phase == corev1.PodRunning {
			state = "runs but is not ready"
		}
		text := fmt.Sprintf("%s: %s", state, strings.TrimSpace(phrase.FirstLine(e.Message)))
		if e.Count > 1 {
			text += fmt.Sprintf(" (x%d)", e.Count)
		}
		return text, []Evidence{e.Evidence()}
	}
	if c, loc := PodCondition(p, corev1.PodReady); c != nil {
		text := fmt.Sprintf("is %s and not ready: %s", pod.Status.Phase, c.Message)
		return text, []Evidence{loc.Evidence(text, c.LastTransitionTime.Time)}
	}
	text := "is " + string(pod.Status.Phase)
	return text, []Evidence{p.Loc.At("status").Evidence(text, v.CollectedAt())}
}
