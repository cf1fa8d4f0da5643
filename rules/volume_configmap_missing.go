package rules

import (
	"fmt"
	"strings"

	"podflow.dev/podflow/analyze"
)

// VolumeConfigMapMissing finds pods whose ConfigMap or Secret volume names an object that
// does not exist.
var VolumeConfigMapMissing = &analyze.Rule{
	ID:       "volume-configmap-missing",
	Stage:    analyze.StageVolume,
	Title:    "volume references a ConfigMap or Secret that does not exist",
	Doc:      volumeConfigMapMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ConfigMaps, analyze.Secrets,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: volumeConfigMapMissing,
}

const volumeConfigMapMissingDoc = `A volume of the pod (configMap, secret, or a projected source of either) names an
object that does not exist in the pod's namespace, and the reference is not optional.
The kubelet cannot set the volume up: it retries with back-off, records FailedMount
events ("MountVolume.SetUp failed for volume "config" : configmap "app-config" not
found", or ` + "`" + `secret "app-tls" not found` + "`" + ` for a Secret) and logs "Couldn't get
configMap NAMESPACE/NAME" or "Couldn't get secret NAMESPACE/NAME". A projected volume
fails as a whole when any one of its sources is missing. The pod stays Pending and its
containers wait in ContainerCreating until the object appears.

A reference marked optional: true mounts an empty volume instead, so it is not a fault.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=FailedMount
    kubectl get configmap -n NAMESPACE NAME      # or: kubectl get secret -n NAMESPACE NAME
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.volumes}'

## Fix

Create the ConfigMap or Secret in the pod's namespace (it is often created by a step
that did not run, or lives in another namespace), or correct the name in the volume.
Mark the reference optional only if the application copes with an empty directory.
The kubelet retries on its own; the pod starts once the object exists.
`

// volumeRef is one ConfigMap or Secret a pod volume needs.
type volumeRef struct {
	volume string
	// kind is "configmap" or "secret", as the kubelet's managers name the resource in
	// their NotFound errors (pkg/kubelet/configmap, pkg/kubelet/secret).
	kind     string
	name     string
	optional bool
	loc      analyze.Location
}

// volumeRefs lists the ConfigMaps and Secrets a pod's volumes reference, projected
// sources included.
func volumeRefs(p *analyze.Pod) []volumeRef {
	var out []volumeRef
	for i, vol := range p.Obj.Spec.Volumes {
		loc := p.Loc.At("spec", "volumes", i)
		if cm := vol.ConfigMap; cm != nil {
			out = append(out, volumeRef{vol.Name, "configmap", cm.Name, cm.Optional != nil && *cm.Optional, loc.At("configMap")})
		}
		if s := vol.Secret; s != nil {
			out = append(out, volumeRef{vol.Name, "secret", s.SecretName, s.Optional != nil && *s.Optional, loc.At("secret")})
		}
		if pr := vol.Projected; pr != nil {
			for j, src := range pr.Sources {
				sl := loc.At("projected", "sources", j)
				if cm := src.ConfigMap; cm != nil {
					out = append(out, volumeRef{vol.Name, "configmap", cm.Name, cm.Optional != nil && *cm.Optional, sl.At("configMap")})
				}
				if s := src.Secret; s != nil {
					out = append(out, volumeRef{vol.Name, "secret", s.Name, s.Optional != nil && *s.Optional, sl.At("secret")})
				}
			}
		}
	}
	return out
}

// notFoundText is the NotFound error as the kubelet's managers word it: `configmap
// "app-config" not found`; an error straight from the API server says "configmaps".
func notFoundText(msg, kind, name string) bool {
	q := fmt.Sprintf("%q not found", name)
	return strings.Contains(msg, kind+" "+q) || strings.Contains(msg, kind+"s "+q)
}

func volumeConfigMapMissing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, mount := range v.MountFailures() {
		p := mount.Subject.Pod
		stuck, waiting := analyze.WaitingToCreate(p)
		for _, ref := range volumeRefs(p) {
			if ref.optional {
				continue
			}
			f, ok := missingVolumeObject(v, mount, ref, stuck, waiting)
			if ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func missingVolumeObject(v *analyze.View, mount analyze.MountFailure, ref volumeRef, stuck bool, waiting []string) (analyze.Finding, bool) {
	p := mount.Subject.Pod
	pod := p.Obj
	known, exists := objectInBundle(v, ref.kind, pod.Namespace, ref.name)
	if exists {
		return analyze.Finding{}, false
	}
	var event *analyze.Event
	events := mount.Events
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "FailedMount" && strings.Contains(e.Message, fmt.Sprintf("volume %q", ref.volume)) && notFoundText(e.Message, ref.kind, ref.name) {
			event = e
			break
		}
	}
	line := mount.ObjectError(ref.kind, pod.Namespace, ref.name)
	said := event != nil || line != nil
	missing := known && !exists
	// The kubelet's word alone may be stale once the object was created; it counts while
	// the pod still waits, or when the bundle confirms the object is missing.
	if !(said && (stuck || missing)) && !(missing && stuck) {
		return analyze.Finding{}, false
	}
	title := analyze.VolumeObjectKind(ref.kind)
	needle := fmt.Sprintf("%s %q not found", ref.kind, ref.name)
	var evidence []analyze.Evidence
	if event != nil {
		evidence = append(evidence, event.EvidenceAround(needle))
	}
	if line != nil {
		evidence = append(evidence, line.EvidenceAround(needle))
	}
	evidence = append(evidence, ref.loc.Evidence(fmt.Sprintf("volume %s: %s %s", ref.volume, title, ref.name), pod.CreationTimestamp.Time))
	if stuck {
		for _, c := range analyze.Containers(p) {
			if c.Status != nil && c.Status.State.Waiting != nil && c.Status.State.Waiting.Reason == "ContainerCreating" {
				evidence = append(evidence, c.StatusLoc().At("state", "waiting").Evidence("container "+c.Name+" waiting: ContainerCreating", pod.CreationTimestamp.Time))
				break
			}
		}
	}
	cause := fmt.Sprintf("volume %q of pod %s cannot be mounted: %s %q does not exist in namespace %s",
		ref.volume, p.Ref().NamespacedName(), title, ref.name, pod.Namespace)
	switch {
	case event != nil && event.Count > 1:
		cause += fmt.Sprintf(" (FailedMount x%d)", event.Count)
	case missing && !said:
		cause += fmt.Sprintf(" (it is not among the %ss collected from the namespace)", title)
	}
	if stuck {
		cause += fmt.Sprintf(", so container(s) %s wait in ContainerCreating", strings.Join(waiting, ", "))
	}
	subjects := []analyze.ObjectRef{p.Ref(), {Kind: title, Namespace: pod.Namespace, Name: ref.name}}
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
	}
	return analyze.Finding{
		Subjects: subjects,
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Create %s %s in namespace %s, or correct the name in volume %q; mark it optional: true only if the "+
			"application copes with an empty directory. The kubelet retries the mount and the pod starts once the object exists.",
			title, ref.name, pod.Namespace, ref.volume),
		Confirm: []string{
			analyze.Command("kubectl get %s -n %s %s", ref.kind, pod.Namespace, ref.name),
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedMount", pod.Namespace, pod.Name),
		},
		GroupKey: pod.Namespace + "\x00" + ref.kind + "\x00" + ref.name + "\x00" + ref.volume,
	}, true
}

// objectInBundle says whether the bundle holds the namespace's ConfigMaps (or Secrets)
// at all, and whether it holds this one.
func objectInBundle(v *analyze.View, kind, namespace, name string) (known, exists bool) {
	if kind == "configmap" {
		if !v.Has(analyze.ConfigMaps) {
			return false, false
		}
		return true, v.ConfigMap(namespace, name) != nil
	}
	if !v.Has(analyze.Secrets) {
		return false, false
	}
	return true, v.Secret(namespace, name) != nil
}
