package analyze

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
)

// The refusals of the pods controllers create, grouped by controller and cause, as the
// admission rules read them. When the API server refuses a pod that a controller
// creates, no pod exists: the refusal lives only in the controller's FailedCreate events
// and, for a ReplicaSet, its ReplicaFailure condition. Each admission rule recognizes its
// own message among those refusals (v.RefusalGroups), names the workload above the
// controller, says how many pods the controller has and cites it all the same way
// (RefusalGroup.Summary).

// RefusalGroup gathers one owner's refusals that share a cause.
type RefusalGroup struct {
	Owner, Workload ObjectRef
	// Match holds the cause's submatches, from the latest event (or the condition when
	// no event is left).
	Match []string
	// Refusals counts the refusals the events stand for.
	Refusals int
	// LastEvent and Condition cite the latest FailedCreate event and the ReplicaFailure
	// condition; citing every refusal would bury the rest.
	LastEvent, Condition *Evidence
}

// RefusalGroups gathers, by owner and by key(match), the refusals whose message
// matches re, leaving out owners that have every pod they want now. needle is the text
// the evidence excerpts are centred on. The groups come sorted by owner and key.
func (v *View) RefusalGroups(owners *PodOwners, re *regexp.Regexp, needle string, key func(m []string) string) []*RefusalGroup {
	groups := map[string]*RefusalGroup{}
	var keys []string
	for _, r := range podCreateRefusals(v) {
		m := re.FindStringSubmatch(r.Message)
		if m == nil || owners.Satisfied(r.Owner) {
			continue
		}
		k := r.Owner.String() + "\x00" + key(m)
		g, ok := groups[k]
		if !ok {
			g = &RefusalGroup{Owner: r.Owner, Workload: owners.Workload(r.Owner), Match: m}
			groups[k] = g
			keys = append(keys, k)
		}
		ev := r.EvidenceAround(needle)
		if r.Event == nil {
			g.Condition = &ev
			continue
		}
		// Events come oldest first: the latest one has the latest values.
		g.Match = m
		g.Refusals += r.Count
		g.LastEvent = &ev
	}
	sort.Strings(keys)
	out := make([]*RefusalGroup, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// WholeMatch keys refusals by their whole matched text.
func WholeMatch(m []string) string { return m[0] }

// Summary returns the refusals' evidence (the latest event, the condition), the
// workload as a cause names it, the tail a cause ends with (the owner's progress and
// how many creations were refused) and the evidence of the progress.
func (g *RefusalGroup) Summary(owners *PodOwners) (evidence []Evidence, who, tail string, progressEv *Evidence) {
	for _, e := range []*Evidence{g.LastEvent, g.Condition} {
		if e != nil {
			evidence = append(evidence, *e)
		}
	}
	progress, progressEv := owners.Progress(g.Owner)
	who = ownerText(g.Owner, g.Workload)
	if progress != "" {
		// The progress names the owner already.
		who = g.Workload.String()
		tail = "; " + progress
	}
	if g.Refusals > 0 {
		tail += fmt.Sprintf(" (%d creation(s) refused)", g.Refusals)
	}
	return evidence, who, tail, progressEv
}

// ConfirmEvents is the command that lists an owner's refusals on a live cluster.
func (g *RefusalGroup) ConfirmEvents() string {
	return Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreate", g.Owner.Namespace, g.Owner.Name)
}

// AdmissionWebhook is one webhook of a validating or mutating webhook configuration.
type AdmissionWebhook struct {
	// Kind is "validating" or "mutating"; Config the configuration's reference.
	Kind   string
	Config ObjectRef
	// Loc is the webhook's entry in the configuration.
	Loc     Location
	Created time.Time
	// FailurePolicy is Fail unless the configuration says Ignore; Timeout is in seconds
	// (10 when unset, the admissionregistration/v1 default).
	FailurePolicy string
	Timeout       int32
	// Target is where the API server calls it: a URL or "service NS/NAME:PORT/PATH".
	Target string
	// Namespaces describes what the namespaceSelector and objectSelector select.
	Namespaces string
}

// FindWebhook looks a webhook up by name in the bundle's webhook configurations.
func (v *View) FindWebhook(name string) *AdmissionWebhook {
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

func newAdmissionWebhook(kind string, config ObjectRef, loc Location, created time.Time,
	cc admissionregistrationv1.WebhookClientConfig, fp *admissionregistrationv1.FailurePolicyType, timeout *int32,
	nsSel, objSel *metav1.LabelSelector) *AdmissionWebhook {
	w := &AdmissionWebhook{Kind: kind, Config: config, Loc: loc, Created: created, FailurePolicy: "Fail", Timeout: 10, Namespaces: "every namespace"}
	if fp != nil {
		w.FailurePolicy = string(*fp)
	}
	if timeout != nil {
		w.Timeout = *timeout
	}
	switch {
	case cc.URL != nil:
		w.Target = *cc.URL
	case cc.Service != nil:
		port, path := int32(443), ""
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		w.Target = fmt.Sprintf("service %s/%s:%d%s", cc.Service.Namespace, cc.Service.Name, port, path)
	}
	if selects(nsSel) {
		w.Namespaces = "namespaces matching " + metav1.FormatLabelSelector(nsSel)
	}
	if selects(objSel) {
		w.Namespaces += ", objects matching " + metav1.FormatLabelSelector(objSel)
	}
	return w
}

// selects reports whether a selector narrows anything.
func selects(sel *metav1.LabelSelector) bool {
	return sel != nil && (len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0)
}

// Describe names the webhook for a cause, with details in its parenthesis:
// `validating webhook "x" (ValidatingWebhookConfiguration c, failurePolicy Fail)`.
func (w *AdmissionWebhook) Describe(name string, details ...string) string {
	if w == nil {
		return fmt.Sprintf("admission webhook %q", name)
	}
	return fmt.Sprintf("%s webhook %q (%s)", w.Kind, name, strings.Join(append([]string{w.Config.Kind + " " + w.Config.Name}, details...), ", "))
}

// Evidence cites the webhook's entry: where it is called, for which namespaces, and
// what happens when the call fails.
func (w *AdmissionWebhook) Evidence(name string) Evidence {
	return w.Loc.Evidence(fmt.Sprintf("webhook %s calls %s for %s, failurePolicy %s, timeoutSeconds %d",
		name, w.Target, w.Namespaces, w.FailurePolicy, w.Timeout), w.Created)
}

// Confirm is the command that shows the webhook's configuration on a live cluster.
func (w *AdmissionWebhook) Confirm() string {
	if w == nil {
		return "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations"
	}
	return Command("kubectl get %swebhookconfiguration %s -o yaml", w.Kind, w.Config.Name)
}

// ownerText names a workload and, when it differs, the controller that creates its
// pods: "Deployment shop/web (ReplicaSet web-7d9f8b6c5d)".
func ownerText(owner, workload ObjectRef) string {
	if owner == workload {
		return owner.String()
	}
	return workload.String() + " (" + owner.Kind + " " + owner.Name + ")"
}

// podCreateRefusals lists the refusals of the view's admission facts whose controller
// is known: FailedCreate events (oldest first), then the ReplicaSets' ReplicaFailure
// conditions. A pasted refusal names no controller to join; the unexplained check
// quotes it.
func podCreateRefusals(v *View) []AdmissionRejection {
	var out []AdmissionRejection
	for _, r := range v.AdmissionRejections() {
		if r.Owner.Kind != "" {
			out = append(out, r)
		}
	}
	return out
}

// PodOwners indexes the controllers that create pods, to find their templates, their
// progress and the workload above them.
type PodOwners struct {
	v  *View
	rs map[string]*ReplicaSet
	// derived says the view's ReplicaSets include derived ones, looked up by key.
	derived bool
	jobs    map[string]*Job
	sts     map[string]*StatefulSet
	ds      map[string]*DaemonSet
}

// PodOwners indexes the view's ReplicaSets, Jobs, StatefulSets and DaemonSets (those the
// rule declared) by namespace and name.
func (v *View) PodOwners() *PodOwners {
	o := &PodOwners{v: v, rs: map[string]*ReplicaSet{}, jobs: map[string]*Job{},
		sts: map[string]*StatefulSet{}, ds: map[string]*DaemonSet{}}
	// The derived ReplicaSets are made back only when asked for (replicaSet): every
	// rule that reads owners builds this index.
	for _, x := range only(v, ReplicaSets, v.g.replicaSets) {
		o.rs[x.Obj.Namespace+"/"+x.Obj.Name] = x
	}
	o.derived = v.allow(ReplicaSets) && len(v.g.derivedRS) > 0
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

// replicaSet is the ReplicaSet namespace/name (key) of the view, or nil.
func (o *PodOwners) replicaSet(key string) *ReplicaSet {
	if x := o.rs[key]; x != nil || !o.derived {
		return x
	}
	if d, ok := o.v.g.byKey["ReplicaSet/"+key].(*derivedReplicaSet); ok {
		return d.object()
	}
	return nil
}

// Ref completes an owner's reference with its UID when the bundle holds the owner.
func (o *PodOwners) Ref(r ObjectRef) ObjectRef {
	key := r.Namespace + "/" + r.Name
	switch r.Kind {
	case "ReplicaSet":
		if x := o.replicaSet(key); x != nil {
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

// Workload is the top of an owner's chain: the Deployment of a ReplicaSet, the CronJob
// of a Job, or the owner itself.
func (o *PodOwners) Workload(ref ObjectRef) ObjectRef {
	key := ref.Namespace + "/" + ref.Name
	var up *ObjectRef
	switch ref.Kind {
	case "ReplicaSet":
		if x := o.replicaSet(key); x != nil {
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

// Template returns an owner's pod template and its location.
func (o *PodOwners) Template(ref ObjectRef) (*corev1.PodTemplateSpec, Location, bool) {
	key := ref.Namespace + "/" + ref.Name
	switch ref.Kind {
	case "ReplicaSet":
		if x := o.replicaSet(key); x != nil {
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
	return nil, Location{}, false
}

// Satisfied reports whether an owner now has every pod it wants (or is finished), so
// older refusals no longer matter. Without the owner in the bundle it cannot tell and
// says no.
func (o *PodOwners) Satisfied(ref ObjectRef) bool {
	key := ref.Namespace + "/" + ref.Name
	switch ref.Kind {
	case "ReplicaSet":
		x := o.replicaSet(key)
		if x == nil {
			return false
		}
		for _, c := range x.Obj.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				return false
			}
		}
		return x.Obj.Status.Replicas >= Replicas(x.Obj.Spec.Replicas)
	case "StatefulSet":
		x := o.sts[key]
		return x != nil && x.Obj.Status.Replicas >= Replicas(x.Obj.Spec.Replicas)
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

// Progress says how many pods an owner has of those it wants, and cites its status.
func (o *PodOwners) Progress(ref ObjectRef) (string, *Evidence) {
	key := ref.Namespace + "/" + ref.Name
	var text string
	var loc Location
	switch ref.Kind {
	case "ReplicaSet":
		x := o.replicaSet(key)
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("ReplicaSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, Replicas(x.Obj.Spec.Replicas))
		loc = x.Loc.At("status")
	case "StatefulSet":
		x := o.sts[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("StatefulSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, Replicas(x.Obj.Spec.Replicas))
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

// ResourceQuota returns the namespace's quota of that name, or nil.
func (v *View) ResourceQuota(ns, name string) *ResourceQuota {
	for _, q := range v.ResourceQuotas() {
		if q.Obj.Namespace == ns && q.Obj.Name == name {
			return q
		}
	}
	return nil
}

// TemplateResourceEvidence cites the requests and limits of the owner's pod template.
func (o *PodOwners) TemplateResourceEvidence(owner ObjectRef) []Evidence {
	tmpl, loc, ok := o.Template(owner)
	if !ok {
		return nil
	}
	var out []Evidence
	for i, c := range tmpl.Spec.Containers {
		text := "container " + c.Name + " sets no requests or limits"
		at := loc.At("spec", "containers", i)
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			text = "container " + c.Name + ResourceText(" requests ", c.Resources.Requests) + ResourceText(" limits ", c.Resources.Limits)
			at = at.At("resources")
		}
		out = append(out, at.Evidence(text, time.Time{}))
	}
	return out
}

// ResourceText renders a resource list after label, sorted by name: " requests cpu=1,memory=1Gi".
func ResourceText(label string, list corev1.ResourceList) string {
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

// TemplateFieldEvidence cites a field of the pod spec in the owner's template, with set
// as the excerpt, or the pod spec itself with unset when the field is empty.
func (o *PodOwners) TemplateFieldEvidence(owner ObjectRef, field, set, unset string) []Evidence {
	tmpl, loc, ok := o.Template(owner)
	if !ok {
		return nil
	}
	value := map[string]string{"serviceAccountName": tmpl.Spec.ServiceAccountName, "priorityClassName": tmpl.Spec.PriorityClassName}[field]
	if value == "" {
		return []Evidence{loc.At("spec").Evidence(unset, time.Time{})}
	}
	return []Evidence{loc.At("spec", field).Evidence(set, time.Time{})}
}
