package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ControllerStatefulSetStuck finds OrderedReady StatefulSets that do not create their
// next pod because an earlier one is not Running and Ready.
var ControllerStatefulSetStuck = &analyze.Rule{
	ID:       "controller-statefulset-stuck",
	Stage:    analyze.StageController,
	Title:    "StatefulSet waits on a pod that never becomes ready, so its next pods are not created",
	Doc:      controllerStatefulSetStuckDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		AnyOf:    []analyze.Kind{analyze.StatefulSets, analyze.Fragments},
		Optional: []analyze.Kind{analyze.Pods, analyze.Events},
	},
	Run:     controllerStatefulSetStuck,
	Outcome: true,
}

const controllerStatefulSetStuckDoc = `With podManagementPolicy OrderedReady (the default) a StatefulSet creates its pods one
at a time in ordinal order, and creates pod N+1 only when pods 0..N are Running and
Ready. One pod that never becomes ready (its readiness probe fails, it crashes, it
cannot pull its image, it is not scheduled) halts the StatefulSet: the later pods are
never created and kubectl shows fewer pods than replicas with no error about them. The
StatefulSet controller records no event for the wait; the missing pods are the symptom.

The finding names the pod the controller waits on and what that pod shows, and the
ordinals that do not exist. It lists the waited-on pod as a subject and reports an
outcome: the pod's own finding (a failing probe, a crash) is the root cause and this one,
the missing pods the user asks about, is listed as its consequence. Only when the pod
left no evidence of its own is the waiting StatefulSet the root.

A rolling update stops short in the same silent way when the StatefulSet's
updateStrategy sets rollingUpdate.partition: the controller updates only the pods whose
ordinal is at least the partition, and recreates the others, when they are deleted, at
the old revision. podflow reports it when the pods' controller-revision-hash labels show
the pods below the partition on one revision and the rest on another, from the objects
or from a paste of the updateStrategy and the pods' labels.

## Confirm on a live cluster

    kubectl get statefulset -n NAMESPACE NAME -o jsonpath='{.spec.podManagementPolicy} {.spec.replicas} {.status.replicas} {.status.readyReplicas}'
    kubectl get pods -n NAMESPACE -l SELECTOR
    kubectl describe pod -n NAMESPACE NAME-0

## Fix

Fix what keeps the waited-on pod from becoming ready; the controller then creates the
next pods. If the pods do not depend on each other's start order, set
podManagementPolicy: Parallel (only at creation: the field cannot be changed, so the
StatefulSet must be recreated, with kubectl delete --cascade=orphan to keep its pods).
`

func controllerStatefulSetStuck(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, s := range v.StatefulSets() {
		sts := s.Obj
		if sts.Spec.PodManagementPolicy == appsv1.ParallelPodManagement || sts.DeletionTimestamp != nil {
			continue
		}
		want := int(analyze.Replicas(sts.Spec.Replicas))
		start := 0
		if sts.Spec.Ordinals != nil {
			start = int(sts.Spec.Ordinals.Start)
		}
		pods := statefulSetPods(v, s)
		missing := []string{}
		firstMissing := -1
		for i := start; i < start+want; i++ {
			if pods[i] == nil {
				missing = append(missing, fmt.Sprintf("%s-%d", sts.Name, i))
				if firstMissing < 0 {
					firstMissing = i
				}
			}
		}
		if firstMissing < 0 {
			continue
		}
		var blocking *analyze.Pod
		for i := start; i < firstMissing; i++ {
			if p := pods[i]; p != nil && (p.Obj.DeletionTimestamp != nil || !analyze.IsReady(p)) {
				blocking = p
				break
			}
		}
		if blocking == nil {
			continue // every earlier pod is ready: the controller is about to create the next one
		}
		out = append(out, statefulSetStuckFinding(v, s, blocking, missing, len(pods)))
	}
	for _, s := range v.StatefulSets() {
		ru := s.Obj.Spec.UpdateStrategy.RollingUpdate
		if ru == nil || ru.Partition == nil || *ru.Partition <= 0 {
			continue
		}
		revs := map[int]podRevision{}
		for n, p := range statefulSetPods(v, s) {
			if h := p.Obj.Labels["controller-revision-hash"]; h != "" {
				revs[n] = podRevision{p.Obj.Name, h, p.Loc.At("metadata", "labels").Evidence(p.Obj.Name+" controller-revision-hash "+h, p.Obj.CreationTimestamp.Time)}
			}
		}
		partEv := s.Loc.At("spec", "updateStrategy", "rollingUpdate", "partition").Evidence(fmt.Sprintf("partition: %d", *ru.Partition), time.Time{})
		if f, ok := partitionFinding(s.Ref(), int(*ru.Partition), partEv, revs, ""); ok {
			out = append(out, f)
		}
	}
	if len(v.StatefulSets()) == 0 {
		out = append(out, pastedPartitionFindings(v)...)
	}
	return out
}

// podRevision is the revision a StatefulSet's pod runs, with where it is seen.
type podRevision struct {
	pod, revision string
	ev            analyze.Evidence
}

// pastedPartitionFindings reads the partition relation from a paste that holds one
// rollingUpdate piece and the pods' revision labels, not the StatefulSet.
func pastedPartitionFindings(v *analyze.View) []analyze.Finding {
	parts := v.PastedPartitions()
	if len(parts) != 1 || parts[0].Partition <= 0 {
		return nil
	}
	bySet := map[string]map[int]podRevision{}
	var names []string
	for _, r := range v.PastedPodRevisions() {
		i := strings.LastIndexByte(r.Pod, '-')
		n, err := strconv.Atoi(r.Pod[i+1:])
		if i <= 0 || err != nil {
			continue
		}
		set := r.Pod[:i]
		if bySet[set] == nil {
			bySet[set] = map[int]podRevision{}
			names = append(names, set)
		}
		bySet[set][n] = podRevision{r.Pod, r.Revision, r.Evidence[1]}
	}
	var out []analyze.Finding
	for _, set := range names {
		ref := analyze.ObjectRef{Kind: "StatefulSet", Name: set}
		if f, ok := partitionFinding(ref, parts[0].Partition, parts[0].Evidence, bySet[set], " (the StatefulSet is known from the pasted updateStrategy and its pods' labels)"); ok {
			out = append(out, f)
		}
	}
	return out
}

// partitionFinding reports a rolling update held at its partition: the pods at or
// above the partition share one revision, and some below it run another.
func partitionFinding(ref analyze.ObjectRef, partition int, partEv analyze.Evidence, revs map[int]podRevision, seen string) (analyze.Finding, bool) {
	updated := ""
	var held []podRevision
	ordinals := make([]int, 0, len(revs))
	for n := range revs {
		ordinals = append(ordinals, n)
	}
	sort.Ints(ordinals)
	for _, n := range ordinals {
		r := revs[n]
		if n < partition {
			continue
		}
		if updated != "" && r.revision != updated {
			return analyze.Finding{}, false // the update is still rolling above the partition
		}
		updated = r.revision
	}
	for _, n := range ordinals {
		if r := revs[n]; n < partition && r.revision != updated {
			held = append(held, r)
		}
	}
	if updated == "" || len(held) == 0 {
		return analyze.Finding{}, false
	}
	var heldNames []string
	evidence := []analyze.Evidence{partEv}
	for _, r := range held {
		heldNames = append(heldNames, r.pod)
		evidence = append(evidence, r.ev)
	}
	for _, n := range ordinals {
		if n >= partition {
			evidence = append(evidence, revs[n].ev)
			break
		}
	}
	cause := fmt.Sprintf("StatefulSet %s's rolling update stops at its partition: updateStrategy.rollingUpdate.partition is %d, so the controller updates only pods with an ordinal of %d or more (they run revision %s) "+
		"and keeps, or recreates when deleted, %s at the old revision %s%s",
		ref.NamespacedName(), partition, partition, updated, phrase.JoinCapped(heldNames, "pod(s)"), held[0].revision, seen)
	subjects := []analyze.ObjectRef{ref}
	for _, r := range held {
		subjects = append(subjects, analyze.ObjectRef{Kind: "Pod", Namespace: ref.Namespace, Name: r.pod})
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Lower updateStrategy.rollingUpdate.partition of StatefulSet %s to 0 (or to the lowest ordinal to update) when the staged rollout is to go on: "+
			"kubectl patch statefulset %s -p '{\"spec\":{\"updateStrategy\":{\"rollingUpdate\":{\"partition\":0}}}}'.", ref.Name, ref.Name),
		Confirm: []string{
			analyze.Command("kubectl get statefulset %s -o jsonpath='{.spec.updateStrategy} {.status.currentRevision} {.status.updateRevision}'", ref.Name),
			analyze.Command("kubectl get pods -L controller-revision-hash -l statefulset.kubernetes.io/pod-name"),
		},
		GroupKey: ref.String() + "\x00partition",
	}, true
}

// podIndexLabel carries a StatefulSet pod's ordinal (k8s.io/api/apps/v1
// PodIndexLabel, set by the controller since v1.28). It survives renaming, as by
// podflow's pseudonymization, where the name's suffix does not.
const podIndexLabel = "apps.kubernetes.io/pod-index"

// statefulSetPods maps ordinal to the StatefulSet's pods (by controller, and the pod
// index label or else the name's suffix).
func statefulSetPods(v *analyze.View, s *analyze.StatefulSet) map[int]*analyze.Pod {
	out := map[int]*analyze.Pod{}
	prefix := s.Obj.Name + "-"
	for _, p := range v.PodsControlledBy(s.Ref()) {
		index, ok := p.Obj.Labels[podIndexLabel]
		if !ok {
			if index, ok = strings.CutPrefix(p.Obj.Name, prefix); !ok {
				continue
			}
		}
		if n, err := strconv.Atoi(index); err == nil {
			out[n] = p
		}
	}
	return out
}

func statefulSetStuckFinding(v *analyze.View, s *analyze.StatefulSet, blocking *analyze.Pod, missing []string, have int) analyze.Finding {
	sts := s.Obj
	want := analyze.Replicas(sts.Spec.Replicas)
	evidence := []analyze.Evidence{
		s.Loc.At("status").Evidence(fmt.Sprintf("replicas %d desired, %d current, %d ready", want, sts.Status.Replicas, sts.Status.ReadyReplicas), v.CollectedAt()),
	}
	if sts.Spec.PodManagementPolicy != "" {
		evidence = append(evidence, s.Loc.At("spec", "podManagementPolicy").Evidence("podManagementPolicy "+string(sts.Spec.PodManagementPolicy), time.Time{}))
	}
	text, ev := v.PodStateText(blocking)
	evidence = append(evidence, ev...)
	cause := fmt.Sprintf("StatefulSet %s has %d of %d pod(s), %d ready: with podManagementPolicy OrderedReady it creates %s only after %s is Running and Ready, and %s %s",
		s.Ref().NamespacedName(), have, want, sts.Status.ReadyReplicas, phrase.JoinCapped(missing, "pod(s)"), blocking.Obj.Name, blocking.Obj.Name, text)
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{blocking.Ref(), s.Ref()},
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Fix what keeps pod %s from becoming ready; StatefulSet %s then creates %s. "+
			"If its pods need no start order, recreate it with podManagementPolicy: Parallel.", blocking.Obj.Name, s.Ref().NamespacedName(), missing[0]),
		Confirm: []string{
			analyze.Command("kubectl get statefulset -n %s %s -o jsonpath='{.spec.podManagementPolicy} {.spec.replicas} {.status.replicas} {.status.readyReplicas}'", sts.Namespace, sts.Name),
			analyze.Command("kubectl describe pod -n %s %s", sts.Namespace, blocking.Obj.Name),
		},
		GroupKey: s.Ref().String(),
	}
}
