package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// VolumeCSIDriverMissing finds pods whose CSI volume cannot be mounted because the
// driver is not registered with the kubelet.
var VolumeCSIDriverMissing = &analyze.Rule{
	ID:       "volume-csi-driver-missing",
	Stage:    analyze.StageVolume,
	Title:    "CSI driver of a volume is not registered on the node",
	Doc:      volumeCSIDriverMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods, analyze.Events},
		Optional: []analyze.Kind{analyze.KubeletJournal, analyze.PVCs, analyze.PVs, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: volumeCSIDriverMissing,
}

const volumeCSIDriverMissingDoc = `A volume of the pod is served by a CSI driver (an inline csi volume, or a
PersistentVolume with spec.csi), and the kubelet on the pod's node has no such driver
registered. Drivers register through their node plugin (usually a DaemonSet with the
node-driver-registrar sidecar) over the kubelet's plugin socket; until that happens the
kubelet cannot stage or mount the volume and reports FailedMount: "kubernetes.io/csi:
mounter.SetUpAt failed to get CSI client: driver name DRIVER not found in the list of
registered CSI drivers" (attacher.MountDevice for volumes that are staged first). The
pod waits in ContainerCreating.

The usual causes: the driver is not installed, its node plugin does not run on this
node (a nodeSelector or taint keeps the DaemonSet off it, or it crashes), or the volume
names the driver wrongly.

## Confirm on a live cluster

    kubectl get csinode NODE -o jsonpath='{.spec.drivers[*].name}'
    kubectl get csidriver
    kubectl get pods -A -o wide --field-selector spec.nodeName=NODE | grep -i csi

## Fix

Install the CSI driver, or make its node plugin run on the node (tolerations, node
selector, a crash in the registrar or the driver container); the kubelet retries the
mount once the driver registers. If the name is wrong, correct the driver in the volume
(or the StorageClass's provisioner for new claims).
`

var (
	// pkg/volume/csi/csi_client.go newCsiDriverClient: "driver name %s not found in the
	// list of registered CSI drivers".
	reCSIDriverNotFound = regexp.MustCompile(`driver name (\S+) not found in the list of registered CSI drivers`)
	// operationexecutor's volume messages: `MountVolume.SetUp failed for volume "scratch"`.
	reForVolume = regexp.MustCompile(`for volume "([^"]+)"`)
)

func volumeCSIDriverMissing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	// Only pods still waiting: once mounted, or running, an old event is history.
	for _, cp := range v.PodsWaitingToCreate() {
		seen := map[string]bool{}
		events := cp.Mount.Events
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			m := reCSIDriverNotFound.FindStringSubmatch(e.Message)
			if m == nil || !(strings.HasPrefix(e.Message, "MountVolume.") || strings.HasPrefix(e.Message, "AttachVolume.")) {
				continue
			}
			volume := ""
			if vm := reForVolume.FindStringSubmatch(e.Message); vm != nil {
				volume = vm[1]
			}
			if seen[m[1]+"\x00"+volume] {
				continue
			}
			seen[m[1]+"\x00"+volume] = true
			out = append(out, csiDriverFinding(v, cp, e, m[1], volume))
		}
	}
	return out
}

func csiDriverFinding(v *analyze.View, cp analyze.CreatingPod, e *analyze.Event, driver, volume string) analyze.Finding {
	p, waiting := cp.Pod, cp.Waiting
	pod := p.Obj
	node := pod.Spec.NodeName
	needle := "driver name " + driver + " not found"
	evidence := []analyze.Evidence{e.EvidenceAround(needle)}
	if line := csiJournalLine(cp.Mount, needle); line != nil {
		evidence = append(evidence, line.EvidenceAround(needle))
	}
	what := fmt.Sprintf("volume %q", volume)
	if src, ev, ok := csiVolumeSource(v, p, volume, driver); ok {
		what = src
		evidence = append(evidence, ev)
	}
	for _, c := range analyze.Containers(p) {
		if c.Status != nil && c.Status.State.Waiting != nil && c.Status.State.Waiting.Reason == "ContainerCreating" {
			evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence("container "+c.Name+" waiting: ContainerCreating", pod.CreationTimestamp.Time))
			break
		}
	}
	cause := fmt.Sprintf("%s of pod %s cannot be mounted: CSI driver %s is not registered with the kubelet on node %s",
		what, p.Ref().NamespacedName(), driver, node)
	if e.Count > 1 {
		cause += fmt.Sprintf(" (%s x%d)", e.Reason, e.Count)
	}
	cause += fmt.Sprintf(", so container(s) %s wait in ContainerCreating", strings.Join(waiting, ", "))
	subjects, group := v.PodAndWorkload(p)
	subjects = append(subjects, analyze.NodeRef(node))
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Install CSI driver %s or make its node plugin (the DaemonSet with node-driver-registrar) run on node %s; "+
			"the kubelet retries the mount once the driver registers. If %s is a wrong name, correct the driver of volume %q.", driver, node, driver, volume),
		Confirm: []string{
			analyze.Command("kubectl get csinode %s -o jsonpath='{.spec.drivers[*].name}'", node),
			"kubectl get csidriver",
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=%s", pod.Namespace, pod.Name, analyze.Value(e.Reason)),
		},
		GroupKey: group + "\x00" + driver + "\x00" + node,
	}
}

// csiVolumeSource names the volume and says where its driver comes from: the pod's
// inline csi volume, or the PersistentVolume behind one of its claims (the operation
// executor names a claim's volume after the PersistentVolume).
func csiVolumeSource(v *analyze.View, p *analyze.Pod, volume, driver string) (string, analyze.Evidence, bool) {
	pod := p.Obj
	for i, vol := range pod.Spec.Volumes {
		if vol.Name == volume && vol.CSI != nil {
			return fmt.Sprintf("inline csi volume %q", volume), p.Loc.At("spec", "volumes", i, "csi").Evidence(
				fmt.Sprintf("volume %s: csi driver %s", vol.Name, vol.CSI.Driver), pod.CreationTimestamp.Time), true
		}
	}
	pv := v.PV(volume)
	if pv == nil || pv.Obj.Spec.CSI == nil || pv.Obj.Spec.CSI.Driver != driver {
		return "", analyze.Evidence{}, false
	}
	text := "PersistentVolume " + pv.Obj.Name
	if ref := pv.Obj.Spec.ClaimRef; ref != nil {
		for _, vol := range pod.Spec.Volumes {
			if c := vol.PersistentVolumeClaim; c != nil && c.ClaimName == ref.Name && ref.Namespace == pod.Namespace {
				text = fmt.Sprintf("volume %q (claim %s, PersistentVolume %s)", vol.Name, ref.Name, pv.Obj.Name)
			}
		}
	}
	return text, pv.Loc.At("spec", "csi").Evidence(fmt.Sprintf("PersistentVolume %s: csi driver %s, volumeHandle %s", pv.Obj.Name, driver, pv.Obj.Spec.CSI.VolumeHandle), pv.Obj.CreationTimestamp.Time), true
}

// csiJournalLine is the kubelet's latest nestedpendingoperations error for the pod's
// mount: it names the pod by UID inside the message, not in a structured field.
func csiJournalLine(f analyze.MountFailure, needle string) *analyze.JournalEntry {
	entries := f.UIDLines
	for i := len(entries) - 1; i >= 0; i-- {
		if m := entries[i].Message; strings.Contains(m, needle) {
			return entries[i]
		}
	}
	return nil
}
