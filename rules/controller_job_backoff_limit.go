package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ControllerJobBackoffLimit finds Jobs that gave up because too many of their pods failed.
var ControllerJobBackoffLimit = &analyze.Rule{
	ID:       "controller-job-backoff-limit",
	Stage:    analyze.StageController,
	Title:    "Job failed: its pods failed more often than backoffLimit allows",
	Doc:      controllerJobBackoffLimitDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Jobs},
		Optional: []analyze.Kind{analyze.Pods, analyze.Events, analyze.ContainerLogs},
	},
	Run:     controllerJobBackoffLimit,
	Outcome: true,
	// The Job controller's Failed condition and Warning event (pkg/controller/job
	// job_controller.go, reason BackoffLimitExceeded), as a ticket quotes it without the
	// Job object.
	Examples: analyze.RuleExamples{
		Fires: []string{`Job has reached the specified backoff limit`},
	},
}

const controllerJobBackoffLimitDoc = `The Job controller counts the Job's failed pods; once more pods have failed than
spec.backoffLimit allows (default 6), it stops creating pods, deletes any still running
and marks the Job Failed with reason BackoffLimitExceeded ("Job has reached the
specified backoff limit"), also recorded as a Warning event on the Job. A Failed Job
never retries on its own. The limit is only the reason the Job stopped: why its pods
failed is in the pods themselves (their exit codes and logs).

The finding names the Job, its limit and failed count, and the last failed pod's own
cause: its container's exit code and the last error line of its log. It lists the
failed pods as subjects. It reports an outcome, not a broken link: when a pod has a
finding of its own (a crash, an OOM kill), that finding is the root cause and this one is
listed as its consequence; only when the pods left no evidence is this the root.

## Confirm on a live cluster

    kubectl get job -n NAMESPACE JOB -o jsonpath='{.spec.backoffLimit} {.status.failed} {.status.conditions}'
    kubectl get pods -n NAMESPACE -l batch.kubernetes.io/job-name=JOB
    kubectl logs -n NAMESPACE POD --tail=50

## Fix

Fix why the pods fail, from their exit code and log, then create the Job again (delete
and re-apply it; a CronJob starts a new Job at its next schedule). Raise backoffLimit
only when the failures are transient (a dependency that comes up later); a pod that
fails the same way every time fails again however often it is retried.
`

// jobBackoffReason is the reason of the Failed (and FailureTarget) condition
// (k8s.io/api/batch/v1 JobReasonBackoffLimitExceeded).
const jobBackoffReason = batchv1.JobReasonBackoffLimitExceeded

// defaultBackoffLimit is what the API server sets when spec.backoffLimit is absent.
const defaultBackoffLimit = 6

func controllerJobBackoffLimit(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, j := range v.Jobs() {
		i, c := jobBackoffCondition(j.Obj)
		if c == nil {
			continue
		}
		out = append(out, jobBackoffFinding(v, j, i, c))
	}
	return out
}

// jobBackoffCondition returns the Failed condition with reason BackoffLimitExceeded, or
// the interim FailureTarget one while the controller is still removing pod finalizers.
func jobBackoffCondition(job *batchv1.Job) (int, *batchv1.JobCondition) {
	found, at := -1, (*batchv1.JobCondition)(nil)
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue || c.Reason != jobBackoffReason {
			continue
		}
		if c.Type == batchv1.JobFailed {
			return i, c
		}
		if c.Type == batchv1.JobFailureTarget {
			found, at = i, c
		}
	}
	return found, at
}

// failedPod is one of the Job's failed pods and what its failed container says.
type failedPod struct {
	pod       *analyze.Pod
	container string
	term      *corev1.ContainerStateTerminated
	termLoc   analyze.Location
	log       *analyze.ContainerLog
	finished  time.Time
}

func jobBackoffFinding(v *analyze.View, j *analyze.Job, i int, c *batchv1.JobCondition) analyze.Finding {
	job := j.Obj
	limit := int32(defaultBackoffLimit)
	limitLoc := j.Loc.At("spec")
	if job.Spec.BackoffLimit != nil {
		limit, limitLoc = *job.Spec.BackoffLimit, j.Loc.At("spec", "backoffLimit")
	}
	evidence := []analyze.Evidence{
		j.Loc.At("status", "conditions", i).Evidence(fmt.Sprintf("%s %s: %s", c.Type, c.Reason, c.Message), c.LastTransitionTime.Time),
		limitLoc.Evidence(fmt.Sprintf("backoffLimit %d", limit), time.Time{}),
		j.Loc.At("status").Evidence(fmt.Sprintf("failed %d, active %d, succeeded %d", job.Status.Failed, job.Status.Active, job.Status.Succeeded), v.CollectedAt()),
	}
	if e := analyze.LatestEvent(v.EventsFor(j.Ref()), "", jobBackoffReason); e != nil {
		evidence = append(evidence, e.Evidence())
	}
	subjects := []analyze.ObjectRef{j.Ref()}
	if w := v.Controller(j.Meta()); w != nil {
		subjects = append(subjects, *w)
	}
	failed := jobFailedPods(v, j)
	for _, f := range failed {
		subjects = append(subjects, f.pod.Ref())
	}
	allows := fmt.Sprintf("more than its backoffLimit (backoffLimit: %d) allows", limit)
	if job.Spec.BackoffLimit == nil && analyze.Partial(job.ObjectMeta, "spec") {
		// A pasted status block: the limit is not in the evidence, only that it was hit.
		allows = "as many as its backoffLimit (not in the evidence) allows"
		evidence = slices.DeleteFunc(evidence, func(e analyze.Evidence) bool { return strings.HasPrefix(e.Excerpt, "backoffLimit ") })
	}
	cause := fmt.Sprintf("Job %s failed with BackoffLimitExceeded at %s: %d of its pods failed, %s, so it creates no more pods",
		j.Ref().NamespacedName(), c.LastTransitionTime.UTC().Format(time.RFC3339), job.Status.Failed, allows)
	why := "the pods' failure"
	if len(failed) > 0 {
		last := failed[len(failed)-1]
		text, podEvidence := failedPodText(v, last)
		evidence = append(evidence, podEvidence...)
		cause += "; the last failed pod " + last.pod.Obj.Name + ": " + text
		why = fmt.Sprintf("why pod %s failed (%s)", last.pod.Obj.Name, text)
	} else if v.Has(analyze.Pods) {
		cause += "; its failed pods are no longer in the bundle"
	}
	if cmd := templateCommand(job.Spec.Template.Spec.Containers); len(failed) == 0 && cmd != "" {
		// No failed pod shows why; the command every one of them ran is what failed.
		cause += "; its pods run " + cmd
		why = "the command its pods run (" + cmd + ")"
	}
	confirm := []string{
		analyze.Command("kubectl get job -n %s %s -o jsonpath='{.spec.backoffLimit} {.status.failed} {.status.conditions}'", job.Namespace, job.Name),
		analyze.Command("kubectl get pods -n %s -l batch.kubernetes.io/job-name=%s", job.Namespace, job.Name),
	}
	if len(failed) > 0 {
		last := failed[len(failed)-1]
		confirm = append(confirm, analyze.Command("kubectl logs -n %s %s -c %s --tail=50", job.Namespace, last.pod.Obj.Name, last.container))
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Fix %s, then create Job %s again: a Failed Job does not retry. Raise backoffLimit only if the failures are transient.",
			why, j.Ref().NamespacedName()),
		Confirm:  confirm,
		GroupKey: j.Ref().String(),
	}
}

// jobFailedPods lists the Job's failed pods, oldest failure first.
func jobFailedPods(v *analyze.View, j *analyze.Job) []failedPod {
	var out []failedPod
	for _, p := range v.Pods() {
		owner := v.Controller(p.Meta())
		if owner == nil || owner.Kind != "Job" || owner.Namespace != j.Obj.Namespace || owner.Name != j.Obj.Name ||
			(owner.UID != "" && j.Obj.UID != "" && owner.UID != string(j.Obj.UID)) {
			continue
		}
		if f, ok := podFailure(v, p); ok {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].finished.Before(out[b].finished) })
	return out
}

// podFailure finds the container whose non-zero exit failed a pod (the latest, when
// several did), or reports a pod that failed as a whole (evicted, deadline exceeded).
func podFailure(v *analyze.View, p *analyze.Pod) (failedPod, bool) {
	f := failedPod{pod: p}
	for _, c := range analyze.Containers(p) {
		if c.Status == nil {
			continue
		}
		t, loc, log := v.CrashTermination(p, c)
		if t == nil || t.ExitCode == 0 || (f.term != nil && !t.FinishedAt.After(f.finished)) {
			continue
		}
		f.container, f.term, f.termLoc, f.log, f.finished = c.Name, t, loc, log, t.FinishedAt.Time
	}
	if f.term != nil {
		return f, true
	}
	if p.Obj.Status.Phase == corev1.PodFailed {
		f.finished = p.Obj.CreationTimestamp.Time
		return f, true
	}
	return f, false
}

// failedPodText says how a failed pod ended, with the evidence: "container migrate
// exited with code 1 (a generic application error); its log ends with "…"".
func failedPodText(v *analyze.View, f failedPod) (string, []analyze.Evidence) {
	if f.term == nil {
		st := f.pod.Obj.Status
		text := "the pod failed"
		if st.Reason != "" {
			text += " with reason " + st.Reason
		}
		if st.Message != "" {
			text += fmt.Sprintf(" (%s)", phrase.FirstLine(st.Message))
		}
		return text, []analyze.Evidence{f.pod.Loc.At("status").Evidence(text, v.CollectedAt())}
	}
	t := f.term
	reason := ""
	if t.Reason != "" && t.Reason != "Error" {
		reason = ", " + t.Reason
	}
	text := fmt.Sprintf("container %s exited with code %d (%s%s)", f.container, t.ExitCode, analyze.ExitMeaning(t.ExitCode), reason)
	evidence := []analyze.Evidence{analyze.ExitEvidence(t, f.termLoc)}
	if t.Message != "" {
		text += fmt.Sprintf("; termination message: %q", phrase.FirstLine(t.Message))
	}
	logText, logEvidence := analyze.CrashLogEvidence(f.log, t.FinishedAt.Time)
	evidence = append(evidence, logEvidence...)
	switch {
	case logText != "":
		text += fmt.Sprintf("; its log ends with %q", logText)
	case f.log == nil && v.Has(analyze.ContainerLogs):
		text += "; its log is not in the bundle"
	}
	return text, evidence
}

// templateCommand is the command line of a pod template's one container, "" when it
// has several or states none (the image's entrypoint runs).
func templateCommand(cs []corev1.Container) string {
	if len(cs) != 1 {
		return ""
	}
	return analyze.CommandLine(&cs[0])
}
