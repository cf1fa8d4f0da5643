package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ServiceSelectorMatchesNothing finds Services whose selector matches no pod.
var ServiceSelectorMatchesNothing = &analyze.Rule{
	ID:       "service-selector-matches-nothing",
	Stage:    analyze.StageService,
	Title:    "service selector matches no pod",
	Doc:      serviceSelectorMatchesNothingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		AnyOf:    []analyze.Kind{analyze.Services, analyze.EndpointSlices},
		Optional: []analyze.Kind{analyze.Pods, analyze.Deployments, analyze.StatefulSets, analyze.DaemonSets, analyze.ReplicaSets},
	},
	Run: serviceSelectorMatchesNothing,
}

const serviceSelectorMatchesNothingDoc = `The Service's selector matches no running pod in its namespace, so its EndpointSlices
are empty and every connection to it fails, while the pods meant to serve it may be
perfectly healthy. The usual cause is a label that differs between the Service's
selector and the pod template (a typo, a renamed app, a selector with one key too
many). podflow names the pods whose labels come closest to the selector. Without
pods, a pasted workload's pod template stands in.

## Confirm on a live cluster

    kubectl get service -n NAMESPACE SERVICE -o jsonpath='{.spec.selector}'
    kubectl get pods -n NAMESPACE -l SELECTOR        # "No resources found"
    kubectl get pods -n NAMESPACE --show-labels
    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE

## Fix

Make the selector and the pod template's labels agree: change the Service's selector
to the labels the pods carry, or add the missing labels to the pod template (which
rolls the pods). Pods must also be in the Service's namespace.
`

func serviceSelectorMatchesNothing(v *analyze.View) []analyze.Finding {
	out := emptyEndpointsWithoutService(v)
	for _, s := range v.SelectorServices() {
		svc := s.Obj
		if standIns := v.StandInTemplates(svc.Namespace); len(standIns) > 0 {
			if f, ok := templateSelectorFinding(s, standIns); ok {
				out = append(out, f)
			}
			continue
		}
		if !v.Has(analyze.Pods) {
			continue
		}
		live, finished := 0, 0
		for _, p := range v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector) {
			if analyze.PodFinished(p) {
				finished++
			} else {
				live++
			}
		}
		if live > 0 {
			continue
		}
		sliceText, sliceEvidence, endpoints := sliceEndpoints(v, s)
		if endpoints > 0 {
			// The endpoints controller found pods the bundle does not hold (collected
			// with a label selector): the selector does match.
			continue
		}
		sel := phrase.Selector(svc.Spec.Selector)
		evidence := []analyze.Evidence{s.Loc.At("spec", "selector").Evidence("selector "+sel, svc.CreationTimestamp.Time)}
		evidence = append(evidence, sliceEvidence...)
		where := "in namespace " + svc.Namespace
		if svc.Namespace == "" {
			where = "of its namespace"
		}
		cause := fmt.Sprintf("service %s selects %s but no running pod %s has those labels", s.Ref().NamespacedName(), sel, where)
		if finished > 0 {
			cause += fmt.Sprintf(" (only %d finished pod(s) do)", finished)
		}
		closest, closestEv := closestPods(v, svc)
		if closest != "" {
			cause += "; " + closest
		}
		evidence = append(evidence, closestEv...)
		if sliceText != "" {
			cause += "; " + sliceText
		}
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{s.Ref()},
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Make the selector of service %s (%s) and the labels of the pods meant to serve it agree: "+
				"change the selector to labels the pods carry, or add the labels to their template.", svc.Name, sel),
			Confirm: []string{
				analyze.Command("kubectl get pods -n %s -l %s", svc.Namespace, analyze.Value(sel)),
				analyze.Command("kubectl get pods -n %s --show-labels", svc.Namespace),
				analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name),
			},
		})
	}
	return out
}

// emptyEndpointsWithoutService reads a Service's trouble from its Endpoints alone, when
// the evidence holds no Service object of that name (a pasted `kubectl get endpoints`
// or Endpoints YAML): no address at all, ready or not, means its selector matches no
// running pod, for the endpoints controller lists the pods it selects, ready or not.
// kubectl's table lists ready addresses only, so from it the cause is said with that
// doubt.
func emptyEndpointsWithoutService(v *analyze.View) []analyze.Finding {
	if !v.Has(analyze.EndpointSlices) {
		return nil
	}
	known := map[string]bool{}
	for _, s := range v.Services() {
		known[s.Obj.Namespace+"/"+s.Obj.Name] = true
	}
	type svc struct {
		ns, name string
		slices   []*analyze.EndpointSlice
	}
	var order []string
	bySvc := map[string]*svc{}
	for _, sl := range v.EndpointSlices() {
		name := sl.Obj.Labels["kubernetes.io/service-name"]
		key := sl.Obj.Namespace + "/" + name
		if name == "" || known[key] {
			continue
		}
		if bySvc[key] == nil {
			bySvc[key] = &svc{ns: sl.Obj.Namespace, name: name}
			order = append(order, key)
		}
		bySvc[key].slices = append(bySvc[key].slices, sl)
	}
	var out []analyze.Finding
	for _, key := range order {
		s := bySvc[key]
		n, readyOnly := 0, false
		var evidence []analyze.Evidence
		for _, sl := range s.slices {
			n += len(sl.Obj.Endpoints)
			readyOnly = readyOnly || analyze.Partial(sl.Obj.ObjectMeta, "notReadyEndpoints")
			what := "Endpoints " + s.name + ": no address"
			if sl.Obj.Annotations["podflow.dev/converted-from"] == "" {
				what = fmt.Sprintf("EndpointSlice %s: no endpoint", sl.Obj.Name)
			}
			evidence = append(evidence, sl.Loc.Evidence(what, sl.Obj.CreationTimestamp.Time))
		}
		if n > 0 {
			continue
		}
		ref := analyze.ObjectRef{Kind: "Service", Namespace: s.ns, Name: s.name}
		cause := fmt.Sprintf("service %s has no endpoints, so every connection to it fails", ref.NamespacedName())
		var ready []*analyze.Pod
		for _, p := range podsInNamespace(v, s.ns) {
			if !analyze.PodFinished(p) && analyze.IsReady(p) {
				ready = append(ready, p)
			}
		}
		switch {
		case len(ready) > 0:
			cause += fmt.Sprintf(", although %d pod(s) of namespace %s are running and ready (%s): its selector matches none of them",
				len(ready), s.ns, ready[0].Obj.Name)
			evidence = append(evidence, ready[0].Loc.At("metadata").Evidence("pod "+ready[0].Obj.Name+" labels "+phrase.Selector(ready[0].Obj.Labels), ready[0].Obj.CreationTimestamp.Time))
		case readyOnly:
			cause += ": its selector matches no pod, or only pods that are not ready (kubectl get endpoints lists ready addresses only)"
		default:
			cause += ": its Endpoints list no address, ready or not, so its selector matches no running pod"
		}
		cause += "; the Service object is not in the evidence, so its selector is not known"
		out = append(out, analyze.Finding{
			Subjects: []analyze.ObjectRef{ref},
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Compare the selector of service %s with the labels of the pods meant to serve it, and make them agree "+
				"(change the selector or the pod template's labels); if they agree, make the pods ready.", s.name),
			Confirm: []string{
				analyze.Command("kubectl get service -n %s %s -o jsonpath='{.spec.selector}'", s.ns, s.name),
				analyze.Command("kubectl get pods -n %s --show-labels", s.ns),
				analyze.Command("kubectl get endpoints -n %s %s -o yaml", s.ns, s.name),
			},
		})
	}
	return out
}

// sliceEndpoints counts the endpoints of a Service's EndpointSlices and cites the slices.
func sliceEndpoints(v *analyze.View, s *analyze.Service) (string, []analyze.Evidence, int) {
	if !v.Has(analyze.EndpointSlices) {
		return "", nil, 0
	}
	slices := v.EndpointSlicesFor(s.Obj.Namespace, s.Obj.Name)
	if len(slices) == 0 {
		return "it has no EndpointSlice", nil, 0
	}
	n := 0
	var evidence []analyze.Evidence
	for _, sl := range slices {
		n += len(sl.Obj.Endpoints)
		evidence = append(evidence, sl.Loc.Evidence(fmt.Sprintf("EndpointSlice %s: %d endpoint(s)", sl.Obj.Name, len(sl.Obj.Endpoints)), sl.Obj.CreationTimestamp.Time))
	}
	return fmt.Sprintf("its EndpointSlice(s) list %d endpoint(s)", n), evidence, n
}

// closestPods finds the running pods of the namespace whose labels come closest to the
// selector (most pairs equal, then most keys present) and says how they differ.
// Pods with the same values for the selector's keys (replicas of one template) are
// described once.
func closestPods(v *analyze.View, svc *corev1.Service) (string, []analyze.Evidence) {
	keys := slices.Sorted(maps.Keys(svc.Spec.Selector))
	type candidate struct {
		score int
		view  string
		pods  []*analyze.Pod
	}
	byView := map[string]*candidate{}
	var pods int
	for _, p := range podsInNamespace(v, svc.Namespace) {
		if analyze.PodFinished(p) {
			continue
		}
		pods++
		score, parts := selectorDiff(svc.Spec.Selector, keys, p.Obj.Labels, true, func(k, v string) string { return k + "=" + v })
		view := strings.Join(parts, ", ")
		c := byView[view]
		if c == nil {
			c = &candidate{score: score, view: view}
			byView[view] = c
		}
		c.pods = append(c.pods, p)
	}
	if pods == 0 {
		return "the namespace has no running pod at all", nil
	}
	var best *candidate
	for _, c := range byView {
		if best == nil || c.score > best.score || (c.score == best.score && (len(c.pods) > len(best.pods) ||
			(len(c.pods) == len(best.pods) && c.pods[0].Obj.Name < best.pods[0].Obj.Name))) {
			best = c
		}
	}
	first := best.pods[0]
	who := "pod " + first.Obj.Name
	if len(best.pods) > 1 {
		who = fmt.Sprintf("%d pods (%s, ...)", len(best.pods), first.Obj.Name)
	}
	verb := "has"
	if len(best.pods) > 1 {
		verb = "have"
	}
	text := fmt.Sprintf("the closest, %s, %s %s", who, verb, best.view)
	if best.score == 0 {
		text = fmt.Sprintf("no running pod has any of the selector's keys; %s has labels %s", who, phrase.Selector(first.Obj.Labels))
	}
	loc := first.Loc.At("metadata", "labels")
	if len(first.Obj.Labels) == 0 {
		loc = first.Loc.At("metadata")
	}
	return text, []analyze.Evidence{loc.Evidence("pod "+first.Obj.Name+" labels "+phrase.Selector(first.Obj.Labels), first.Obj.CreationTimestamp.Time)}
}

// selectorDiff scores labels against a selector whose keys are given sorted: two for
// each pair of the selector the labels carry, one for each key they carry with another
// value. It says, key by key, what the labels have: "no KEY label", or the key and value
// as say writes them (pairs equal to the selector's only when withEqual).
func selectorDiff(sel map[string]string, keys []string, labels map[string]string, withEqual bool, say func(k, v string) string) (int, []string) {
	score := 0
	var parts []string
	for _, k := range keys {
		got, ok := labels[k]
		switch {
		case !ok:
			parts = append(parts, "no "+k+" label")
		case got == sel[k]:
			score += 2
			if withEqual {
				parts = append(parts, say(k, got))
			}
		default:
			score++
			parts = append(parts, say(k, got))
		}
	}
	return score, parts
}

// podsInNamespace lists a namespace's pods, sorted by name.
func podsInNamespace(v *analyze.View, ns string) []*analyze.Pod {
	var out []*analyze.Pod
	for _, p := range v.Pods() {
		if p.Obj.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// templateSelectorFinding compares a Service's selector with the pod templates that
// stand in for the pods the evidence does not hold: when no template carries every
// pair of the selector, the pods those workloads make will not either.
func templateSelectorFinding(s *analyze.Service, standIns []analyze.StandIn) (analyze.Finding, bool) {
	svc := s.Obj
	if len(analyze.StandInsSelectedBy(standIns, svc.Spec.Selector)) > 0 {
		return analyze.Finding{}, false
	}
	for _, st := range standIns {
		if st.LabelsUnknown {
			return analyze.Finding{}, false // a cut workload may carry the labels
		}
	}
	keys := slices.Sorted(maps.Keys(svc.Spec.Selector))
	best, bestScore := -1, -1
	var bestDiff []string
	for i, st := range standIns {
		score, diff := selectorDiff(svc.Spec.Selector, keys, st.Template.Labels, false, func(k, v string) string { return k + " is " + v })
		if score > bestScore {
			best, bestScore, bestDiff = i, score, diff
		}
	}
	st := standIns[best]
	sel := phrase.Selector(svc.Spec.Selector)
	cause := fmt.Sprintf("service %s selects %s, but the pod template of %s (its pods are not in the evidence) has labels %s, "+
		"so the pods it makes will not match (%s) and the Service gets no endpoints",
		s.Ref().NamespacedName(), sel, st.Owner, phrase.Selector(st.Template.Labels), strings.Join(bestDiff, ", "))
	if len(standIns) > 1 {
		cause += fmt.Sprintf("; no other of the %d workloads in the evidence matches either", len(standIns))
	}
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{s.Ref(), st.Owner},
		Cause:    cause,
		Evidence: []analyze.Evidence{
			s.Loc.At("spec", "selector").Evidence("selector "+sel, svc.CreationTimestamp.Time),
			st.Loc.At("metadata", "labels").Evidence(st.Owner.String()+" template labels "+phrase.Selector(st.Template.Labels), time.Time{}),
		},
		Remediation: fmt.Sprintf("Make the selector of service %s (%s) and the labels of the pod template of %s agree: "+
			"change the selector to labels the template sets, or add the labels to the template.", svc.Name, sel, st.Owner),
		Confirm: []string{
			analyze.Command("kubectl get pods -n %s -l %s", svc.Namespace, analyze.Value(sel)),
			analyze.Command("kubectl get pods -n %s --show-labels", svc.Namespace),
			analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name),
		},
	}, true
}
