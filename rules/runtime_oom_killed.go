package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// RuntimeOOMKilled finds containers the kernel killed for exceeding their memory.
var RuntimeOOMKilled = &analyze.Rule{
	ID:       "runtime-oom-killed",
	Stage:    analyze.StageRuntime,
	Title:    "container killed by the kernel OOM killer",
	Doc:      runtimeOOMKilledDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Dmesg, analyze.ContainerLogs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: runtimeOOMKilled,
}

const runtimeOOMKilledDoc = `The container's process used more memory than its cgroup allows and the kernel's OOM
killer ended it: the container status says terminated, reason OOMKilled, usually exit
code 137. With a memory limit, the limit was hit; without one, the node itself ran out of
memory. The kubelet restarts the container, and repeated kills become CrashLoopBackOff.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl top pod -n NAMESPACE POD --containers
    kubectl debug node/NODE -it --image=busybox -- dmesg | grep -i 'killed process'

## Fix

Raise the container's memory limit above its real peak, or make the process use less:
runtimes that size their heap from the machine (JVM, Node.js, Go) need it set below the
limit (-Xmx, --max-old-space-size, GOMEMLIMIT). A leak shows as memory growing until each
kill; the previous container's log often shows what it was doing.
`

func runtimeOOMKilled(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for r := range v.ContainerRuns() {
		p, c := r.Subject.Pod, r.Container
		st := c.Status
		if st == nil {
			continue
		}
		term, loc := st.LastTerminationState.Terminated, c.StatusLoc().At("lastState", "terminated")
		if st.State.Terminated != nil && st.State.Terminated.Reason == analyze.OOMReason {
			term, loc = st.State.Terminated, c.StatusLoc().At("state", "terminated")
		}
		if term == nil || term.Reason != analyze.OOMReason {
			continue
		}
		out = append(out, oomFinding(v, p, c, term, loc))
	}
	return out
}

func oomFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, term *corev1.ContainerStateTerminated, loc analyze.Location) analyze.Finding {
	pod := p.Obj
	limit, limitLoc, hasLimit := memoryLimit(p, c)
	evidence := []analyze.Evidence{analyze.ExitEvidence(term, loc)}
	limitText := "it has no memory limit, so the node itself ran out of memory"
	// A limit the evidence shows is known even when the rest of the spec is not (a
	// describe fragment's Limits); only its absence needs the whole spec.
	switch {
	case hasLimit:
		limitText = "its memory limit is " + limit
		evidence = append(evidence, limitLoc.Evidence("limits.memory: "+limit, pod.CreationTimestamp.Time))
	case !analyze.SpecKnown(p) && v.LoneMemoryLimit() != "":
		limitText = "its memory limit, the one the evidence shows, is " + v.LoneMemoryLimit()
	case !analyze.SpecKnown(p):
		limitText = "the pod's spec is not in the evidence, so its memory limit is not known"
	}
	who := "container " + c.Name
	if !analyze.SpecKnown(p) && !analyze.Partial(pod.ObjectMeta, "name") {
		// A pod put together from pieces of a paste (a status fragment, a get row): the
		// cause names the pod the pieces were joined to.
		who += " of pod " + p.Ref().NamespacedName()
	}
	// An excerpt that does not show the exit code or the restart count leaves them 0:
	// the cause says only what the evidence shows (the kernel's kill is 137).
	facts := []string{analyze.OOMReason}
	if term.ExitCode != 0 {
		facts = append(facts, fmt.Sprintf("exit code %d", term.ExitCode))
	}
	if n := c.Status.RestartCount; n > 0 {
		facts = append(facts, fmt.Sprintf("%d restart(s)", n))
	}
	cause := fmt.Sprintf("%s was killed by the kernel OOM killer (%s): %s", who, strings.Join(facts, ", "), limitText)
	if k := kernelKill(v, p, c, term.ContainerID); k != nil {
		cause += "; the kernel log on node " + k.Node + " shows " + killSummary(k)
		evidence = append(evidence, k.Evidence())
	}
	if run, _ := v.ContainerRun(p, c.Name); run.PreviousLog != nil {
		log := run.PreviousLog
		if lines, at := log.Tail(3); len(lines) > 0 {
			evidence = append(evidence, at.Evidence("previous log ends: "+strings.Join(lines, " | "), term.FinishedAt.Time))
		}
	}
	subjects := []analyze.ObjectRef{p.Ref()}
	if pod.Spec.NodeName != "" {
		subjects = append(subjects, analyze.NodeRef(pod.Spec.NodeName))
	}
	group := p.Ref().NamespacedName()
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
		group = w.String()
	}
	fix := fmt.Sprintf("Raise the memory limit of container %s above its peak use (now %s) or make the process use less "+
		"(heap flags such as -Xmx or GOMEMLIMIT must stay below the limit).", c.Name, limit)
	switch {
	case hasLimit:
	case !analyze.SpecKnown(p):
		fix = fmt.Sprintf("Read container %s's memory limit (kubectl get pod -o yaml) and raise it above its peak use, or make the "+
			"process use less (heap flags such as -Xmx or GOMEMLIMIT must stay below the limit).", c.Name)
	case !hasLimit:
		fix = fmt.Sprintf("Give container %s a memory request and limit that match its use, and check what else uses the "+
			"memory of node %s.", c.Name, pod.Spec.NodeName)
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=20", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl top pod -n %s %s --containers", pod.Namespace, pod.Name),
		},
		GroupKey: group + "\x00" + c.Name + "\x00" + limit,
	}
}

// memoryLimit is the container's memory limit, or the pod-level limit when the
// container sets none.
func memoryLimit(p *analyze.Pod, c analyze.ContainerInfo) (string, analyze.Location, bool) {
	if q, ok := c.Spec.Resources.Limits[corev1.ResourceMemory]; ok {
		return q.String(), c.SpecLoc().At("resources", "limits", "memory"), true
	}
	if r := p.Obj.Spec.Resources; r != nil {
		if q, ok := r.Limits[corev1.ResourceMemory]; ok {
			return q.String(), p.Loc.At("spec", "resources", "limits", "memory"), true
		}
	}
	return "none", analyze.Location{}, false
}

// The kernel's report of the kill (mm/oom_kill.c): "Killed process 48211 (worker)
// total-vm:140844kB, anon-rss:64980kB, …".
var reKillRSS = regexp.MustCompile(`Killed process (\d+) \(([^)]*)\).*?anon-rss:(\d+kB)`)

// killSummary says which process died and how much anonymous memory it held.
func killSummary(k *analyze.OOMKill) string {
	if m := reKillRSS.FindStringSubmatch(k.Text); m != nil {
		return fmt.Sprintf("process %s (%s) killed with %s of anonymous memory", m[1], m[2], m[3])
	}
	return fmt.Sprintf("process %d (%s) killed", k.PID, k.Process)
}

// kernelKill finds the kernel's line for this kill in the node's dmesg: by container ID
// when the cgroup path names it, else the pod's latest kill.
func kernelKill(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, containerID string) *analyze.OOMKill {
	run, _ := v.ContainerRun(p, c.Name)
	kills := run.OOMKills
	id := analyze.ContainerID(containerID)
	var latest *analyze.OOMKill
	for _, k := range kills {
		if id != "" && k.ContainerID == id {
			return k
		}
		latest = k
	}
	return latest
}
