package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/analyze"
)

// This file holds what the admission rules share. When the API server refuses a pod
// that a controller creates, no pod exists: the refusal lives only in the controller's
// FailedCreate events and, for a ReplicaSet, its ReplicaFailure condition. Each admission
// rule recognizes its own message among those refusals (admissionRefusals), names the
// workload above the controller, says how many pods the controller has and cites it all
// the same way (admissionRefusal.summary).

// admissionRefusal gathers one owner's refusals that share a cause.
type admissionRefusal struct {
	owner, workload analyze.ObjectRef
	// match holds the cause's submatches, from the latest event (or the condition when
	// no event is left).
	match []string
	// refusals counts the refusals the events stand for.
	refusals int
	// lastEvent and condition cite the latest FailedCreate event and the ReplicaFailure
	// condition; citing every refusal would bury the rest.
	lastEvent, condition *analyze.Evidence
}

// admissionRefusals gathers, by owner and by key(match), the refusals whose message
// matches re, leaving out owners that have every pod they want now. needle is the text
// the evidence excerpts are centred on. The groups come sorted by owner and key.
func admissionRefusals(v *analyze.View, owners *podOwners, re *regexp.Regexp, needle string, key func(m []string) string) []*admissionRefusal {
	groups := map[string]*admissionRefusal{}
	var keys []string
	for _, r := range podCreateRefusals(v) {
		m := re.FindStringSubmatch(r.Message)
		if m == nil || owners.satisfied(r.Owner) {
			continue
		}
		k := r.Owner.String() + "\x00" + key(m)
		g, ok := groups[k]
		if !ok {
			g = &admissionRefusal{owner: r.Owner, workload: owners.workload(r.Owner), match: m}
			groups[k] = g
			keys = append(keys, k)
		}
		ev := r.EvidenceAround(needle)
		if r.Event == nil {
			g.condition = &ev
			continue
		}
		// Events come oldest first: the latest one has the latest values.
		g.match = m
		g.refusals += r.Count
		g.lastEvent = &ev
	}
	sort.Strings(keys)
	out := make([]*admissionRefusal, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// wholeMatch keys refusals by their whole matched text.
func wholeMatch(m []string) string { return m[0] }

// summary returns the refusals' evidence (the latest event, the condition), the
// workload as a cause names it, the tail a cause ends with (the owner's progress and
// how many creations were refused) and the evidence of the progress.
func (g *admissionRefusal) summary(owners *podOwners) (evidence []analyze.Evidence, who, tail string, progressEv *analyze.Evidence) {
	for _, e := range []*analyze.Evidence{g.lastEvent, g.condition} {
		if e != nil {
			evidence = append(evidence, *e)
		}
	}
	progress, progressEv := owners.progress(g.owner)
	who = ownerText(g.owner, g.workload)
	if progress != "" {
		// The progress names the owner already.
		who = g.workload.String()
		tail = "; " + progress
	}
	if g.refusals > 0 {
		tail += fmt.Sprintf(" (%d creation(s) refused)", g.refusals)
	}
	return evidence, who, tail, progressEv
}

// confirmEvents is the command that lists an owner's refusals on a live cluster.
func (g *admissionRefusal) confirmEvents() string {
	return analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreate", g.owner.Namespace, g.owner.Name)
}

// admissionWebhook is one webhook of a validating or mutating webhook configuration.
type admissionWebhook struct {
	// kind is "validating" or "mutating"; config the configuration's reference.
	kind   string
	config analyze.ObjectRef
	// loc is the webhook's entry in the configuration.
	loc     analyze.Location
	created time.Time
	// failurePolicy is Fail unless the configuration says Ignore; timeout is in seconds
	// (10 when unset, the admissionregistration/v1 default).
	failurePolicy string
	timeout       int32
	// target is where the API server calls it: a URL or "service NS/NAME:PORT/PATH".
	target string
	// namespaces describes what the namespaceSelector and objectSelector select.
	namespaces string
}

// findWebhook looks a webhook up by name in the bundle's webhook configurations.
func findWebhook(v *analyze.View, name string) *admissionWebhook {
	for _, c := range v.ValidatingWebhooks() {
		for i, h := range c.Obj.Webhooks {
			if h.Name == name {
				return newAdmissionWebhook("validating", c.Ref(), c.Loc.At("webhooks", i), c.Obj.CreationTimestamp.Time,
					h.ClientConfig, h.FailurePolicy, h.TimeoutSeconds, h.NamespaceSelector, h.ObjectSelector)
			}
		}
	}
	for _, c := range v.MutatingWebhooks() {
		for i, h := range c.Obj.Webhooks {
			if h.Name == name {
				return newAdmissionWebhook("mutating", c.Ref(), c.Loc.At("webhooks", i), c.Obj.CreationTimestamp.Time,
					h.ClientConfig, h.FailurePolicy, h.TimeoutSeconds, h.NamespaceSelector, h.ObjectSelector)
			}
		}
	}
	return nil
}

func newAdmissionWebhook(kind string, config analyze.ObjectRef, loc analyze.Location, created time.Time,
	cc admissionregistrationv1.WebhookClientConfig, fp *admissionregistrationv1.FailurePolicyType, timeout *int32,
	nsSel, objSel *metav1.LabelSelector) *admissionWebhook {
	w := &admissionWebhook{kind: kind, config: config, loc: loc, created: created, failurePolicy: "Fail", timeout: 10, namespaces: "every namespace"}
	if fp != nil {
		w.failurePolicy = string(*fp)
	}
	if timeout != nil {
		w.timeout = *timeout
	}
	switch {
	case cc.URL != nil:
		w.target = *cc.URL
	case cc.Service != nil:
		port, path := int32(443), ""
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		w.target = fmt.Sprintf("service %s/%s:%d%s", cc.Service.Namespace, cc.Service.Name, port, path)
	}
	if selects(nsSel) {
		w.namespaces = "namespaces matching " + metav1.FormatLabelSelector(nsSel)
	}
	if selects(objSel) {
		w.namespaces += ", objects matching " + metav1.FormatLabelSelector(objSel)
	}
	return w
}

// selects reports whether a selector narrows anything.
func selects(sel *metav1.LabelSelector) bool {
	return sel != nil && (len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0)
}

// describe names the webhook for a cause, with details in its parenthesis:
// `validating webhook "x" (ValidatingWebhookConfiguration c, failurePolicy Fail)`.
func (w *admissionWebhook) describe(name string, details ...string) string {
	if w == nil {
		return fmt.Sprintf("admission webhook %q", name)
	}
	return fmt.Sprintf("%s webhook %q (%s)", w.kind, name, strings.Join(append([]string{w.config.Kind + " " + w.config.Name}, details...), ", "))
}

// evidence cites the webhook's entry: where it is called, for which namespaces, and
// what happens when the call fails.
func (w *admissionWebhook) evidence(name string) analyze.Evidence {
	return w.loc.Evidence(fmt.Sprintf("webhook %s calls %s for %s, failurePolicy %s, timeoutSeconds %d",
		name, w.target, w.namespaces, w.failurePolicy, w.timeout), w.created)
}

// confirm is the command that shows the webhook's configuration on a live cluster.
func (w *admissionWebhook) confirm() string {
	if w == nil {
		return "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations"
	}
	return analyze.Command("kubectl get %swebhookconfiguration %s -o yaml", w.kind, w.config.Name)
}

// ownerText names a workload and, when it differs, the controller that creates its
// pods: "Deployment shop/web (ReplicaSet web-7d9f8b6c5d)".
func ownerText(owner, workload analyze.ObjectRef) string {
	if owner == workload {
		return owner.String()
	}
	return workload.String() + " (" + owner.Kind + " " + owner.Name + ")"
}

// podCreateRefusals lists the refusals of the view's admission facts whose controller
// is known: FailedCreate events (oldest first), then the ReplicaSets' ReplicaFailure
// conditions. A pasted refusal names no controller to join; the unexplained check
// quotes it.
func podCreateRefusals(v *analyze.View) []analyze.AdmissionRejection {
	var out []analyze.AdmissionRejection
	for _, r := range v.AdmissionRejections() {
		if r.Owner.Kind != "" {
			out = append(out, r)
		}
	}
	return out
}

// podOwners indexes the controllers that create pods, to find their templates, their
// progress and the workload above them.
type podOwners struct {
	v    *analyze.View
	rs   map[string]*analyze.ReplicaSet
	jobs map[string]*analyze.Job
	sts  map[string]*analyze.StatefulSet
	ds   map[string]*analyze.DaemonSet
}

func indexPodOwners(v *analyze.View) *podOwners {
	o := &podOwners{v: v, rs: map[string]*analyze.ReplicaSet{}, jobs: map[string]*analyze.Job{},
		sts: map[string]*analyze.StatefulSet{}, ds: map[string]*analyze.DaemonSet{}}
	for _, x := range v.ReplicaSets() {
		o.rs[x.Obj.Namespace+"/"+x.Obj.Name] = x
	}
	for _, x := range v.Jobs() {
		o.jobs[x.Obj.Namespace+"/"+x.Obj.Name] = x
	}
	for _, x := range v.StatefulSets() {
		o.sts[x.Obj.Namespace+"/"+x.Obj.Name] = x
	}
	for _, x := range v.DaemonSets() {
		o.ds[x.Obj.Namespace+"/"+x.Obj.Name] = x
	}
	return o
}

// ref completes an owner's reference with its UID when the bundle holds the owner.
func (o *podOwners) ref(r analyze.ObjectRef) analyze.ObjectRef {
	key := r.Namespace + "/" + r.Name
	switch r.Kind {
	case "ReplicaSet":
		if x := o.rs[key]; x != nil {
			return x.Ref()
		}
	case "Job":
		if x := o.jobs[key]; x != nil {
			return x.Ref()
		}
	case "StatefulSet":
		if x := o.sts[key]; x != nil {
			return x.Ref()
		}
	case "DaemonSet":
		if x := o.ds[key]; x != nil {
			return x.Ref()
		}
	}
	return r
}

// workload is the top of an owner's chain: the Deployment of a ReplicaSet, the CronJob
// of a Job, or the owner itself.
func (o *podOwners) workload(ref analyze.ObjectRef) analyze.ObjectRef {
	key := ref.Namespace + "/" + ref.Name
	var up *analyze.ObjectRef
	switch ref.Kind {
	case "ReplicaSet":
		if x := o.rs[key]; x != nil {
			up = o.v.Controller(x.Meta())
		}
	case "Job":
		if x := o.jobs[key]; x != nil {
			up = o.v.Controller(x.Meta())
		}
	}
	if up == nil {
		return ref
	}
	return *up
}

// template returns an owner's pod template and its location.
func (o *podOwners) template(ref analyze.ObjectRef) (*corev1.PodTemplateSpec, analyze.Location, bool) {
	key := ref.Namespace + "/" + ref.Name
	switch ref.Kind {
	case "ReplicaSet":
		if x := o.rs[key]; x != nil {
			return &x.Obj.Spec.Template, x.Loc.At("spec", "template"), true
		}
	case "Job":
		if x := o.jobs[key]; x != nil {
			return &x.Obj.Spec.Template, x.Loc.At("spec", "template"), true
		}
	case "StatefulSet":
		if x := o.sts[key]; x != nil {
			return &x.Obj.Spec.Template, x.Loc.At("spec", "template"), true
		}
	case "DaemonSet":
		if x := o.ds[key]; x != nil {
			return &x.Obj.Spec.Template, x.Loc.At("spec", "template"), true
		}
	}
	return nil, analyze.Location{}, false
}

// satisfied reports whether an owner now has every pod it wants (or is finished), so
// older refusals no longer matter. Without the owner in the bundle it cannot tell and
// says no.
func (o *podOwners) satisfied(ref analyze.ObjectRef) bool {
	key := ref.Namespace + "/" + ref.Name
	switch ref.Kind {
	case "ReplicaSet":
		x := o.rs[key]
		if x == nil {
			return false
		}
		for _, c := range x.Obj.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				return false
			}
		}
		return x.Obj.Status.Replicas >= analyze.Replicas(x.Obj.Spec.Replicas)
	case "StatefulSet":
		x := o.sts[key]
		return x != nil && x.Obj.Status.Replicas >= analyze.Replicas(x.Obj.Spec.Replicas)
	case "DaemonSet":
		x := o.ds[key]
		return x != nil && x.Obj.Status.CurrentNumberScheduled >= x.Obj.Status.DesiredNumberScheduled
	case "Job":
		x := o.jobs[key]
		if x == nil {
			return false
		}
		for _, c := range x.Obj.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// progress says how many pods an owner has of those it wants, and cites its status.
func (o *podOwners) progress(ref analyze.ObjectRef) (string, *analyze.Evidence) {
	key := ref.Namespace + "/" + ref.Name
	var text string
	var loc analyze.Location
	switch ref.Kind {
	case "ReplicaSet":
		x := o.rs[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("ReplicaSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, analyze.Replicas(x.Obj.Spec.Replicas))
		loc = x.Loc.At("status")
	case "StatefulSet":
		x := o.sts[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("StatefulSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, analyze.Replicas(x.Obj.Spec.Replicas))
		loc = x.Loc.At("status")
	case "DaemonSet":
		x := o.ds[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("DaemonSet %s has pods on %d of %d node(s)", x.Obj.Name, x.Obj.Status.CurrentNumberScheduled, x.Obj.Status.DesiredNumberScheduled)
		loc = x.Loc.At("status")
	case "Job":
		x := o.jobs[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("Job %s has %d active pod(s)", x.Obj.Name, x.Obj.Status.Active)
		loc = x.Loc.At("status")
	default:
		return "", nil
	}
	ev := loc.Evidence(text, o.v.CollectedAt())
	return text, &ev
}

func findQuota(v *analyze.View, ns, name string) *analyze.ResourceQuota {
	for _, q := range v.ResourceQuotas() {
		if q.Obj.Namespace == ns && q.Obj.Name == name {
			return q
		}
	}
	return nil
}

// templateResourceEvidence cites the requests and limits of the owner's pod template.
func templateResourceEvidence(owners *podOwners, owner analyze.ObjectRef) []analyze.Evidence {
	tmpl, loc, ok := owners.template(owner)
	if !ok {
		return nil
	}
	var out []analyze.Evidence
	for i, c := range tmpl.Spec.Containers {
		text := "container " + c.Name + " sets no requests or limits"
		at := loc.At("spec", "containers", i)
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			text = "container " + c.Name + resourceText(" requests ", c.Resources.Requests) + resourceText(" limits ", c.Resources.Limits)
			at = at.At("resources")
		}
		out = append(out, at.Evidence(text, time.Time{}))
	}
	return out
}

func resourceText(label string, list corev1.ResourceList) string {
	if len(list) == 0 {
		return ""
	}
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		q := list[corev1.ResourceName(n)]
		parts[i] = n + "=" + q.String()
	}
	return label + strings.Join(parts, ",")
}

// templateFieldEvidence cites a field of the pod spec in the owner's template, with set
// as the excerpt, or the pod spec itself with unset when the field is empty.
func templateFieldEvidence(owners *podOwners, owner analyze.ObjectRef, field, set, unset string) []analyze.Evidence {
	tmpl, loc, ok := owners.template(owner)
	if !ok {
		return nil
	}
	value := map[string]string{"serviceAccountName": tmpl.Spec.ServiceAccountName, "priorityClassName": tmpl.Spec.PriorityClassName}[field]
	if value == "" {
		return []analyze.Evidence{loc.At("spec").Evidence(unset, time.Time{})}
	}
	return []analyze.Evidence{loc.At("spec", field).Evidence(set, time.Time{})}
}
