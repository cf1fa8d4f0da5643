package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// TerminationFinalizersStuck finds deleted pods that finalizers keep in the API past
// their grace period.
var TerminationFinalizersStuck = &analyze.Rule{
	ID:       "termination-finalizers-stuck",
	Stage:    analyze.StageTermination,
	Title:    "deleted pod is held by finalizers",
	Doc:      terminationFinalizersStuckDoc,
	Severity: analyze.SeverityWarning,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.Events},
	},
	Run: terminationFinalizersStuck,
}

const terminationFinalizersStuckDoc = `The pod was deleted (it has a deletionTimestamp), its grace period is over, and it is
still there because metadata.finalizers is not empty: the API server removes an object
only once every finalizer has been taken off by the controller that owns it. The pod
shows as Terminating for as long as that controller does not act: it is not running,
lacks permission, or waits for something it never gets. Finalizers on pods come from
controllers and operators (the Job controller's batch.kubernetes.io/job-tracking, a
service mesh, a backup tool); the finalizer's name usually says whose it is.

A finalizer can also stay because nobody may take it off: the API server validates every
update of a pod whole, and a mutating webhook registered for UPDATE (a sidecar
injector, a policy engine adding affinity) or LimitRanger changes the spec of the
update that only removes the finalizer, which the API server then refuses ("pod
updates may not add or remove containers", "pod updates may not change fields other
than …"), for the controller and for a kubectl patch alike.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.metadata.deletionTimestamp}{" "}{.metadata.finalizers}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state}'

## Fix

Find the controller that owns the finalizer (by its domain) and make it run and finish
its work; it then removes the finalizer and the pod goes away. If that controller is
gone for good, remove the finalizer by hand, knowing that whatever clean-up it stood for
will not happen:
kubectl patch pod -n NAMESPACE POD --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
`

// A deleted pod's deletionTimestamp is the deletion time plus its grace period: the
// moment it should be gone (k8s.io/apiserver/pkg/registry/rest/delete.go BeforeDelete).
// Past it the kubelet kills what still runs and deletes the pod with grace 0
// (pkg/kubelet/status/status_manager.go); what remains after that is held by
// finalizers. A minute of slack lets a busy kubelet finish.
const finalizerSlack = time.Minute

// jobTrackingFinalizer is the Job controller's pod finalizer
// (k8s.io/api/batch/v1 JobTrackingFinalizer).
const jobTrackingFinalizer = "batch.kubernetes.io/job-tracking"

func terminationFinalizersStuck(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	now := v.CollectedAt().Add(v.ClockSkew())
	var refused map[string][]analyze.RefusedUpdate
	for _, p := range v.Pods() {
		pod := p.Obj
		if analyze.PodDeleting(p) {
			if refused == nil {
				refused = v.RefusedPodUpdates()
			}
			if r := refused[pod.Name]; len(r) > 0 {
				out = append(out, updatesRefused(v, p, r))
				continue
			}
		}
		if pod.DeletionTimestamp == nil {
			if f := deletionFinalizer(pod.Finalizers); f != "" {
				out = append(out, deletingByFinalizer(v, p, f))
			} else if f, ok := describedDeletionHeld(v, p); ok {
				out = append(out, f)
			}
			continue
		}
		if len(pod.Finalizers) == 0 {
			continue
		}
		overdue := now.Sub(pod.DeletionTimestamp.Time)
		running, stopped, runningEv := containerStops(p)
		kubeletDone := pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
		// Without a collection time, and with nothing in the evidence dated after the
		// deletion (a pasted object alone), how long the pod has waited is not known; the
		// kubelet's grace 0 still shows that it has confirmed termination and only the
		// finalizers hold the pod. Evidence dated within the slack after the deletion
		// stays quiet, as a collected bundle does.
		untimed := v.CollectedAtInferred() && overdue < 0 && kubeletDone
		if overdue <= finalizerSlack && !untimed {
			continue
		}
		fins := append([]string(nil), pod.Finalizers...)
		sort.Strings(fins)
		grace := "no grace period"
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			grace = fmt.Sprintf("grace period %ds", *g)
		}
		evidence := []analyze.Evidence{
			p.Loc.At("metadata", "deletionTimestamp").Evidence(fmt.Sprintf("deletionTimestamp %s (%s)", phrase.Stamp(pod.DeletionTimestamp.Time), grace), pod.DeletionTimestamp.Time),
			p.Loc.At("metadata", "finalizers").Evidence("finalizers "+strings.Join(pod.Finalizers, ", "), pod.DeletionTimestamp.Time),
		}
		evidence = append(evidence, runningEv...)
		cause := fmt.Sprintf("pod %s was deleted and should have been gone at %s, %s before collection, but finalizer(s) %s keep it",
			p.Ref().NamespacedName(), phrase.Stamp(pod.DeletionTimestamp.Time), overdue.Round(time.Second), strings.Join(fins, ", "))
		if untimed {
			cause = fmt.Sprintf("pod %s was deleted (due at %s; the evidence does not say how long ago), but finalizer(s) %s keep it",
				p.Ref().NamespacedName(), phrase.Stamp(pod.DeletionTimestamp.Time), strings.Join(fins, ", "))
		}
		switch {
		case kubeletDone:
			cause += "; the kubelet has already confirmed termination (grace period now 0)"
		case running > 0:
			cause += fmt.Sprintf("; %d of its %d container(s) still report running, so the kubelet has not finished either", running, running+stopped)
		case stopped > 0:
			cause += fmt.Sprintf("; all %d of its container(s) have stopped", stopped)
		}
		subjects, group := v.PodAndWorkload(p)
		out = append(out, analyze.Finding{
			Subjects:    subjects,
			Cause:       cause,
			Evidence:    evidence,
			Remediation: finalizerRemediation(pod, fins),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.metadata.deletionTimestamp}{\" \"}{.metadata.finalizers}'", pod.Namespace, pod.Name),
			},
			GroupKey: group + "\x00" + strings.Join(fins, ","),
		})
	}
	return out
}

// deletionFinalizer returns the finalizer the API server adds only when an object is
// deleted with propagation Foreground ("foregroundDeletion") or Orphan ("orphan")
// (k8s.io/apimachinery metav1.FinalizerDeleteDependents, FinalizerOrphanDependents).
func deletionFinalizer(fins []string) string {
	for _, f := range fins {
		if f == metav1.FinalizerDeleteDependents || f == metav1.FinalizerOrphanDependents {
			return f
		}
	}
	return ""
}

// deletingByFinalizer reports a pod whose deletion shows only in its finalizers: a
// paste that kept the finalizers and cut the deletionTimestamp.
func deletingByFinalizer(v *analyze.View, p *analyze.Pod, fin string) analyze.Finding {
	pod := p.Obj
	what := "foreground deletion: the garbage collector removes it only once every object it owns is gone"
	if fin == metav1.FinalizerOrphanDependents {
		what = "orphaning deletion: the garbage collector removes it once it has released the objects it owns"
	}
	cause := fmt.Sprintf("pod %s carries the %s finalizer, which the API server adds only when the pod is deleted, so it is being deleted "+
		"(its deletionTimestamp is not in the evidence) and waits for %s", p.Ref().NamespacedName(), fin, what)
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    []analyze.Evidence{p.Loc.At("metadata", "finalizers").Evidence("finalizers "+strings.Join(pod.Finalizers, ", "), time.Time{})},
		Remediation: finalizerRemediation(pod, []string{fin}),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.metadata.deletionTimestamp}{\" \"}{.metadata.finalizers}'", pod.Namespace, pod.Name),
		},
		GroupKey: group + "\x00" + fin,
	}
}

// deletionAnnotation mirrors bundle.DeletionAnnotation: what a describe paste showed of
// a pod's deletion, which it prints without the deletionTimestamp.
const deletionAnnotation = "podflow.dev/deletion"

// describedDeletionHeld reports a pod read from `kubectl describe` that is being deleted
// and that something, most likely a finalizer, keeps in the API once its containers
// have stopped. describe prints neither finalizers nor the deletionTimestamp, so the
// deletion shows either as "Terminating (lasts 5m)", that long past the deletionTimestamp,
// or, for a pod the kubelet has already moved to Succeeded, in the kubelet's Killing
// events ("Stopping container app"): the kubelet stops a pod's regular containers
// without a failure only when the pod is deleted (eviction, a deadline and node shutdown
// make it Failed), and it removes a deleted pod as soon as they have stopped
// (pkg/kubelet/status/status_manager.go, canBeDeleted).
func describedDeletionHeld(v *analyze.View, p *analyze.Pod) (analyze.Finding, bool) {
	pod := p.Obj
	shown, ok := pod.Annotations[deletionAnnotation]
	if !ok {
		return analyze.Finding{}, false
	}
	running, stopped, _ := containerStops(p)
	if running > 0 || stopped == 0 {
		return analyze.Finding{}, false
	}
	var cause string
	var evidence []analyze.Evidence
	if lasts, ok := strings.CutPrefix(shown, "terminating "); ok {
		overdue, err := time.ParseDuration(lasts)
		if err != nil || overdue <= finalizerSlack {
			return analyze.Finding{}, false
		}
		grace := ""
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			grace = fmt.Sprintf(" (grace period %ds)", *g)
		}
		cause = fmt.Sprintf("pod %s was deleted and has been Terminating for %s past the moment it should have been gone%s, though all %d of its container(s) have stopped",
			p.Ref().NamespacedName(), overdue, grace, stopped)
		evidence = append(evidence, p.Loc.At("status").Evidence("Status: Terminating (lasts "+lasts+")", time.Time{}))
	} else {
		if pod.Status.Phase != corev1.PodSucceeded {
			return analyze.Finding{}, false
		}
		regular := map[string]bool{}
		for _, c := range pod.Spec.Containers {
			regular[c.Name] = true
		}
		var killed []string
		for _, e := range v.EventsFor(p.Ref()) {
			name, ok := strings.CutPrefix(e.Message, "Stopping container ")
			if e.Reason != "Killing" || !ok || !regular[name] || slices.Contains(killed, name) {
				continue
			}
			if c := e.Container(); c != "" && c != name {
				continue
			}
			killed = append(killed, name)
			evidence = append(evidence, e.Evidence())
		}
		if len(killed) == 0 {
			return analyze.Finding{}, false
		}
		evidence = append([]analyze.Evidence{p.Loc.At("status", "phase").Evidence("Status: Succeeded", time.Time{})}, evidence...)
		cause = fmt.Sprintf("pod %s reports Succeeded after the kubelet stopped its container(s) %s (Killing: Stopping container), which it does without a failure only "+
			"for a deleted pod, yet the pod is still there: the kubelet removes a deleted pod once its containers have stopped",
			p.Ref().NamespacedName(), strings.Join(killed, ", "))
	}
	cause += "; what keeps it is most likely a finalizer, which kubectl describe does not print (nor the deletionTimestamp)"
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Read the pod's finalizers (kubectl get pod -n %s %s -o jsonpath='{.metadata.finalizers}'): the controller that owns each "+
			"(its domain says whose) must run and finish its clean-up, which removes the finalizer and lets the pod go. If that controller is gone for good, "+
			"remove the finalizers by hand (their clean-up will not happen): "+
			"kubectl patch pod -n %s %s --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'", pod.Namespace, pod.Name, pod.Namespace, pod.Name),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.metadata.deletionTimestamp}{\" \"}{.metadata.finalizers}'", pod.Namespace, pod.Name),
		},
		GroupKey: group + "\x00described",
	}, true
}

// containerStops counts a pod's containers that still run and those that stopped, and
// cites the running ones: they show the kubelet has not finished its part.
func containerStops(p *analyze.Pod) (running, stopped int, evidence []analyze.Evidence) {
	for _, c := range analyze.Containers(p) {
		if c.Init || c.Status == nil {
			continue
		}
		if c.Status.State.Running != nil {
			running++
			evidence = append(evidence, c.StatusLoc().At("state", "running").Evidence(
				"container "+c.Name+" running since "+phrase.Stamp(c.Status.State.Running.StartedAt.Time), c.Status.State.Running.StartedAt.Time))
			continue
		}
		stopped++
	}
	return running, stopped, evidence
}

func finalizerRemediation(pod *corev1.Pod, fins []string) string {
	owner := "the controller that owns " + strings.Join(fins, ", ")
	if len(fins) == 1 && fins[0] == jobTrackingFinalizer {
		owner = "the Job controller in kube-controller-manager, which removes " + jobTrackingFinalizer + " once it has counted the pod,"
	}
	return fmt.Sprintf("Make %s run and finish its clean-up; it then removes the finalizer and the pod goes away. "+
		"If that controller is gone for good, remove the finalizer by hand (its clean-up will not happen): "+
		"kubectl patch pod -n %s %s --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'", owner, pod.Namespace, pod.Name)
}

// updatesRefused reports a deleted pod whose finalizers cannot be taken off because the
// API server refuses every update of it: the update that removes a finalizer changes
// nothing else, so the spec change it is refused for was made on its way by admission
// (a mutating webhook registered for UPDATE that injects a container, an affinity or
// tolerations; LimitRanger setting limits on a container that has none).
func updatesRefused(v *analyze.View, p *analyze.Pod, refused []analyze.RefusedUpdate) analyze.Finding {
	pod := p.Obj
	fins := append([]string(nil), pod.Finalizers...)
	sort.Strings(fins)
	held := "finalizer(s) " + strings.Join(fins, ", ") + " keep it"
	var evidence []analyze.Evidence
	if len(fins) > 0 {
		evidence = append(evidence, p.Loc.At("metadata", "finalizers").Evidence("finalizers "+strings.Join(pod.Finalizers, ", "), time.Time{}))
	} else {
		// kubectl get pods and describe do not print finalizers; a pod Terminating
		// whose updates are refused is held by one.
		held = "its finalizers (which the evidence does not show) keep it"
	}
	var said []string
	for _, r := range refused {
		said = append(said, r.Text)
		evidence = append(evidence, r.Evidence)
	}
	cause := fmt.Sprintf("pod %s was deleted but %s, and they cannot be taken off: the API server refuses the update of the pod (%s), "+
		"which an update that only removes a finalizer does not cause, so an admission plugin changes the pod's spec on every update "+
		"(a mutating webhook registered for UPDATE that injects containers, affinity or tolerations, or LimitRanger setting limits)",
		p.Ref().NamespacedName(), held, strings.Join(said, "; "))
	if ann := mutatedBy(pod.Annotations); ann != "" {
		cause += "; the pod carries " + ann
	}
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: "Make the mutating webhook (or policy) that changes the pod act on CREATE only, or skip pods being deleted (its operations and " +
			"objectSelector, or upgrade it); then the owning controller, or kubectl patch pod -n " + pod.Namespace + " " + pod.Name +
			" --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]', can take the finalizers off.",
		Confirm: []string{
			"kubectl get mutatingwebhookconfigurations -o jsonpath='{range .items[*]}{.metadata.name}{\": \"}{.webhooks[*].rules[*].operations}{\"\\n\"}{end}'",
			analyze.Command("kubectl patch pod -n %s %s --dry-run=server --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'", pod.Namespace, pod.Name),
		},
		GroupKey:     group + "\x00refused\x00" + strings.Join(fins, ","),
		HeldDeletion: true,
	}
}

// mutatedBy names the annotations on a pod that say an injector acts on it
// ("vault.hashicorp.com/agent-inject", "sidecar.istio.io/inject"): the likely author of
// the spec change.
func mutatedBy(ann map[string]string) string {
	var keys []string
	for k, val := range ann {
		if strings.HasSuffix(k, "/inject") || strings.HasSuffix(k, "-inject") {
			keys = append(keys, k+": "+val)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return "the injector annotation(s) " + strings.Join(keys, ", ")
}
