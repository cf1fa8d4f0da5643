package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// AdmissionQuotaExceeded finds workloads whose pods a ResourceQuota refuses.
var AdmissionQuotaExceeded = &analyze.Rule{
	ID:       "admission-quota-exceeded",
	Stage:    analyze.StageAdmission,
	Title:    "a ResourceQuota refuses the workload's pods",
	Doc:      admissionQuotaExceededDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.ResourceQuotas},
	},
	Run: admissionQuotaExceeded,
}

const admissionQuotaExceededDoc = `The API server's ResourceQuota admission refused to create the workload's pods, so
they do not exist at all: there is no Pending pod to look at, only the controller's
FailedCreate event ("exceeded quota: NAME, requested: ..., used: ..., limited: ...")
and, on a ReplicaSet, the ReplicaFailure condition. Either the namespace's quota is used
up (the pod's requests would push usage past a hard limit), or the quota tracks cpu or
memory and the pod's containers do not state them ("failed quota: NAME: must specify
limits.cpu for: app"). The controller keeps retrying and succeeds as soon as there is room.

## Confirm on a live cluster

    kubectl describe resourcequota -n NAMESPACE
    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl get rs -n NAMESPACE -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions}{"\n"}{end}'

## Fix

Raise the quota's hard limit, lower the pods' requests, or free quota by scaling down
or deleting other workloads in the namespace. For "must specify", set the named
requests and limits on every container of the template, or add a LimitRange that
gives containers defaults.
`

// The quota admission errors (k8s.io/apiserver/pkg/admission/plugin/resourcequota/
// controller.go, checkRequest: "exceeded quota: %s, requested: %s, used: %s, limited: %s"
// with prettyPrint's "name=quantity,..." lists, and "failed quota: %s: %v" around
// pkg/quota/v1/evaluator/core/pods.go podEvaluator.Constraints' "must specify %s").
var (
	reQuotaExceeded     = regexp.MustCompile(`exceeded quota: ([^,\s]+), requested: (\S+), used: (\S+), limited: (\S+)`)
	reQuotaMustSpecify  = regexp.MustCompile(`failed quota: ([^:\s]+): must specify (.+)$`)
	reMustSpecifyMissed = regexp.MustCompile(`([a-z0-9./-]+) for: ([^;]+)`)
)

// quotaRefusal gathers the refusals of one owner by one quota for one reason.
type quotaRefusal struct {
	owner, workload analyze.ObjectRef
	quota           string
	// requested, used and limited are the message's name=quantity lists; missing is the
	// "must specify" list.
	requested, used, limited, missing string
	refusals                          int
	// lastEvent and condition cite the latest FailedCreate event and the ReplicaFailure
	// condition; citing every refusal would bury the rest.
	lastEvent, condition *analyze.Evidence
}

func admissionQuotaExceeded(v *analyze.View) []analyze.Finding {
	owners := indexPodOwners(v)
	groups := map[string]*quotaRefusal{}
	var keys []string
	for _, r := range podCreateRefusals(v) {
		q := &quotaRefusal{owner: r.owner}
		needle := "exceeded quota"
		if m := reQuotaExceeded.FindStringSubmatch(r.message); m != nil {
			q.quota, q.requested, q.used, q.limited = m[1], m[2], m[3], m[4]
		} else if m := reQuotaMustSpecify.FindStringSubmatch(r.message); m != nil {
			q.quota, q.missing, needle = m[1], strings.TrimSpace(m[2]), "failed quota"
		} else {
			continue
		}
		if owners.satisfied(r.owner) {
			// The controller has every pod it wants now: the refusals are history.
			continue
		}
		key := r.owner.String() + "\x00" + q.quota + "\x00" + needle
		g, ok := groups[key]
		if !ok {
			g = q
			g.workload = owners.workload(r.owner)
			groups[key] = g
			keys = append(keys, key)
		}
		ev := r.evidence(needle)
		if r.event == nil {
			g.condition = &ev
			continue
		}
		// Events come oldest first: the latest one has the latest numbers.
		g.requested, g.used, g.limited, g.missing = q.requested, q.used, q.limited, q.missing
		g.refusals += r.count
		g.lastEvent = &ev
	}
	sort.Strings(keys)
	var out []analyze.Finding
	for _, k := range keys {
		out = append(out, quotaFinding(v, owners, groups[k]))
	}
	return out
}

func quotaFinding(v *analyze.View, owners *podOwners, g *quotaRefusal) analyze.Finding {
	ns := g.owner.Namespace
	quota := findQuota(v, ns, g.quota)
	quotaRef := analyze.ObjectRef{Kind: "ResourceQuota", Namespace: ns, Name: g.quota}
	if quota != nil {
		quotaRef = quota.Ref()
	}
	var evidence []analyze.Evidence
	for _, e := range []*analyze.Evidence{g.lastEvent, g.condition} {
		if e != nil {
			evidence = append(evidence, *e)
		}
	}
	progress, progressEv := owners.progress(g.owner)
	if progressEv != nil {
		evidence = append(evidence, *progressEv)
	}
	who := ownerText(g.owner, g.workload)
	tail := ""
	if progress != "" {
		// The progress names the owner already.
		who = g.workload.String()
		tail = "; " + progress
	}
	if g.refusals > 0 {
		tail += fmt.Sprintf(" (%d creation(s) refused)", g.refusals)
	}
	var cause, remediation string
	if g.missing != "" {
		cause = fmt.Sprintf("ResourceQuota %s/%s refuses the pods of %s: the quota tracks %s, so every container must set them, and the pod template does not (must specify %s)%s",
			ns, g.quota, who, missingResources(g.missing), g.missing, tail)
		remediation = fmt.Sprintf("Set %s on the named containers in the template of %s, or give namespace %s a LimitRange with defaults for them.",
			missingResources(g.missing), g.workload.String(), ns)
		if quota != nil && len(quota.Obj.Status.Hard) > 0 {
			evidence = append(evidence, quota.Loc.At("status", "hard").Evidence(
				fmt.Sprintf("quota %s tracks %s", g.quota, resourceText("", quota.Obj.Status.Hard)), v.CollectedAt()))
		}
	} else {
		usage, usageEv := quotaUsage(v, quota, g)
		if usageEv != nil {
			evidence = append(evidence, *usageEv)
		}
		cause = fmt.Sprintf("ResourceQuota %s/%s refuses the pods of %s: each new pod would add %s but the quota has used %s%s",
			ns, g.quota, who, listText(g.requested), usage, tail)
		remediation = fmt.Sprintf("Raise the hard limit of ResourceQuota %s for %s (kubectl edit resourcequota -n %s %s), lower the requests of %s, "+
			"or free quota by scaling down other workloads in namespace %s; the controller retries on its own once there is room.",
			g.quota, resourceNames(g.limited), ns, g.quota, g.workload.String(), ns)
	}
	evidence = append(evidence, templateResourceEvidence(owners, g.owner)...)
	return analyze.Finding{
		Subjects:    []analyze.ObjectRef{g.workload, owners.ref(g.owner), quotaRef},
		Cause:       cause,
		Evidence:    evidence,
		Remediation: remediation,
		Confirm: []string{
			fmt.Sprintf("kubectl describe resourcequota -n %s %s", ns, g.quota),
			fmt.Sprintf("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreate", ns, g.owner.Name),
		},
		GroupKey: g.workload.String() + "\x00" + g.quota + "\x00" + g.missing,
	}
}

// ownerText names a workload and, when it differs, the controller that creates its
// pods: "Deployment shop/web (ReplicaSet web-7d9f8b6c5d)".
func ownerText(owner, workload analyze.ObjectRef) string {
	if owner == workload {
		return owner.String()
	}
	return workload.String() + " (" + owner.Kind + " " + owner.Name + ")"
}

func findQuota(v *analyze.View, ns, name string) *analyze.ResourceQuota {
	for _, q := range v.ResourceQuotas() {
		if q.Obj.Namespace == ns && q.Obj.Name == name {
			return q
		}
	}
	return nil
}

// quotaUsage describes used against hard for each exceeded resource, from the quota's
// status when the bundle has it, else from the refusal message.
func quotaUsage(v *analyze.View, q *analyze.ResourceQuota, g *quotaRefusal) (string, *analyze.Evidence) {
	limited := parseList(g.limited)
	used := parseList(g.used)
	names := make([]string, 0, len(limited))
	for _, kv := range limited {
		names = append(names, kv[0])
	}
	var parts []string
	if q == nil {
		for i, name := range names {
			u := ""
			if i < len(used) {
				u = used[i][1]
			}
			parts = append(parts, fmt.Sprintf("%s of its %s %s", u, limited[i][1], name))
		}
		return strings.Join(parts, ", ") + " (when the pod was refused)", nil
	}
	for _, name := range names {
		u := analyze.Quantity(q.Obj.Status.Used, corev1.ResourceName(name))
		h := analyze.Quantity(q.Obj.Status.Hard, corev1.ResourceName(name))
		parts = append(parts, fmt.Sprintf("%s of its %s %s", u.String(), h.String(), name))
	}
	text := strings.Join(parts, ", ")
	loc := q.Loc.At("status")
	ev := loc.Evidence(fmt.Sprintf("quota %s: used %s", q.Obj.Name, text), v.CollectedAt())
	return text, &ev
}

// parseList splits "a=1,b=2" into pairs.
func parseList(s string) [][2]string {
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		k, val, ok := strings.Cut(part, "=")
		if ok {
			out = append(out, [2]string{k, val})
		}
	}
	return out
}

func listText(s string) string { return strings.ReplaceAll(s, ",", ", ") }

func resourceNames(list string) string {
	var names []string
	for _, kv := range parseList(list) {
		names = append(names, kv[0])
	}
	return strings.Join(names, ", ")
}

// missingResources lists the resources of a "must specify" message: "limits.cpu for:
// web; requests.memory for: web" → "limits.cpu, requests.memory".
func missingResources(missing string) string {
	var names []string
	for _, m := range reMustSpecifyMissed.FindAllStringSubmatch(missing, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		return missing
	}
	return strings.Join(names, ", ")
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

// podCreateRefusal is one time a controller could not create a pod: a FailedCreate
// event about it, or a ReplicaSet's ReplicaFailure condition.
type podCreateRefusal struct {
	owner analyze.ObjectRef
	// message is the API server's error, without the controller's prefix.
	message string
	// count is how many refusals an event stands for; 0 for a condition.
	count int
	event *analyze.Event
	// loc, text and at cite a condition.
	loc  analyze.Location
	text string
	at   time.Time
}

func (r podCreateRefusal) evidence(needle string) analyze.Evidence {
	if r.event != nil {
		return r.event.EvidenceAround(needle)
	}
	return r.loc.EvidenceAround(r.text, needle, r.at)
}

// podCreateOwners are the kinds whose controllers record FailedCreate when the API
// server refuses a pod (pkg/controller/controller_utils.go RealPodControl: "Error
// creating: %v"; pkg/controller/statefulset/stateful_pod_control.go recordPodEvent:
// "create Pod %s in StatefulSet %s failed error: %s"; a CronJob's for its Jobs:
// pkg/controller/cronjob/cronjob_controllerv2.go "Error creating job: %v").
var podCreateOwners = map[string]bool{"ReplicaSet": true, "Job": true, "StatefulSet": true, "DaemonSet": true, "CronJob": true}

// podCreateRefusals lists the FailedCreate events (oldest first) then the ReplicaSets'
// ReplicaFailure conditions, which outlive the events.
func podCreateRefusals(v *analyze.View) []podCreateRefusal {
	var out []podCreateRefusal
	for _, e := range v.Events() {
		if e.Reason != "FailedCreate" || !podCreateOwners[e.Regarding.Kind] {
			continue
		}
		out = append(out, podCreateRefusal{owner: ownerKey(e.Regarding), message: refusalMessage(e.Message), count: int(e.Count), event: e})
	}
	for _, rs := range v.ReplicaSets() {
		for i, c := range rs.Obj.Status.Conditions {
			if c.Type != appsv1.ReplicaSetReplicaFailure || c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" {
				continue
			}
			out = append(out, podCreateRefusal{owner: ownerKey(rs.Ref()), message: refusalMessage(c.Message),
				loc: rs.Loc.At("status", "conditions", i), text: "ReplicaFailure " + c.Reason + ": " + c.Message, at: c.LastTransitionTime.Time})
		}
	}
	return out
}

// ownerKey drops the UID: events may be recorded without one, and a refusal is joined
// to its owner by kind and name.
func ownerKey(r analyze.ObjectRef) analyze.ObjectRef {
	return analyze.ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

var reStatefulSetCreate = regexp.MustCompile(`^create Pod \S+ in StatefulSet \S+ failed error: `)

func refusalMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "(combined from similar events): ")
	msg = strings.TrimPrefix(msg, "Error creating: ")
	msg = strings.TrimPrefix(msg, "Error creating job: ")
	return reStatefulSetCreate.ReplaceAllString(msg, "")
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
		return x.Obj.Status.Replicas >= replicas(x.Obj.Spec.Replicas)
	case "StatefulSet":
		x := o.sts[key]
		return x != nil && x.Obj.Status.Replicas >= replicas(x.Obj.Spec.Replicas)
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
		text = fmt.Sprintf("ReplicaSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, replicas(x.Obj.Spec.Replicas))
		loc = x.Loc.At("status")
	case "StatefulSet":
		x := o.sts[key]
		if x == nil {
			return "", nil
		}
		text = fmt.Sprintf("StatefulSet %s has %d of %d pod(s)", x.Obj.Name, x.Obj.Status.Replicas, replicas(x.Obj.Spec.Replicas))
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

// replicas reads a replica count that defaults to 1 when unset.
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}
