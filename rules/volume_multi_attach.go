package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// VolumeMultiAttach finds pods whose volume cannot be attached to their node because it
// is still attached to another node.
var VolumeMultiAttach = &analyze.Rule{
	ID:       "volume-multi-attach",
	Stage:    analyze.StageVolume,
	Title:    "volume is attached to another node (Multi-Attach)",
	Doc:      volumeMultiAttachDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods, analyze.Events},
		Optional: []analyze.Kind{analyze.PVCs, analyze.PVs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: volumeMultiAttach,
}

const volumeMultiAttachDoc = `The pod's volume can be attached to one node at a time (a ReadWriteOnce block
volume: a cloud disk, an iSCSI or Ceph RBD image), and the attach/detach controller
still has it attached to another node, so it will not attach it to this pod's node.
It records a FailedAttachVolume event on the pod: "Multi-Attach error for volume "PV"
Volume is already used by pod(s) OTHER" in older releases, "Waiting for detach for
volume "PV" Volume is already used by pod(s) OTHER" since (or "… is already exclusively
attached to one node" when no pod uses it any more). The pod waits in
ContainerCreating.

Two causes: several pods on different nodes share one ReadWriteOnce claim (a Deployment
with more than one replica, or a rolling update whose new pod lands on another node
while the old one still runs), or the volume is still attached to a node that went
away and was never detached.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=FailedAttachVolume
    kubectl get pods -n NAMESPACE -o wide          # which pods use the claim, on which nodes
    kubectl get volumeattachments | grep PV

## Fix

Give each replica its own volume (a StatefulSet with volumeClaimTemplates), run one
replica with the Recreate strategy, or use storage that supports ReadWriteMany. If the
other node is gone, mark it out of service (taint node.kubernetes.io/out-of-service) so
the volume is force-detached, or delete the Node object; the attach then proceeds.
`

// The attach/detach controller's event (pkg/controller/volume/attachdetach/reconciler/
// reconciler.go reportMultiAttachError, wrapped by VolumeToAttach.GenerateMsg): the
// prefix is "Waiting for detach" in v1.37 and "Multi-Attach error" in older releases.
var reMultiAttach = regexp.MustCompile(`(?:Multi-Attach error|Waiting for detach) for volume "([^"]+)" (Volume is already (?:used by (?:pod\(s\) (.+?)(?: and \d+ pod\(s\) in different namespaces)?|\d+ pod\(s\) in different namespaces)|exclusively attached to one node.*))$`)

func volumeMultiAttach(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, cp := range v.PodsWaitingToCreate() {
		p, waiting := cp.Pod, cp.Waiting
		e := analyze.LatestEvent(cp.Mount.Events, "", "FailedAttachVolume")
		if e == nil {
			continue
		}
		m := reMultiAttach.FindStringSubmatch(strings.TrimSpace(e.Message))
		if m == nil {
			continue
		}
		out = append(out, multiAttachFinding(v, p, e, m[1], m[2], m[3], waiting))
	}
	return out
}

func multiAttachFinding(v *analyze.View, p *analyze.Pod, e *analyze.Event, pvName, said, others string, waiting []string) analyze.Finding {
	pod := p.Obj
	evidence := []analyze.Evidence{e.EvidenceAround("Volume is already")}
	what := fmt.Sprintf("volume %q", pvName)
	mode := ""
	if pv := v.PV(pvName); pv != nil {
		modes := make([]string, len(pv.Obj.Spec.AccessModes))
		for i, m := range pv.Obj.Spec.AccessModes {
			modes[i] = string(m)
		}
		mode = strings.Join(modes, ",")
		evidence = append(evidence, pv.Loc.At("spec", "accessModes").Evidence(fmt.Sprintf("PersistentVolume %s: access modes %s", pvName, mode), pv.Obj.CreationTimestamp.Time))
		if ref := pv.Obj.Spec.ClaimRef; ref != nil && ref.Namespace == pod.Namespace {
			for _, vol := range pod.Spec.Volumes {
				if c := vol.PersistentVolumeClaim; c != nil && c.ClaimName == ref.Name {
					what = fmt.Sprintf("volume %q (claim %s, PersistentVolume %s, %s)", vol.Name, ref.Name, pvName, mode)
				}
			}
		}
	}
	where := ""
	var holders []string
	for _, name := range strings.Split(others, ", ") {
		if name == "" {
			continue
		}
		o := v.Pod(pod.Namespace, name)
		if o == nil {
			holders = append(holders, name)
			continue
		}
		holders = append(holders, fmt.Sprintf("%s on node %s", name, o.Obj.Spec.NodeName))
		evidence = append(evidence, o.Loc.At("spec", "nodeName").Evidence(fmt.Sprintf("pod %s runs on node %s", name, o.Obj.Spec.NodeName), o.Obj.CreationTimestamp.Time))
	}
	switch {
	case len(holders) > 0:
		where = "; it is in use by pod(s) " + strings.Join(holders, ", ")
	case strings.Contains(said, "in different namespaces"):
		where = "; it is in use by pods of other namespaces (" + said + ")"
	default:
		where = "; no pod uses it there any more, so the attach/detach controller waits for it to be detached (" + said + ")"
	}
	for _, c := range analyze.Containers(p) {
		if c.Status != nil && c.Status.State.Waiting != nil && c.Status.State.Waiting.Reason == "ContainerCreating" {
			evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence("container "+c.Name+" waiting: ContainerCreating", pod.CreationTimestamp.Time))
			break
		}
	}
	cause := fmt.Sprintf("%s of pod %s cannot be attached to node %s because it is still attached to another node%s",
		what, p.Ref().NamespacedName(), pod.Spec.NodeName, where)
	if e.Count > 1 {
		cause += fmt.Sprintf(" (FailedAttachVolume x%d)", e.Count)
	}
	cause += fmt.Sprintf(", so container(s) %s wait in ContainerCreating", strings.Join(waiting, ", "))
	fix := "Give each replica its own volume (a StatefulSet with volumeClaimTemplates), run a single replica with the Recreate strategy, or use ReadWriteMany storage"
	if len(holders) == 0 {
		fix = "If the node that holds the volume is gone, mark it out of service (taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) or delete its Node object so the volume is force-detached; otherwise wait for the detach to finish"
	}
	subjects, group := v.PodAndWorkload(p)
	subjects = append(subjects, analyze.NodeRef(pod.Spec.NodeName))
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix + "; the attach proceeds once the volume is detached from the other node.",
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedAttachVolume", pod.Namespace, pod.Name),
			analyze.Command("kubectl get pods -n %s -o wide", pod.Namespace),
			analyze.Command("kubectl get volumeattachments | grep %s", pvName),
		},
		GroupKey: group + "\x00" + pvName,
	}
}
