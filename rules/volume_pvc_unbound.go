package rules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// VolumePVCUnbound finds pods that cannot be scheduled because a claim they use stays
// Pending.
var VolumePVCUnbound = &analyze.Rule{
	ID:       "volume-pvc-unbound",
	Stage:    analyze.StageScheduling,
	Title:    "the pod's PersistentVolumeClaim is not bound",
	Doc:      volumePVCUnboundDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.PVCs},
		Optional: []analyze.Kind{analyze.Pods, analyze.Events, analyze.StorageClasses, analyze.PVs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: volumePVCUnbound,
}

const volumePVCUnboundDoc = `A PersistentVolumeClaim the pod mounts is still Pending: no PersistentVolume was bound
to it. With an Immediate StorageClass (or no class) the scheduler will not place the pod
until the claim binds ("pod has unbound immediate PersistentVolumeClaims"); with
WaitForFirstConsumer it looks for a node where a volume can be found or provisioned
("didn't find available persistent volumes to bind"). The claim's events say why it
does not bind: the StorageClass it names does not exist, its provisioner is not running
or fails, no class is set and there is no default class, or no existing volume matches.

## Confirm on a live cluster

    kubectl get pvc -n NAMESPACE CLAIM -o wide
    kubectl describe pvc -n NAMESPACE CLAIM        # the Events say why it is Pending
    kubectl get storageclass

## Fix

Create the StorageClass the claim names, or recreate the claim with a class that
exists (storageClassName cannot be changed in place); mark a class as default when
claims set none; start or repair the class's provisioner; or create a PersistentVolume
that matches the claim's class, size and access modes.
`

// The VolumeBinding filter's reasons (pkg/scheduler/framework/plugins/volumebinding/
// volume_binding.go PreFilter: "pod has unbound immediate PersistentVolumeClaims";
// binder.go ErrReasonBindConflict: "node(s) didn't find available persistent volumes
// to bind").
var unboundReasons = []string{"pod has unbound immediate PersistentVolumeClaims", "didn't find available persistent volumes to bind"}

// claimEventReasons are the volume controller's events about a claim that is not bound
// (pkg/controller/volume/persistentvolume/pv_controller.go and its events package).
var claimEventReasons = []string{"ProvisioningFailed", "FailedBinding", "ExternalProvisioning", "Provisioning",
	"WaitForFirstConsumer", "WaitForPodScheduled", "VolumeMismatch"}

// isDefaultClassAnnotation marks the default StorageClass (k8s.io/api/storage/v1 and
// pkg/apis/storage/util/helpers.go IsDefaultStorageClassAnnotation).
const isDefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func volumePVCUnbound(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, u := range v.UnscheduledPods() {
		pod, msg := u.Subject.Pod.Obj, u.Message
		byMessage := phrase.ContainsAny(msg, unboundReasons)
		if msg != "" && !byMessage {
			continue
		}
		var pending []*analyze.PVC
		for _, name := range analyze.PodClaims(pod) {
			c := v.PVC(pod.Namespace, name)
			if c == nil || c.Obj.Status.Phase != corev1.ClaimPending {
				continue
			}
			// Without the scheduler's word, a WaitForFirstConsumer claim is Pending by
			// design until the pod is scheduled.
			if byMessage || !waitsForConsumer(v, c) {
				pending = append(pending, c)
			}
		}
		if len(pending) == 0 {
			continue
		}
		out = append(out, unboundFinding(v, u, pending))
	}
	return append(out, lonelyClaims(v)...)
}

// stuckClaimReasons are the volume controller's events that say a claim will not bind
// by itself: no volume matches and nothing will provision one.
var stuckClaimReasons = []string{"ProvisioningFailed", "FailedBinding", "VolumeMismatch"}

// lonelyClaims are Pending claims no pod of the evidence uses, as a ticket shows them
// (`kubectl get pvc`, `kubectl describe pvc` without the pods): the claim is the
// subject, and the pods that wait on it are what the evidence does not hold. A claim
// fires when its events say it will not bind, or when no pod of the evidence has a known
// spec (none at all, or only pods known from events and rows, whose volumes could be
// it) and the claim does not wait for its first consumer by design.
func lonelyClaims(v *analyze.View) []analyze.Finding {
	used := map[string]bool{}
	specs := 0
	for _, p := range v.Pods() {
		if analyze.SpecKnown(p) {
			specs++
		}
		for _, name := range analyze.PodClaims(p.Obj) {
			used[p.Obj.Namespace+"/"+name] = true
		}
	}
	var out []analyze.Finding
	for _, c := range v.PVCs() {
		claim := c.Obj
		if claim.Status.Phase != corev1.ClaimPending || used[claim.Namespace+"/"+claim.Name] || waitsForConsumer(v, c) {
			continue
		}
		stuck := analyze.LatestEvent(v.EventsFor(c.Ref()), "", stuckClaimReasons...) != nil
		if !stuck && specs > 0 {
			continue
		}
		text, fix, key, evidence := claimState(v, c)
		out = append(out, analyze.Finding{
			Subjects:    []analyze.ObjectRef{c.Ref()},
			Cause:       "no pod can start with claim " + claim.Namespace + "/" + claim.Name + " while it stays Pending: " + text + " (the evidence holds no pod that uses it)",
			Evidence:    evidence,
			Remediation: fix,
			Confirm: []string{
				analyze.Command("kubectl describe pvc -n %s %s", claim.Namespace, claim.Name),
				"kubectl get storageclass",
				"kubectl get pv",
			},
			GroupKey: "claims\x00" + key,
		})
	}
	return out
}

func unboundFinding(v *analyze.View, u analyze.SchedulingFailure, claims []*analyze.PVC) analyze.Finding {
	p, msg := u.Subject.Pod, u.Message
	var evidence []analyze.Evidence
	if msg != "" {
		evidence = append(evidence, u.SchedulerEvidence()...)
	}
	subjects := []analyze.ObjectRef{p.Ref()}
	var parts, fixes, classes []string
	for _, c := range claims {
		subjects = append(subjects, c.Ref())
		text, fix, classKey, ev := claimState(v, c)
		parts = append(parts, text)
		fixes = append(fixes, fix)
		classes = append(classes, classKey)
		evidence = append(evidence, ev...)
	}
	cause := fmt.Sprintf("the pod cannot be scheduled while its claim(s) stay Pending: %s", strings.Join(parts, "; "))
	if msg != "" {
		cause += " (" + schedulerSummary(msg) + ")"
	}
	group := p.Ref().String()
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
		group = w.String()
	}
	c := claims[0].Obj
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: strings.Join(phrase.Unique(fixes), " "),
		Confirm: []string{
			analyze.Command("kubectl describe pvc -n %s %s", c.Namespace, c.Name),
			"kubectl get storageclass",
		},
		GroupKey: group + "\x00" + strings.Join(classes, ","),
	}
}

// claimState describes why a Pending claim is not bound, how to fix it, a key for
// grouping pods whose claims fail alike, and its evidence.
func claimState(v *analyze.View, c *analyze.PVC) (text, fix, key string, evidence []analyze.Evidence) {
	claim := c.Obj
	ref := claim.Namespace + "/" + claim.Name
	size := analyze.Quantity(claim.Spec.Resources.Requests, corev1.ResourceStorage)
	requests := ", requests storage " + size.String()
	if size.IsZero() {
		requests = "" // a claim read from `kubectl get pvc` does not show its request
	}
	evidence = append(evidence, c.Loc.At("status").Evidence(fmt.Sprintf("PersistentVolumeClaim %s: %s%s", claim.Name, claim.Status.Phase, requests), claim.CreationTimestamp.Time))
	text = "claim " + ref + " is Pending"
	switch {
	case claim.Spec.StorageClassName == nil:
		key = "<unset>"
		text += ", sets no storageClassName"
		if v.Has(analyze.StorageClasses) && defaultClass(v) == nil {
			text += " and the cluster has no default StorageClass"
			var names []string
			for _, sc := range v.StorageClasses() {
				if len(names) < 3 {
					names = append(names, sc.Obj.Name)
				}
			}
			if len(names) > 0 {
				// As kubectl describe storageclass says it of each.
				text += " (" + strings.Join(names, ", ") + ": IsDefaultClass No)"
			}
			evidence = append(evidence, v.ListLocation(analyze.StorageClasses, "").Evidence(
				fmt.Sprintf("%d StorageClass(es), none marked %s=true", len(v.StorageClasses()), isDefaultClassAnnotation), v.CollectedAt()))
		}
		text += classlessSupply(v)
		fix = fmt.Sprintf("Mark a StorageClass as the default (annotation %s=true), set storageClassName on claim %s, or create a PersistentVolume that matches it.", isDefaultClassAnnotation, ref)
	case *claim.Spec.StorageClassName == "":
		key = `""`
		text += ` with storageClassName "" (it binds only to a pre-created volume without a class)` + pvSupply(v, "")
		fix = fmt.Sprintf("Create a PersistentVolume without a class that matches claim %s (size %s, access modes %s).", ref, size.String(), accessModes(claim))
	default:
		name := *claim.Spec.StorageClassName
		key = name
		evidence = append(evidence, c.Loc.At("spec", "storageClassName").Evidence("storageClassName "+name, claim.CreationTimestamp.Time))
		sc := storageClass(v, name)
		switch {
		case sc != nil:
			mode := storagev1.VolumeBindingImmediate
			if sc.Obj.VolumeBindingMode != nil {
				mode = *sc.Obj.VolumeBindingMode
			}
			text += fmt.Sprintf(" on StorageClass %s (provisioner %s, %s)", name, sc.Obj.Provisioner, mode)
			if sc.Obj.Provisioner == noProvisioner {
				text += pvSupply(v, name)
			}
			evidence = append(evidence, sc.Loc.Evidence(fmt.Sprintf("StorageClass %s: provisioner %s, volumeBindingMode %s", name, sc.Obj.Provisioner, mode), sc.Obj.CreationTimestamp.Time))
			fix = fmt.Sprintf("Check that provisioner %s of StorageClass %s runs and can create volumes (its controller's pods and logs), "+
				"or create a PersistentVolume of class %s that matches claim %s.", sc.Obj.Provisioner, name, name, ref)
		case v.Has(analyze.StorageClasses):
			text += fmt.Sprintf(" and asks for StorageClass %q, which does not exist", name)
			key += " missing"
			evidence = append(evidence, v.ListLocation(analyze.StorageClasses, "").Evidence(
				fmt.Sprintf("%d StorageClass(es), none named %s", len(v.StorageClasses()), name), v.CollectedAt()))
			fix = fmt.Sprintf("Create StorageClass %q, or recreate claim %s with a class that exists (kubectl get storageclass); storageClassName cannot be changed in place.", name, ref)
		default:
			text += fmt.Sprintf(" on StorageClass %q", name)
			fix = fmt.Sprintf("Check that StorageClass %q exists and that its provisioner runs; the claim's events say what fails.", name)
		}
	}
	if e := analyze.LatestEvent(v.EventsFor(c.Ref()), "", claimEventReasons...); e != nil {
		source := e.Source
		if source == "" {
			source = "the volume controller"
		}
		text += "; " + source + " says " + e.Reason + ": " + e.Message
		evidence = append(evidence, e.Evidence())
	} else if v.Has(analyze.Events) {
		text += "; the claim has no binding or provisioning events"
	}
	return text, fix, key, evidence
}

// waitsForConsumer reports whether a claim's class binds only once a pod using it is
// scheduled.
func waitsForConsumer(v *analyze.View, c *analyze.PVC) bool {
	name := c.Obj.Spec.StorageClassName
	if name == nil || *name == "" {
		return false
	}
	sc := storageClass(v, *name)
	return sc != nil && sc.Obj.VolumeBindingMode != nil && *sc.Obj.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// noProvisioner is the provisioner of classes whose volumes are created by hand
// (local volumes).
const noProvisioner = "kubernetes.io/no-provisioner"

// pvSupply counts the Available volumes of a class, for claims that only bind to
// volumes created beforehand; "" without PersistentVolumes in the bundle.
func pvSupply(v *analyze.View, class string) string {
	if !v.Has(analyze.PVs) {
		return ""
	}
	n := 0
	for _, pv := range v.PVs() {
		if pv.Obj.Spec.StorageClassName == class && pv.Obj.Status.Phase == corev1.VolumeAvailable {
			n++
		}
	}
	if n == 0 {
		return ", and no PersistentVolume of that class is Available"
	}
	return fmt.Sprintf(", and none of the %d Available PersistentVolume(s) of that class matches its size and access modes", n)
}

// classlessSupply says, for a claim without a class, which Available volumes the
// evidence shows: without a default StorageClass such a claim binds only to a volume
// without a class, and a volume of another class stays Available beside it.
func classlessSupply(v *analyze.View) string {
	if !v.Has(analyze.PVs) {
		return ""
	}
	var other []string
	for _, pv := range v.PVs() {
		if pv.Obj.Status.Phase != corev1.VolumeAvailable {
			continue
		}
		if pv.Obj.Spec.StorageClassName == "" {
			return ""
		}
		other = append(other, pv.Obj.Name+" of class "+pv.Obj.Spec.StorageClassName)
	}
	if len(other) == 0 {
		return ""
	}
	return ", and the Available PersistentVolume(s) have a class it does not ask for (" + strings.Join(other, ", ") + ")"
}

func storageClass(v *analyze.View, name string) *analyze.StorageClass {
	for _, sc := range v.StorageClasses() {
		if sc.Obj.Name == name {
			return sc
		}
	}
	return nil
}

func defaultClass(v *analyze.View) *analyze.StorageClass {
	for _, sc := range v.StorageClasses() {
		if sc.Obj.Annotations[isDefaultClassAnnotation] == "true" || sc.Obj.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
			return sc
		}
	}
	return nil
}

func accessModes(c *corev1.PersistentVolumeClaim) string {
	modes := make([]string, len(c.Spec.AccessModes))
	for i, m := range c.Spec.AccessModes {
		modes[i] = string(m)
	}
	return strings.Join(modes, ",")
}

// schedulerSummary is the scheduler's message without its preemption report.
func schedulerSummary(msg string) string {
	if i := strings.Index(msg, " preemption:"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}
