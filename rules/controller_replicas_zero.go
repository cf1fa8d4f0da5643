package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ControllerReplicasZero finds Deployments and StatefulSets scaled to zero replicas
// while a Service still expects their pods, or that were just scaled down to zero.
var ControllerReplicasZero = &analyze.Rule{
	ID:       "controller-replicas-zero",
	Stage:    analyze.StageController,
	Title:    "the workload is scaled to zero replicas",
	Doc:      controllerReplicasZeroDoc,
	Severity: analyze.SeverityWarning,
	Needs: analyze.Needs{
		AnyOf:    []analyze.Kind{analyze.Deployments, analyze.Events},
		Optional: []analyze.Kind{analyze.StatefulSets, analyze.Services, analyze.ReplicaSets, analyze.Pods},
	},
	Run: controllerReplicasZero,
}

const controllerReplicasZeroDoc = `The Deployment or StatefulSet has spec.replicas 0, so its controller keeps no pod:
nothing is broken, nothing runs. Scaling to zero is often deliberate (a parked
environment, a maintenance window, an autoscaler such as KEDA that scales idle
workloads to zero), so this is a warning, not an error. podflow reports it when
something still expects the pods, a Service whose selector matches the pod template
(its endpoints are empty, so every request to it fails), or when the bundle shows the
scale-down itself; parked workloads nobody points at stay quiet.

To say who scaled it, podflow reads the controller's ScalingReplicaSet event ("Scaled
down replica set NAME from N to 0") and, when the bundle keeps managedFields, the field
manager that owns spec.replicas (kubectl scale appears as "kubectl" with subresource
scale, kubectl apply as "kubectl-client-side-apply" or "kubectl", an autoscaler under
its own name). podflow's own collector drops managedFields, so a bundle it wrote names
the event only.

## Confirm on a live cluster

    kubectl get deployment -n NAMESPACE NAME -o jsonpath='{.spec.replicas}'
    kubectl get deployment -n NAMESPACE NAME --show-managed-fields -o yaml | grep -B3 -A3 'f:replicas'
    kubectl get events -n NAMESPACE --field-selector involvedObject.name=NAME,reason=ScalingReplicaSet
    kubectl rollout history deployment/NAME -n NAMESPACE

## Fix

If it was not meant to be off, scale it back: kubectl scale deployment/NAME -n
NAMESPACE --replicas=N, and make the source of truth agree (the replicas field in the
manifest or Helm values, or the autoscaler's minimum), or the next deploy or
autoscaler pass scales it to zero again. If it is meant to be off, remove or point
elsewhere the Service that still sends traffic to it.
`

// reScaledToZero reads the Deployment controller's event
// (pkg/controller/deployment/sync.go scaleReplicaSet: "Scaled %s replica set %s from %d to %d").
var reScaledToZero = regexp.MustCompile(`^Scaled down replica set (\S+) from (\d+) to 0$`)

// zeroWorkload is a workload with zero replicas, its pod template and where they are.
type zeroWorkload struct {
	ref      analyze.ObjectRef
	meta     *metav1.ObjectMeta
	loc      analyze.Location
	template *corev1.PodTemplateSpec
	kind     string
}

func controllerReplicasZero(v *analyze.View) []analyze.Finding {
	var list []zeroWorkload
	for _, d := range v.Deployments() {
		if r := d.Obj.Spec.Replicas; r != nil && *r == 0 {
			list = append(list, zeroWorkload{ref: d.Ref(), meta: d.Meta(), loc: d.Loc, template: &d.Obj.Spec.Template, kind: "deployment"})
		}
	}
	for _, s := range v.StatefulSets() {
		if r := s.Obj.Spec.Replicas; r != nil && *r == 0 {
			list = append(list, zeroWorkload{ref: s.Ref(), meta: s.Meta(), loc: s.Loc, template: &s.Obj.Spec.Template, kind: "statefulset"})
		}
	}
	var out []analyze.Finding
	for _, w := range list {
		if f, ok := replicasZeroFinding(v, w); ok {
			out = append(out, f)
		}
	}
	return append(out, scaledToZeroFromEvents(v)...)
}

// reScaled reads every ScalingReplicaSet message of the Deployment controller.
var reScaled = regexp.MustCompile(`^Scaled (?:up|down) replica set (\S+) (?:from \d+ )?to (\d+)$`)

// scaledToZeroFromEvents reads a Deployment scaled to zero from its events alone, when
// the evidence lacks the Deployment object (a pasted get events): every ReplicaSet its
// events name was last scaled to 0, and the evidence holds no running pod of it. Pasted
// events carry no times, so "last" is the smallest count each ReplicaSet was given
// after a scale-down to 0; a rollout leaves its new ReplicaSet scaled up, so it is not
// read as zero.
func scaledToZeroFromEvents(v *analyze.View) []analyze.Finding {
	if !v.Has(analyze.Events) {
		return nil
	}
	known := map[string]bool{}
	for _, d := range v.Deployments() {
		known[d.Obj.Namespace+"/"+d.Obj.Name] = true
	}
	type dep struct {
		ref    analyze.ObjectRef
		zeroed map[string]*analyze.Event
		up     map[string]bool
	}
	var order []string
	deps := map[string]*dep{}
	for _, e := range v.Events() {
		if e.Reason != "ScalingReplicaSet" || e.Regarding.Kind != "Deployment" || known[e.Regarding.Namespace+"/"+e.Regarding.Name] {
			continue
		}
		m := reScaled.FindStringSubmatch(e.Message)
		if m == nil {
			continue
		}
		key := e.Regarding.Namespace + "/" + e.Regarding.Name
		d := deps[key]
		if d == nil {
			d = &dep{ref: e.Regarding, zeroed: map[string]*analyze.Event{}, up: map[string]bool{}}
			deps[key] = d
			order = append(order, key)
		}
		if m[2] == "0" {
			d.zeroed[m[1]] = e
		} else {
			d.up[m[1]] = true
		}
	}
	var out []analyze.Finding
	for _, key := range order {
		d := deps[key]
		if len(d.zeroed) == 0 {
			continue
		}
		live := false
		for rs := range d.up {
			if d.zeroed[rs] == nil {
				live = true // a ReplicaSet scaled up and never down: a rollout's new one
			}
		}
		for _, p := range v.Pods() {
			// A pod known only from its events (no phase) may be long gone.
			ph := p.Obj.Status.Phase
			if p.Obj.Namespace == d.ref.Namespace && (ph == corev1.PodRunning || ph == corev1.PodPending) && p.Obj.DeletionTimestamp == nil &&
				strings.HasPrefix(p.Obj.Name, d.ref.Name+"-") {
				live = true
			}
		}
		if live {
			continue
		}
		var rss []string
		var evidence []analyze.Evidence
		for rs, e := range d.zeroed {
			rss = append(rss, rs)
			evidence = append(evidence, e.Evidence())
		}
		sort.Strings(rss)
		sort.Slice(evidence, func(i, j int) bool { return evidence[i].Location.String() < evidence[j].Location.String() })
		name := "Deployment " + d.ref.NamespacedName()
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{d.ref},
			Cause: fmt.Sprintf("%s was scaled down to 0 replicas (its controller scaled ReplicaSet %s to 0 and no ReplicaSet of it back up), so it runs no pod; "+
				"the Deployment object is not in the evidence, so who set replicas to 0 is not known", name, strings.Join(rss, ", ")),
			Evidence: evidence,
			Remediation: fmt.Sprintf("If %s should run, scale it back (kubectl scale deployment/%s -n %s --replicas=N) and fix the replicas in its manifest, "+
				"Helm values or autoscaler minimum.", name, d.ref.Name, d.ref.Namespace),
			Confirm: []string{
				analyze.Command("kubectl get deployment -n %s %s --show-managed-fields -o yaml", d.ref.Namespace, d.ref.Name),
				analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s", d.ref.Namespace, d.ref.Name),
			},
			GroupKey: d.ref.String(),
		})
	}
	return out
}

func replicasZeroFinding(v *analyze.View, w zeroWorkload) (analyze.Finding, bool) {
	evidence := []analyze.Evidence{w.loc.At("spec", "replicas").Evidence("replicas 0", time.Time{})}
	subjects := []analyze.ObjectRef{w.ref}
	var services []string
	for _, s := range v.Services() {
		sel := s.Obj.Spec.Selector
		if s.Obj.Namespace != w.ref.Namespace || len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(w.template.Labels)) {
			continue
		}
		services = append(services, s.Obj.Name)
		subjects = append(subjects, s.Ref())
		evidence = append(evidence, s.Loc.At("spec", "selector").Evidence(
			fmt.Sprintf("Service %s selects %s, the labels of %s's pod template", s.Obj.Name, phrase.Selector(sel), w.ref.Name), s.Obj.CreationTimestamp.Time))
	}
	var who []string
	if e := scaledToZeroEvent(v, w.ref); e != nil {
		m := reScaledToZero.FindStringSubmatch(e.Message)
		who = append(who, fmt.Sprintf("the controller scaled down ReplicaSet %s from %s to 0 at %s", m[1], m[2], e.LastTime.UTC().Format(time.RFC3339)))
		evidence = append(evidence, e.Evidence())
	}
	if i, mf, ok := replicasManager(w.meta); ok {
		text := fmt.Sprintf("spec.replicas was last set by %s (%s", mf.Manager, mf.Operation)
		if mf.Subresource != "" {
			text += " on subresource " + mf.Subresource
		}
		if mf.Time != nil {
			text += " at " + mf.Time.UTC().Format(time.RFC3339)
		}
		text += ")"
		who = append(who, text)
		evidence = append(evidence, w.loc.At("metadata", "managedFields", i).Evidence(text, timeOf(mf.Time)))
	}
	if len(services) == 0 && len(who) == 0 {
		return analyze.Finding{}, false
	}
	kindName := w.ref.Kind + " " + w.ref.NamespacedName()
	cause := kindName + " is scaled to 0 replicas, so it runs no pod"
	if len(services) > 0 {
		cause += fmt.Sprintf(" and Service %s, which selects its pods, has no endpoints", strings.Join(services, ", "))
	}
	if len(who) > 0 {
		cause += "; " + strings.Join(who, "; ")
	} else {
		cause += "; the bundle does not say who set replicas to 0 (no scale-down event, no managedFields)"
	}
	remediation := fmt.Sprintf("If %s should run, scale it back (kubectl scale %s/%s -n %s --replicas=N) and fix the replicas in its manifest, Helm values "+
		"or autoscaler minimum, or the next deploy scales it to zero again.", kindName, w.kind, w.ref.Name, w.ref.Namespace)
	if len(services) > 0 {
		remediation += fmt.Sprintf(" If it is meant to be off, retire Service %s too.", strings.Join(services, ", "))
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: remediation,
		Confirm: []string{
			analyze.Command("kubectl get %s -n %s %s --show-managed-fields -o yaml", w.kind, w.ref.Namespace, w.ref.Name),
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s", w.ref.Namespace, w.ref.Name),
		},
		GroupKey: w.ref.String(),
	}, true
}

// scaledToZeroEvent is the latest event saying the controller scaled a ReplicaSet of the
// Deployment down to zero, or nil.
func scaledToZeroEvent(v *analyze.View, ref analyze.ObjectRef) *analyze.Event {
	events := v.EventsFor(ref)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Reason == "ScalingReplicaSet" && reScaledToZero.MatchString(events[i].Message) {
			return events[i]
		}
	}
	return nil
}

// replicasManager finds the managedFields entry that owns spec.replicas.
func replicasManager(meta *metav1.ObjectMeta) (int, metav1.ManagedFieldsEntry, bool) {
	for i, mf := range meta.ManagedFields {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]json.RawMessage
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		if _, ok := fields["f:spec"]["f:replicas"]; ok {
			return i, mf, true
		}
	}
	return 0, metav1.ManagedFieldsEntry{}, false
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
