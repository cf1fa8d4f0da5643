package analyze

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// How a container's process ended, as several stages read it: what an exit code means,
// the seccomp profile behind a SIGSYS, the evidence that cites a termination, whether a
// restarted container has settled, and the kubelet's words for a probe kill.

// The kubelet's kill message (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
// computePodActions): "Container %s failed liveness probe, will be restarted", also
// logged as "Message for Container of pod" containerMessage="…".
const (
	LivenessKill = "failed liveness probe"
	StartupKill  = "failed startup probe"
)

// ExitMeaning explains an exit code the way the process's end is usually read.
func ExitMeaning(code int32) string {
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
	case ExitSIGSYS:
		return "SIGSYS: the kernel killed it for a system call its seccomp profile forbids"
	}
	if code > 128 && code < 160 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	return "an error code of the application's own"
}

// ExitSIGSYS is 128+SIGSYS: the kernel sends SIGSYS to a process whose seccomp filter
// answers a system call with SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD or
// SECCOMP_RET_TRAP (kernel/seccomp.c; SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL and
// SCMP_ACT_TRAP in an OCI profile).
const ExitSIGSYS = 159

// SeccompProfile says which seccomp profile a container runs under, from its own
// securityContext, else the pod's, else the annotations clusters before 1.27 read, with
// the field that says so. It returns "" when the spec names none (the runtime's default
// then applies only if the kubelet's seccompDefault is on).
func SeccompProfile(p *Pod, c ContainerInfo) (string, Location) {
	describe := func(sp *corev1.SeccompProfile) string {
		if sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile != nil {
			return fmt.Sprintf("Localhost %q", *sp.LocalhostProfile)
		}
		return string(sp.Type)
	}
	if c.Spec != nil && c.Spec.SecurityContext != nil && c.Spec.SecurityContext.SeccompProfile != nil {
		return describe(c.Spec.SecurityContext.SeccompProfile), c.SpecLoc().At("securityContext", "seccompProfile")
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
	return "", Location{}
}

// TerminationEvidence cites a container's termination record: reason, exit code and
// when the instance started and finished, dated at its finish.
func TerminationEvidence(t *corev1.ContainerStateTerminated, loc Location) Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d", t.Reason, t.ExitCode)+
		when(", started ", t.StartedAt.Time)+when(", finished ", t.FinishedAt.Time), t.FinishedAt.Time)
}

// when says " at TIME" (with the given words), or nothing when the evidence shows no
// time (a pasted describe excerpt without its Started and Finished lines).
func when(words string, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return words + t.UTC().Format(time.RFC3339)
}

// ExitEvidence cites the short form of a termination record: reason, exit code and
// when the instance finished, dated at its finish.
func ExitEvidence(t *corev1.ContainerStateTerminated, loc Location) Evidence {
	return loc.Evidence(fmt.Sprintf("terminated %s, exit code %d", t.Reason, t.ExitCode)+when(", finished ", t.FinishedAt.Time), t.FinishedAt.Time)
}

// CrashLoopWindow is how long after a restart a running container still counts as
// crash-looping: the kubelet's back-off tops out at five minutes.
const CrashLoopWindow = 10 * time.Minute

// SettledRunning reports whether a container has been running for longer than
// CrashLoopWindow: whatever its restarts, it no longer crash-loops.
func (v *View) SettledRunning(st *corev1.ContainerStatus) bool {
	r := st.State.Running
	return r != nil && v.CollectedAt().Sub(r.StartedAt.Time) > CrashLoopWindow
}

// PodWorkloadAndNode lists the pod, its workload and, once scheduled, its node as a
// finding's subjects, and gives the group key of v.PodAndWorkload.
func (v *View) PodWorkloadAndNode(p *Pod) ([]ObjectRef, string) {
	subjects, group := v.PodAndWorkload(p)
	if node := p.Obj.Spec.NodeName; node != "" {
		subjects = append(subjects, NodeRef(node))
	}
	return subjects, group
}

// OOMReason is the reason the kubelet copies from the runtime's container status
// (pkg/kubelet/kuberuntime/helpers.go; k8s.io/api core/v1 ContainerStateTerminated).
const OOMReason = "OOMKilled"
