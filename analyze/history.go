package analyze

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A failure the pod later got past is history, not its root cause: the sandbox that
// failed four times and was then created, the image pull that failed and then
// succeeded, the scheduling that failed until a node was added. The root is the
// earliest stage still broken at the latest evidence; the history stays in the report
// (marked) and in the pod's timeline as earlier events of the chain.

// passedStage reports whether the evidence shows pod p past stage st, and when: the
// time of the latest event that shows it (Scheduled, Pulling, Pulled, Created,
// Started), or the zero time when the pod's status at collection shows it, which is
// later than any failure the evidence holds.
func (g *Graph) passedStage(p *Pod, st Stage) (time.Time, bool) {
	pod := p.Obj
	latest := func(reasons ...string) (time.Time, bool) {
		var at time.Time
		found := false
		for _, e := range g.eventsFor(p.Ref()) {
			for _, r := range reasons {
				if e.Reason == r {
					found = true
					if e.LastTime.After(at) {
						at = e.LastTime
					}
				}
			}
		}
		return at, found
	}
	switch st {
	case StageRequest:
		// A pod whose status the evidence holds exists: the request that made it was
		// accepted. A refused request in the same evidence (a kubelet's own, a node
		// authorizer's) is not this pod's root.
		if !isPartial(p, "status") && (pod.Status.Phase != "" || len(pod.Status.ContainerStatuses) > 0) {
			return time.Time{}, true
		}
	case StageScheduling:
		if pod.Spec.NodeName != "" && !isPartial(p, "spec") {
			return time.Time{}, true
		}
		if c, _ := PodCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
			return time.Time{}, true
		}
		return latest("Scheduled")
	case StageSandbox, StageVolume:
		// The kubelet pulls images and creates containers only into a sandbox whose
		// volumes are mounted.
		if anyContainerRunning(pod) {
			return time.Time{}, true
		}
		if st == StageSandbox {
			return latest("Pulling", "Pulled", "Created", "Started")
		}
		return latest("Created", "Started")
	case StageImage, StageConfig, StageStart:
		// Every container is running or ran: each got its image, its config and a
		// process. A container of the same pod still waiting keeps the failure current.
		if allContainersStarted(pod, st == StageStart) {
			return time.Time{}, true
		}
	}
	return time.Time{}, false
}

// anyContainerRunning reports whether a container of the pod runs at collection.
func anyContainerRunning(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			return true
		}
	}
	return false
}

// allContainersStarted reports whether every container the status lists is running or
// ended after its process started (an init container that completed, say), and the
// status lists every container of the spec. With ranOK, an ended container counts only
// when it exited 0: a process that failed at once may never have started its program
// (exec format error exits 1 with a start time).
func allContainersStarted(pod *corev1.Pod, ranOK bool) bool {
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	if len(statuses) == 0 || len(pod.Status.ContainerStatuses) < len(pod.Spec.Containers) {
		return false
	}
	for _, cs := range statuses {
		switch t := cs.State.Terminated; {
		case cs.State.Running != nil:
		case t != nil && t.StartedAt.IsZero() && t.ExitCode != 0:
			return false
		case t != nil && (t.ExitCode == 126 || t.ExitCode == 127 || t.ExitCode == 128 || t.Reason == "StartError" || t.Reason == "ContainerCannotRun"):
			return false
		case t != nil && ranOK && t.ExitCode != 0:
			return false
		case t != nil:
		default:
			return false
		}
	}
	return true
}

// historyStages are the stages whose failure a later success makes history. Later
// stages (a crash, a failing probe) are judged by the pod's current state by the rules
// themselves; earlier ones (admission, controller) are about the owner, not the pod.
var historyStages = map[Stage]bool{
	StageRequest: true, StageScheduling: true, StageSandbox: true, StageImage: true, StageVolume: true, StageConfig: true, StageStart: true,
}

// latestTime is the time of the finding's latest dated evidence, or zero.
func latestTime(ev []Evidence) time.Time {
	var at time.Time
	for _, e := range ev {
		if e.Time != nil && e.Time.After(at) {
			at = *e.Time
		}
	}
	return at
}

// isHistory reports whether every pod the evidence at stage st is about got past st
// after the evidence: at a dated event later than the last dated evidence, or by its
// status at collection.
func (g *Graph) isHistory(st Stage, pods []ObjectRef, ev []Evidence) bool {
	if !historyStages[st] || len(pods) == 0 {
		return false
	}
	last := latestTime(ev)
	for _, ref := range pods {
		p := g.FindPod(ref.Namespace, ref.Name)
		if p == nil {
			return false
		}
		at, ok := g.passedStage(p, st)
		if !ok || st == StageStart && g.runFailsAgain(p, ev) {
			return false
		}
		if !at.IsZero() && (last.IsZero() || !last.Before(at)) {
			return false
		}
	}
	return true
}

// markHistory marks the findings whose pods all got past the finding's stage after its
// evidence: they are not a root cause.
func markHistory(g *Graph, fs []*Finding) {
	for _, f := range fs {
		if f.outcome {
			continue
		}
		f.History = g.isHistory(f.Stage, f.Pods(), f.Evidence)
	}
}

// runFailsAgain reports whether the run a container's status shows running already
// failed the way an earlier run did: its current log holds the line the finding cites
// from the earlier run's log. runc 1.1 and later start the process before the exec
// that fails ("exec /server: exec format error"), so a status collected between the
// start and the exit shows the container running although every run fails.
func (g *Graph) runFailsAgain(p *Pod, ev []Evidence) bool {
	for _, cs := range p.Obj.Status.ContainerStatuses {
		if cs.State.Running == nil || cs.RestartCount == 0 {
			continue
		}
		previous := g.logOf(p.meta.Namespace, p.meta.Name, cs.Name, true)
		current := g.logOf(p.meta.Namespace, p.meta.Name, cs.Name, false)
		if previous == nil || current == nil {
			continue
		}
		for _, e := range ev {
			if e.inBundle().Path != previous.Loc.inBundle().Path || e.Excerpt == "" {
				continue
			}
			if _, _, ok := current.Find(logMessage(e.Excerpt)); ok {
				return true
			}
		}
	}
	return false
}

// logMessage is a log line without the time the runtime or kubectl --timestamps put
// before it.
func logMessage(line string) string {
	if t, rest, ok := strings.Cut(line, " "); ok && len(t) >= 20 && t[4] == '-' && t[10] == 'T' {
		return rest
	}
	return line
}
