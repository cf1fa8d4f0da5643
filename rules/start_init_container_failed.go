package rules

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// StartInitContainerFailed finds pods whose containers cannot start because an init
// container keeps failing.
var StartInitContainerFailed = &analyze.Rule{
	ID:       "start-init-container-failed",
	Stage:    analyze.StageStart,
	Title:    "init container fails, so the pod's containers never start",
	Doc:      startInitContainerFailedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.ContainerLogs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: startInitContainerFailed,
}

const startInitContainerFailedDoc = `Init containers run one after another before the pod's containers, and each must exit
0. When one exits with another code, the pod stays Pending with the condition
Initialized=False ("containers with incomplete status: [migrate]") and its containers
wait in PodInitializing. With restartPolicy Always or OnFailure the kubelet reruns the
init container with back-off (kubectl shows Init:CrashLoopBackOff, then Init:Error
between attempts); with restartPolicy Never the pod fails for good (phase Failed).

The exit code and the last lines of the init container's log say why: 1 and 2 are the
program's own errors (a migration that fails, a dependency it waits for that answers
with an error), 128+N a kill by signal N. An init container that cannot start at all
(command not found, not executable), that is OOM-killed, or whose config cannot be built
is reported by that failure's own rule instead.

A ticket often shows the pod only as a kubectl get pods row (Init:CrashLoopBackOff) and
the output of kubectl logs POD -c NAME: the container whose log is there is then the
failing init container (the app containers never ran), and its log says why.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.initContainerStatuses}'
    kubectl logs -n NAMESPACE POD -c INIT_CONTAINER --previous --tail=50

## Fix

Fix what the init container's log reports (often a dependency it needs is missing or
unreachable, or a one-time step such as a migration fails). An init container that waits
for a dependency should retry until it is there rather than exit. The kubelet reruns the
init container by itself; a pod with restartPolicy Never must be recreated.
`

func startInitContainerFailed(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	// Init containers run in order: only the first failing one of a pod matters.
	var reported *analyze.Pod
	for r := range v.ContainerRuns() {
		p, c := r.Subject.Pod, r.Container
		if p == reported || p.Obj.DeletionTimestamp != nil {
			continue
		}
		if cond, _ := analyze.PodCondition(p, corev1.PodInitialized); cond != nil && cond.Status == corev1.ConditionTrue {
			continue
		}
		st := c.Status
		if !c.BlocksStart() || st == nil {
			continue
		}
		if t := st.State.Terminated; t != nil && t.ExitCode == 0 {
			continue
		}
		t, loc, log := v.CrashTermination(p, c)
		if t == nil || t.ExitCode == 0 && !exitCodeCut(t) || t.Reason == analyze.OOMReason || analyze.IsStartFailureReason(t.Reason) ||
			t.ExitCode == analyze.ExitCommandNotFound || t.ExitCode == analyze.ExitCannotExecute {
			continue
		}
		out = append(out, initFinding(v, p, c, t, loc, log))
		reported = p
	}
	return append(out, initFromTableAndLog(v, reported)...)
}

// initFromTableAndLog reads the ticket that shows the init container only through
// kubectl: a get pods row whose STATUS is Init:CrashLoopBackOff or Init:Error, and the
// log of the one container `kubectl logs POD -c NAME` printed for that pod. The app
// containers never started, so the container whose log is there is the failing init
// container, and its log's last error lines say why.
func initFromTableAndLog(v *analyze.View, reported *analyze.Pod) []analyze.Finding {
	var out []analyze.Finding
	for _, f := range v.TableInitFailures() {
		p, name, reason := f.Pod, f.Container, f.Reason
		if p == reported {
			continue
		}
		cl := analyze.ReadCrashLog(f.Log, time.Time{})
		cause := fmt.Sprintf("init container %s fails again and again (kubectl shows %s), so the pod's containers never start", name, reason)
		if ph := cl.Phrase(); ph != "" {
			cause += "; " + ph
		}
		evidence := append([]analyze.Evidence{p.Loc.At("status").Evidence("kubectl get pods shows "+reason, time.Time{})}, cl.Evidence...)
		fix := fmt.Sprintf("Fix what init container %s reports before it exits", name)
		if cl.Text != "" {
			fix += fmt.Sprintf(" (%q)", cl.Text)
		}
		fix += "; an init container that waits for a dependency should retry rather than exit. The kubelet reruns it by itself."
		subjects, group := v.PodAndWorkload(p)
		pod := p.Obj
		out = append(out, analyze.Finding{
			Subjects:    subjects,
			Cause:       cause,
			Evidence:    evidence,
			Remediation: fix,
			Confirm: []string{
				analyze.Command("kubectl logs -n %s %s -c %s --previous --tail=50", pod.Namespace, pod.Name, name),
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.initContainerStatuses[?(@.name==\"%s\")]}'", pod.Namespace, pod.Name, name),
			},
			GroupKey: fmt.Sprintf("%s\x00%s\x00log", group, name),
		})
	}
	return out
}

// exitCodeCut reports whether a termination says its container failed (reason Error)
// but not its exit code: a describe cut before its "Exit Code:" line reads as code 0.
func exitCodeCut(t *corev1.ContainerStateTerminated) bool {
	return t.ExitCode == 0 && t.Reason == "Error"
}

func initFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, t *corev1.ContainerStateTerminated, loc analyze.Location, log *analyze.ContainerLog) analyze.Finding {
	pod := p.Obj
	st := c.Status
	evidence := []analyze.Evidence{analyze.TerminationEvidence(t, loc)}
	var state string
	switch {
	case st.State.Waiting != nil:
		w := st.State.Waiting
		state = fmt.Sprintf("waits in %s (Init:%s)", w.Reason, w.Reason)
		evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{}))
	case st.State.Running != nil:
		state = "runs again for now"
	case pod.Status.Phase == corev1.PodFailed:
		state = fmt.Sprintf("restartPolicy %s ended the pod (phase Failed)", cmp.Or(string(pod.Spec.RestartPolicy), "Always"))
	default:
		state = "has stopped again (Init:Error)"
	}
	if cond, cloc := analyze.PodCondition(p, corev1.PodInitialized); cond != nil {
		evidence = append(evidence, cloc.Evidence(fmt.Sprintf("Initialized=%s %s: %s", cond.Status, cond.Reason, cond.Message), cond.LastTransitionTime.Time))
	}
	run, _ := v.ContainerRun(p, c.Name)
	if e := analyze.LatestEvent(run.Events(), c.Name, "BackOff"); e != nil {
		evidence = append(evidence, e.Evidence())
	}
	var waiting []string
	for _, app := range analyze.Containers(p) {
		if !app.Init {
			waiting = append(waiting, app.Name)
		}
	}
	exit := fmt.Sprintf("with code %d (%s)", t.ExitCode, analyze.ExitMeaning(t.ExitCode))
	if exitCodeCut(t) {
		exit = "with an error (reason Error; the evidence is cut before its exit code)"
	}
	restarts := fmt.Sprintf(" after %d restart(s)", st.RestartCount)
	if st.RestartCount == 0 && st.State.Waiting != nil && st.State.Waiting.Reason == "CrashLoopBackOff" {
		restarts = "" // back-off means it ran before: a count of 0 is the evidence cut
	}
	apps := "the pod's containers"
	if len(waiting) > 0 {
		apps += " (" + strings.Join(waiting, ", ") + ")"
	}
	cause := fmt.Sprintf("init container %s exits %s%s and %s, so %s never start",
		c.Name, exit, restarts, state, apps)
	note, cl := v.ExitNotes(t, log, "the failed run")
	cause += note
	logText := cl.Text
	evidence = append(evidence, cl.Evidence...)
	if cmd := analyze.CommandLine(c.Spec); cmd != "" {
		evidence = append(evidence, c.SpecLoc().At(analyze.SpecCommandField(c.Spec)).Evidence("command: "+phrase.FirstLine(cmd), pod.CreationTimestamp.Time))
	}
	fix := fmt.Sprintf("Fix what init container %s reports before it exits", c.Name)
	if logText != "" {
		fix += fmt.Sprintf(" (%q)", logText)
	}
	fix += "; an init container that waits for a dependency should retry rather than exit."
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		fix += " With restartPolicy Never the pod must be recreated."
	} else {
		fix += " The kubelet reruns it by itself."
	}
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl logs -n %s %s -c %s%s --tail=50", pod.Namespace, pod.Name, c.Name, analyze.Literal(previousFlag(st))),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.initContainerStatuses[?(@.name==\"%s\")]}'", pod.Namespace, pod.Name, c.Name),
		},
		GroupKey: fmt.Sprintf("%s\x00%s\x00%d", group, c.Name, t.ExitCode),
	}
}

// previousFlag asks kubectl logs for the previous instance when the container has been
// restarted; a container that ran once has only its current one.
func previousFlag(st *corev1.ContainerStatus) string {
	if st.RestartCount == 0 {
		return ""
	}
	return " --previous"
}
