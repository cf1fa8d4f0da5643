package analyze

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// View is a rule's read-only window on the graph. It hands out only the kinds the rule
// declared in Needs; asking for another kind returns nothing and is recorded as a
// contract violation, which the golden tests turn into a failure.
type View struct {
	g        *Graph
	rule     string
	declared map[Kind]bool
	// violations lists undeclared kinds the rule asked for, once each.
	violations []Kind
	// replicaSets is every ReplicaSet, the derived ones made back once for the view: a
	// rule may ask for them once per Deployment it looks at.
	replicaSetsOnce sync.Once
	replicaSets     []*ReplicaSet
}

func newView(g *Graph, r *Rule) *View {
	v := &View{g: g, rule: r.ID, declared: map[Kind]bool{}}
	for _, k := range r.Needs.Required {
		v.declared[k] = true
	}
	for _, k := range r.Needs.Optional {
		v.declared[k] = true
	}
	for _, k := range r.Needs.AnyOf {
		v.declared[k] = true
	}
	return v
}

func (v *View) allow(k Kind) bool {
	if v.declared[k] {
		return true
	}
	for _, seen := range v.violations {
		if seen == k {
			return false
		}
	}
	v.violations = append(v.violations, k)
	return false
}

// CollectedAt is when the evidence was collected: a rule's "now".
func (v *View) CollectedAt() time.Time { return v.g.collectedAt }

// CollectedAtInferred reports whether CollectedAt is only the latest time the evidence
// carries, with no recorded collection time: how long a state lasted until the evidence
// was taken is then not known.
func (v *View) CollectedAtInferred() bool { return v.g.collectedInferred }

// ClockSkew is the API server's clock minus the collector's.
func (v *View) ClockSkew() time.Duration { return v.g.clockSkew }

// Has reports whether the bundle held evidence of a declared kind (an empty list counts):
// it tells "no evidence" from "evidence of nothing wrong".
func (v *View) Has(k Kind) bool { return v.allow(k) && v.g.present[k] }

// LoneMemoryLimit is the one memory limit the evidence shows (a pod's container, or a
// pasted limits block), "" when it shows none or several: a describe excerpt cut between
// a container's state and its Limits still says the limit.
func (v *View) LoneMemoryLimit() string { return v.g.loneMemoryLimit() }

// Pods lists every pod, sorted by namespace and name.
func (v *View) Pods() []*Pod { return only(v, Pods, v.g.pods) }

// Pod returns the pod namespace/name, or nil.
func (v *View) Pod(namespace, name string) *Pod {
	return lookup[*Pod](v, Pods, "Pod", namespace, name)
}

// PodByUID returns the pod with that UID, or nil.
func (v *View) PodByUID(uid string) *Pod {
	if !v.allow(Pods) {
		return nil
	}
	p, _ := v.g.byUID[uid].(*Pod)
	return p
}

// PodsOnNode lists the pods bound to a node.
func (v *View) PodsOnNode(node string) []*Pod { return only(v, Pods, v.g.podsByNode[node]) }

// PodsSelectedBy lists the pods of a namespace whose labels match a Service-style selector.
// An empty selector selects nothing, as for Services.
func (v *View) PodsSelectedBy(namespace string, selector map[string]string) []*Pod {
	if !v.allow(Pods) || len(selector) == 0 {
		return nil
	}
	var out []*Pod
	for _, p := range v.g.podsByNS[namespace] {
		if setSelects(selector, p.meta.Labels) {
			out = append(out, p)
		}
	}
	return out
}

// setSelects reports whether a Service-style selector (a set of labels, every one of
// which must be present with its value) matches labels; the empty set matches
// everything. It is labels.SelectorFromSet(selector).Matches(labels.Set(l)) without
// building the selector: callers ask it for every pod of a namespace and every Service
// in it, and the selector (a sorted list of requirements, each with a one-value slice)
// was garbage each time.
func setSelects(selector, l map[string]string) bool {
	for k, v := range selector {
		if got, ok := l[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Controller returns the controlling owner of an object (the ReplicaSet of a pod, the
// Deployment of a ReplicaSet), or nil. It needs no declared kind: the reference is on the
// object itself.
//
// It is small enough to be inlined, so a caller that only reads the reference (a scan
// of every pod for the ones a Job or ReplicaSet controls) keeps it on its stack rather
// than allocating one per object.
func (v *View) Controller(meta *metav1.ObjectMeta) *ObjectRef {
	if ref, ok := controllingRef(meta); ok {
		return &ref
	}
	return nil
}

// controllingRef is the controlling owner of an object, if it has one.
func controllingRef(meta *metav1.ObjectMeta) (ObjectRef, bool) {
	if meta == nil {
		return ObjectRef{}, false
	}
	if ref := metav1.GetControllerOfNoCopy(meta); ref != nil {
		return ObjectRef{Kind: ref.Kind, Namespace: meta.Namespace, Name: ref.Name, UID: string(ref.UID)}, true
	}
	return ObjectRef{}, false
}

// Workload returns the top of a pod's owner chain: the Deployment of its ReplicaSet,
// the CronJob of its Job, or its direct controller when the chain ends there (or when
// the middle object is not a declared kind). Nil for a pod without a controller.
func (v *View) Workload(p *Pod) *ObjectRef {
	ref := v.Controller(p.meta)
	for hops := 0; ref != nil && hops < 4; hops++ {
		var meta *metav1.ObjectMeta
		switch ref.Kind {
		case "ReplicaSet":
			if !v.declared[ReplicaSets] {
				return ref
			}
		case "Job":
			if !v.declared[Jobs] {
				return ref
			}
		default:
			return ref
		}
		if o, ok := v.g.byKey[ref.key()]; ok {
			meta = metaOf(o)
		}
		up := v.Controller(meta)
		if up == nil {
			return ref
		}
		ref = up
	}
	return ref
}

func metaOf(o any) *metav1.ObjectMeta {
	if m, ok := o.(interface{ Meta() *metav1.ObjectMeta }); ok {
		return m.Meta()
	}
	return nil
}

// Deployments lists every Deployment.
func (v *View) Deployments() []*Deployment { return only(v, Deployments, v.g.deployments) }

// ReplicaSets lists every ReplicaSet.
func (v *View) ReplicaSets() []*ReplicaSet {
	if !v.allow(ReplicaSets) {
		return nil
	}
	v.replicaSetsOnce.Do(func() { v.replicaSets = v.g.allReplicaSets() })
	return v.replicaSets
}

// StatefulSets lists every StatefulSet.
func (v *View) StatefulSets() []*StatefulSet { return only(v, StatefulSets, v.g.statefulSets) }

// DaemonSets lists every DaemonSet.
func (v *View) DaemonSets() []*DaemonSet { return only(v, DaemonSets, v.g.daemonSets) }

// Jobs lists every Job.
func (v *View) Jobs() []*Job { return only(v, Jobs, v.g.jobs) }

// CronJobs lists every CronJob.
func (v *View) CronJobs() []*CronJob { return only(v, CronJobs, v.g.cronJobs) }

// Nodes lists every Node.
func (v *View) Nodes() []*Node { return only(v, Nodes, v.g.nodes) }

// Node returns the node by name, or nil.
func (v *View) Node(name string) *Node { return lookup[*Node](v, Nodes, "Node", "", name) }

// NodeLease returns a node's heartbeat Lease, or nil.
func (v *View) NodeLease(node string) *Lease {
	if !v.allow(NodeLeases) {
		return nil
	}
	for _, l := range v.g.nodeLeases {
		if l.meta.Name == node {
			return l
		}
	}
	return nil
}

// Services lists every Service.
func (v *View) Services() []*Service { return only(v, Services, v.g.services) }

// EndpointSlices lists every EndpointSlice of the evidence.
func (v *View) EndpointSlices() []*EndpointSlice { return only(v, EndpointSlices, v.g.endpointSlices) }

// EndpointSlicesFor lists the EndpointSlices of a Service (by kubernetes.io/service-name).
func (v *View) EndpointSlicesFor(namespace, service string) []*EndpointSlice {
	return only(v, EndpointSlices, v.g.slicesBySv.of(namespace+"/"+service))
}

// PVCs lists every PersistentVolumeClaim.
func (v *View) PVCs() []*PVC { return only(v, PVCs, v.g.pvcs) }

// PVC returns a claim, or nil.
func (v *View) PVC(namespace, name string) *PVC {
	return lookup[*PVC](v, PVCs, "PersistentVolumeClaim", namespace, name)
}

// PVs lists every PersistentVolume.
func (v *View) PVs() []*PV { return only(v, PVs, v.g.pvs) }

// PV returns a volume, or nil.
func (v *View) PV(name string) *PV { return lookup[*PV](v, PVs, "PersistentVolume", "", name) }

// StorageClasses lists every StorageClass.
func (v *View) StorageClasses() []*StorageClass { return only(v, StorageClasses, v.g.storageClasses) }

// ResourceQuotas lists every ResourceQuota.
func (v *View) ResourceQuotas() []*ResourceQuota { return only(v, ResourceQuotas, v.g.quotas) }

// LimitRanges lists every LimitRange.
func (v *View) LimitRanges() []*LimitRange { return only(v, LimitRanges, v.g.limitRanges) }

// ServiceAccount returns a ServiceAccount, or nil.
func (v *View) ServiceAccount(namespace, name string) *ServiceAccount {
	return lookup[*ServiceAccount](v, ServiceAccounts, "ServiceAccount", namespace, name)
}

// ServiceAccounts lists every ServiceAccount.
func (v *View) ServiceAccounts() []*ServiceAccount {
	return only(v, ServiceAccounts, v.g.serviceAccounts)
}

// ConfigMap returns a ConfigMap (keys only; values are not collected), or nil.
func (v *View) ConfigMap(namespace, name string) *ConfigMap {
	return lookup[*ConfigMap](v, ConfigMaps, "ConfigMap", namespace, name)
}

// Secret returns a Secret's metadata and keys, or nil.
func (v *View) Secret(namespace, name string) *Secret {
	return lookup[*Secret](v, Secrets, "Secret", namespace, name)
}

// Namespace returns a namespace, or nil.
func (v *View) Namespace(name string) *Namespace {
	return lookup[*Namespace](v, Namespaces, "Namespace", "", name)
}

// PriorityClasses lists every PriorityClass.
func (v *View) PriorityClasses() []*PriorityClass {
	return only(v, PriorityClasses, v.g.priorityClasses)
}

// ValidatingWebhooks lists every ValidatingWebhookConfiguration.
func (v *View) ValidatingWebhooks() []*ValidatingWebhookConfig {
	return only(v, ValidatingWebhooks, v.g.validating)
}

// MutatingWebhooks lists every MutatingWebhookConfiguration.
func (v *View) MutatingWebhooks() []*MutatingWebhookConfig {
	return only(v, MutatingWebhooks, v.g.mutating)
}

// Events lists every event, oldest last-seen first.
func (v *View) Events() []*Event { return only(v, Events, v.g.events) }

// EventsFor lists the events about one object, oldest last-seen first: by UID, and by
// kind/namespace/name for events recorded without a UID.
func (v *View) EventsFor(ref ObjectRef) []*Event {
	if !v.allow(Events) {
		return nil
	}
	return v.g.eventsFor(ref)
}

func (g *Graph) eventsFor(ref ObjectRef) []*Event {
	key := ref.key()
	if g.quiet != nil {
		g.wakeEvents(key, ref.UID)
	}
	byName := g.eventsByKey[key]
	if ref.UID == "" {
		return byName
	}
	byUID := g.eventsByUID[ref.UID]
	if len(byName) == len(byUID) {
		return byUID
	}
	// Events of an earlier object with the same name carry another UID: keep those
	// without a UID, drop those of the other object.
	out := append([]*Event(nil), byUID...)
	for _, e := range byName {
		if e.Regarding.UID == "" {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return eventLess(out[i], out[j]) })
	return out
}

// Journal lists a node's kubelet journal entries in file order.
func (v *View) Journal(node string) []*JournalEntry {
	if !v.allow(KubeletJournal) {
		return nil
	}
	return v.g.entries(v.g.journalByNode[node])
}

// JournalFor lists the kubelet journal entries that name a pod (pod=, pods=[…] or podUID=).
func (v *View) JournalFor(p *Pod) []*JournalEntry {
	if !v.allow(KubeletJournal) {
		return nil
	}
	return v.g.journalFor(p.Obj)
}

func (g *Graph) journalFor(p *corev1.Pod) []*JournalEntry {
	return g.entries(g.journalIndexFor(p))
}

// journalIndexFor lists the indexes into the kubelet journal of the entries that name a
// pod, ascending.
func (g *Graph) journalIndexFor(p *corev1.Pod) []int32 {
	var b [keyRoom]byte
	return mergeSorted(g.journalByPod[string(joinedKey(b[:0], p.Namespace, p.Name))], g.journalByUID[string(p.UID)])
}

func (g *Graph) entries(idx []int32) []*JournalEntry {
	out := make([]*JournalEntry, len(idx))
	for i, j := range idx {
		out[i] = g.journal.at(int(j))
	}
	return out
}

// mergeSorted unions two ascending index lists.
func mergeSorted(a, b []int32) []int32 {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// RuntimeJournal lists a node's container runtime journal entries.
func (v *View) RuntimeJournal(node string) []*JournalEntry {
	if !v.allow(RuntimeJournal) {
		return nil
	}
	list := v.g.runtimeJournal[node]
	out := make([]*JournalEntry, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// SandboxesFor lists the CRI sandboxes of a pod.
func (v *View) SandboxesFor(p *Pod) []*CRISandbox {
	return only(v, CRI, v.g.sandboxesOf(string(p.meta.UID)))
}

// ContainersFor lists the CRI containers of a pod (all attempts the runtime still has).
func (v *View) ContainersFor(p *Pod) []*CRIContainer {
	return only(v, CRI, v.g.containersOf(string(p.meta.UID)))
}

// HasCRI reports whether the bundle has CRI state for a node.
func (v *View) HasCRI(node string) bool { return v.allow(CRI) && v.g.criNodes[node] }

// Log returns a container's log (previous: the instance before the last restart), or nil.
func (v *View) Log(p *Pod, container string, previous bool) *ContainerLog {
	if !v.allow(ContainerLogs) {
		return nil
	}
	return v.g.logOf(p.meta.Namespace, p.meta.Name, container, previous)
}

// OOMKillsFor lists the kernel OOM kills in a pod's cgroup, from its node's dmesg.
func (v *View) OOMKillsFor(p *Pod) []*OOMKill {
	return only(v, Dmesg, v.g.oomsByUID[string(p.meta.UID)])
}

// OOMKills lists every kernel OOM kill on a node.
func (v *View) OOMKills(node string) []*OOMKill { return only(v, Dmesg, v.g.oomsNode[node]) }

// HasDmesg reports whether the bundle has the kernel log of a node.
func (v *View) HasDmesg(node string) bool { return v.allow(Dmesg) && v.g.dmesgNode[node] }

// KubeletConfig returns a node's kubelet configuration, or nil.
func (v *View) KubeletConfig(node string) *KubeletConfig {
	if !v.allow(KubeletConfigs) {
		return nil
	}
	return v.g.kubeletConfigs[node]
}

func only[T any](v *View, k Kind, list []T) []T {
	if !v.allow(k) {
		return nil
	}
	return list
}

func lookup[T any](v *View, k Kind, apiKind, namespace, name string) T {
	var zero T
	if !v.allow(k) {
		return zero
	}
	o, ok := v.g.byKey[apiKind+"/"+namespace+"/"+name].(T)
	if !ok {
		return zero
	}
	return o
}

// PodAndWorkload returns a pod's finding subjects (the pod, then its workload when it has
// one) and the name of what a remediation should address: the workload, or the pod
// itself when nothing owns it.
func (v *View) PodAndWorkload(p *Pod) ([]ObjectRef, string) {
	subjects := []ObjectRef{p.Ref()}
	if w := v.Workload(p); w != nil {
		return append(subjects, *w), w.String()
	}
	return subjects, p.Ref().String()
}

// Readiness counts a slice's endpoints that are ready and not ready; an endpoint whose
// ready condition is unknown counts as ready, as the EndpointSlice API defines it.
func Readiness(sl *EndpointSlice) (ready, notReady int) {
	for _, ep := range sl.Obj.Endpoints {
		if EndpointReady(ep) {
			ready++
		} else {
			notReady++
		}
	}
	return ready, notReady
}

// EndpointReady reports whether an endpoint is ready (unknown counts as ready).
func EndpointReady(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}
