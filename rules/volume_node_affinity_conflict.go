package rules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// VolumeNodeAffinityConflict finds pending pods whose bound PersistentVolumes can only
// be used on nodes the pod cannot run on.
var VolumeNodeAffinityConflict = &analyze.Rule{
	ID:       "volume-node-affinity-conflict",
	Stage:    analyze.StageScheduling,
	Title:    "the pod's PersistentVolume is pinned to nodes the pod cannot use",
	Doc:      volumeNodeAffinityConflictDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods, analyze.PVCs, analyze.PVs},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: volumeNodeAffinityConflict,
}

const volumeNodeAffinityConflictDoc = `A PersistentVolume can carry spec.nodeAffinity: the nodes it can be used from. Local
volumes name one node (kubernetes.io/hostname), zonal cloud disks a zone
(topology.kubernetes.io/zone). Once the pod's claim is bound to such a volume, the
scheduler may only place the pod on a node the volume's affinity allows: "N node(s)
didn't match PersistentVolume's node affinity" (before Kubernetes v1.2x: "node(s) had
volume node affinity conflict"). Typical causes: the node of a local volume was
replaced or renamed, a disk was provisioned in one zone while the nodes that remain
(or the pod's own nodeSelector) are in another, or an Immediate StorageClass
provisioned the disk before the scheduler chose a node.

podflow names the claim, the volume, the nodes its affinity allows and why each node
does not match.

## Confirm on a live cluster

    kubectl get pvc -n NAMESPACE CLAIM -o jsonpath='{.spec.volumeName}'
    kubectl get pv VOLUME -o jsonpath='{.spec.nodeAffinity}'
    kubectl get nodes -L topology.kubernetes.io/zone,kubernetes.io/hostname

## Fix

Run the pod where the volume is: bring the volume's node (or a node in its zone) back or
add one. If the data can be recreated, delete the claim (and the volume) and let a
WaitForFirstConsumer StorageClass provision a new one where the pod is scheduled. For a
zonal disk, move the data with a snapshot restored in the right zone.
`

// The VolumeBinding filter's reason for a bound volume whose node affinity the node
// fails (pkg/scheduler/framework/plugins/volumebinding/binder.go ErrReasonNodeConflict),
// and the wording it had in earlier releases.
var volumeNodeConflictReasons = []string{"didn't match PersistentVolume's node affinity", "had volume node affinity conflict"}

func volumeNodeAffinityConflict(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := v.SortedNodes()
	for _, u := range v.UnscheduledPods() {
		p, pod := u.Subject.Pod, u.Subject.Pod.Obj
		total, reasons := u.Nodes, u.Reasons
		if !phrase.ContainsAny(strings.Join(reasons, ", "), volumeNodeConflictReasons) {
			continue
		}
		evidence := u.SchedulerEvidence()
		subjects, group := v.PodAndWorkload(p)
		var volumes, details []string
		for _, name := range analyze.PodClaims(pod) {
			c := v.PVC(pod.Namespace, name)
			if c == nil || c.Obj.Spec.VolumeName == "" {
				continue
			}
			pv := v.PV(c.Obj.Spec.VolumeName)
			if pv == nil || pv.Obj.Spec.NodeAffinity == nil || pv.Obj.Spec.NodeAffinity.Required == nil {
				continue
			}
			req := pv.Obj.Spec.NodeAffinity.Required
			affinity := strings.TrimPrefix(analyze.NodeAffinityString(req), "required node affinity ")
			volumes = append(volumes, fmt.Sprintf("claim %s is bound to PersistentVolume %s, usable only on nodes with %s", name, pv.Obj.Name, affinity))
			subjects = append(subjects, c.Ref(), pv.Ref())
			evidence = append(evidence,
				c.Loc.At("spec", "volumeName").Evidence(fmt.Sprintf("claim %s volumeName %s (%s)", name, pv.Obj.Name, c.Obj.Status.Phase), c.Obj.CreationTimestamp.Time),
				pv.Loc.At("spec", "nodeAffinity", "required").Evidence("PersistentVolume "+pv.Obj.Name+" node affinity "+affinity, pv.Obj.CreationTimestamp.Time))
			details = append(details, volumeNodes(v, req, nodes, &evidence)...)
		}
		if len(volumes) == 0 {
			continue
		}
		cause := fmt.Sprintf("%s, and no node the pod can use matches: 0/%s nodes are available: %s", strings.Join(volumes, "; "), total, strings.Join(reasons, ", "))
		if len(details) > 0 {
			cause += "; " + phrase.JoinCapped(phrase.Unique(details), "node(s)")
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Bring back or add a node the volume's node affinity allows so %s can run there; "+
				"if the data can be recreated, delete the claim and its volume and let a WaitForFirstConsumer StorageClass provision one where the pod is scheduled.", group),
			Confirm: []string{
				analyze.Command("kubectl get pv %s -o jsonpath='{.spec.nodeAffinity}'", volumeNames(subjects)),
				"kubectl get nodes --show-labels",
			},
			GroupKey: group + "\x00" + strings.Join(volumes, ","),
		})
	}
	return out
}

// volumeNodes says, per node, why it fails the volume's node affinity; a node that
// matches is named too: the pod failed it for another reason.
func volumeNodes(v *analyze.View, req *corev1.NodeSelector, nodes []*analyze.Node, evidence *[]analyze.Evidence) []string {
	var out []string
	for _, n := range nodes {
		var misses []string
		matched := false
		for _, t := range req.NodeSelectorTerms {
			miss, ok := analyze.NodeTermMismatch(t, n.Obj)
			if ok {
				matched = true
				break
			}
			misses = append(misses, miss)
		}
		if matched {
			out = append(out, fmt.Sprintf("node %s matches the volume but failed another check", n.Obj.Name))
			continue
		}
		line := "node " + n.Obj.Name + ": " + strings.Join(misses, ", ")
		out = append(out, line)
		*evidence = append(*evidence, analyze.NodeLabelsLoc(n).Evidence(line, v.CollectedAt()))
	}
	return out
}

func volumeNames(subjects []analyze.ObjectRef) analyze.Names {
	var names []string
	for _, s := range subjects {
		if s.Kind == "PersistentVolume" {
			names = append(names, s.Name)
		}
	}
	return names
}
