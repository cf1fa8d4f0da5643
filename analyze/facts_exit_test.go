package analyze_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/analyze"
)

func TestExitMeaningAndEvidence(t *testing.T) {
	for code, want := range map[int32]string{
		1: "a generic application error", 127: "command not found", 137: "SIGKILL: killed from outside",
		analyze.ExitSIGSYS: "SIGSYS: the kernel killed it for a system call its seccomp profile forbids",
		130:                "killed by signal 2", 42: "an error code of the application's own",
	} {
		if got := analyze.ExitMeaning(code); got != want {
			t.Errorf("ExitMeaning(%d) = %q, want %q", code, got, want)
		}
	}
	at := time.Date(2026, 11, 29, 10, 0, 5, 0, time.UTC)
	term := &corev1.ContainerStateTerminated{Reason: analyze.OOMReason, ExitCode: 137,
		StartedAt: metav1.NewTime(at.Add(-time.Minute)), FinishedAt: metav1.NewTime(at)}
	var loc analyze.Location
	if got, want := analyze.ExitEvidence(term, loc).Excerpt, "terminated OOMKilled, exit code 137, finished 2026-11-29T10:00:05Z"; got != want {
		t.Errorf("ExitEvidence = %q, want %q", got, want)
	}
	if got, want := analyze.TerminationEvidence(term, loc).Excerpt,
		"terminated OOMKilled, exit code 137, started 2026-11-29T09:59:05Z, finished 2026-11-29T10:00:05Z"; got != want {
		t.Errorf("TerminationEvidence = %q, want %q", got, want)
	}
}

// The seccomp profile is the container's, else the pod's, else the old annotations'.
func TestSeccompProfile(t *testing.T) {
	local := "profiles/deny.json"
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}}
	p := &analyze.Pod{Obj: pod}
	spec := &corev1.Container{Name: "app"}
	c := analyze.ContainerInfo{Name: "app", Spec: spec}
	if got, _ := analyze.SeccompProfile(p, c); got != "RuntimeDefault" {
		t.Errorf("pod's profile = %q", got)
	}
	spec.SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &local}}
	if got, _ := analyze.SeccompProfile(p, c); got != `Localhost "profiles/deny.json"` {
		t.Errorf("container's profile = %q", got)
	}
	pod.Spec.SecurityContext, spec.SecurityContext = nil, nil
	pod.Annotations = map[string]string{corev1.SeccompPodAnnotationKey: "unconfined"}
	if got, _ := analyze.SeccompProfile(p, c); got != `"unconfined" (annotation `+corev1.SeccompPodAnnotationKey+`)` {
		t.Errorf("annotated profile = %q", got)
	}
}
