package rules

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// How a container's process ended: what an exit code means, which termination to explain,
// the evidence that cites it, and the notes a cause adds from the termination message and log.

// exitMeaning explains an exit code the way the process's end is usually read.
func exitMeaning(code int32) string {
	switch code {
	case 1:
		return "a generic application error"
	case 2:
		return "an application error (also what a Go panic and a shell usage error return)"
	case 126:
		return "the command exists but cannot be executed"
	case 134:
		return "SIGABRT: the process aborted itself"
	case 127:
		return "command not found"
	case 137:
		return "SIGKILL: killed from outside"
	case 139:
		return "SIGSEGV: the process crashed on an invalid memory access"
	case 143:
		return "SIGTERM: the process was asked to stop"
	case exitSIGSYS:
		return "SIGSYS: the kernel killed it for a system call its seccomp profile forbids"
	}
	if code > 128 && code < 160 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	return "an error code of the application's own"
}

// exitSIGSYS is 128+SIGSYS: the kernel sends SIGSYS to a process whose seccomp filter
// answers a system call with SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD or
// SECCOMP_RET_TRAP (kernel/seccomp.c; SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL and
// SCMP_ACT_TRAP in an OCI profile).
const exitSIGSYS = 159

// seccompProfile says which seccomp profile a container runs under, from its own
// securityContext, else the pod's, else the annotations clusters before 1.27 read, with
// the field that says so. It returns "" when the spec names none (the runtime's default
// then applies only if the kubelet's seccompDefault is on).
func seccompProfile(p *analyze.Pod, c analyze.ContainerInfo) (string, analyze.Location) {
	describe := func(sp *corev1.SeccompProfile) string {
		if sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile != nil {
			return fmt.Sprintf("Localhost %q", *sp.LocalhostProfile)
		}
		return string(sp.Type)
	}
	if c.Spec != nil && c.Spec.SecurityContext != nil && c.Spec.SecurityContext.SeccompProfile != nil {
		return describe(c.Spec.SecurityContext.SeccompProfile), c.SpecLoc.At("securityContext", "seccompProfile")
	}
	pod := p.Obj
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		return describe(sc.SeccompProfile), p.Loc.At("spec", "securityContext", "seccompProfile")
	}
	for _, key := range []string{corev1.SeccompContainerAnnotationKeyPrefix + c.Name, corev1.SeccompPodAnnotationKey} {
		if v, ok := pod.Annotations[key]; ok && v != "" {
			return fmt.Sprintf("%q (annotation %s)", v, key), p.Loc.At("metadata", "annotations", key)
		}
	}
	return "", analyze.Location{}
}

// crashTermination picks the termination to explain: the current one when the
// container is down, else the last one; with the matching log instance.
func crashTermination(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (*corev1.ContainerStateTerminated, analyze.Location, *analyze.ContainerLog) {
	st := c.Status
	r := runOf(v, p, c.Name)
	var logs []*analyze.ContainerLog
	t, loc := st.LastTerminationState.Terminated, c.StatusLoc.At("lastState", "terminated")
	switch {
	case st.State.Terminated != nil:
		t, loc = st.State.Terminated, c.StatusLoc.At("state", "terminated")
		logs = []*analyze.ContainerLog{r.Log, r.PreviousLog}
	case st.State.Waiting != nil:
		// While waiting to restart, the "current" log is the crashed instance's too.
		logs = []*analyze.ContainerLog{r.PreviousLog, r.Log}
	default:
		logs = []*analyze.ContainerLog{r.PreviousLog}
	}
	for _, l := range logs {
		if usableLog(l) {
			return t, loc, l
		}
	}
	return t, loc, nil
}

// terminationEvidence cites a container's termination record: reason, exit code and
// when the instance started and finished, dated at its finish.
func terminationEvidence(t *corev1.ContainerStateTerminated, loc analyze.Location) analyze.Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d, started %s, finished %s", t.Reason, t.ExitCode,
		t.StartedAt.UTC().Format(time.RFC3339), t.FinishedAt.UTC().Format(time.RFC3339)), t.FinishedAt.Time)
}

// exitEvidence cites the short form of a termination record: reason, exit code and
// when the instance finished, dated at its finish.
func exitEvidence(t *corev1.ContainerStateTerminated, loc analyze.Location) analyze.Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d, finished %s", t.Reason, t.ExitCode,
		t.FinishedAt.UTC().Format(time.RFC3339)), t.FinishedAt.Time)
}

// crashLoopWindow is how long after a restart a running container still counts as
// crash-looping: the kubelet's back-off tops out at five minutes.
const crashLoopWindow = 10 * time.Minute

// settledRunning reports whether a container has been running for longer than
// crashLoopWindow: whatever its restarts, it no longer crash-loops.
func settledRunning(v *analyze.View, st *corev1.ContainerStatus) bool {
	r := st.State.Running
	return r != nil && v.CollectedAt().Sub(r.StartedAt.Time) > crashLoopWindow
}

// podWorkloadAndNode lists the pod, its workload and, once scheduled, its node as a
// finding's subjects, and gives the group key of v.PodAndWorkload.
func podWorkloadAndNode(v *analyze.View, p *analyze.Pod) ([]analyze.ObjectRef, string) {
	subjects, group := v.PodAndWorkload(p)
	if node := p.Obj.Spec.NodeName; node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
	}
	return subjects, group
}

// exitNotes reads what a terminated instance left behind, as clauses to add to a cause:
// its termination message and its log's telling lines, or, when the bundle collected
// logs but not this one, that instance's (e.g. "the crashed instance") log is missing.
// It returns the log it read too.
func exitNotes(v *analyze.View, t *corev1.ContainerStateTerminated, log *analyze.ContainerLog, instance string) (string, crashLog) {
	var note string
	if t.Message != "" {
		note += fmt.Sprintf("; termination message: %q", phrase.FirstLine(t.Message))
	}
	cl := readCrashLog(log, t.FinishedAt.Time)
	switch {
	case cl.phrase() != "":
		note += "; " + cl.phrase()
	case log == nil && v.Has(analyze.ContainerLogs):
		note += "; " + instance + "'s log is not in the bundle"
	case log == nil:
		// A paste of describe and events: the exit code is all there is.
		note += "; the evidence holds no container log, which would say why it exits (kubectl logs --previous)"
	}
	return note, cl
}

// oomReason is the reason the kubelet copies from the runtime's container status
// (pkg/kubelet/kuberuntime/helpers.go; k8s.io/api core/v1 ContainerStateTerminated).
const oomReason = "OOMKilled"
