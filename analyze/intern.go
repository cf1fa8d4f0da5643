package analyze

import (
	"encoding/binary"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// interner shares equal small maps and short strings among the objects of one load.
// The decoder makes a map for every labels, selector and resource list it reads, and
// on a large cluster most of them repeat: the pods of one ReplicaSet carry the same
// labels and requests as its template, and most workloads ask for a handful of sizes.
// Go's smallest map takes about 300 bytes for strings and 600 for quantities, so on
// generated bundles these maps were a third of the heap a load keeps. Nothing in
// podflow writes to an object it loaded, so equal maps can be one map.
//
// It runs on the loader's goroutine, as objects are added in file order, so what is
// shared does not depend on which decode ends first. Its tables are capped: a bundle
// whose maps never repeat stops growing them instead of doubling their keys.
type interner struct {
	labels    map[string]map[string]string
	resources map[string]corev1.ResourceList
	strings   map[string]string
	messages  map[string]string
	key       []byte
	names     []string
}

// internCap bounds each table of the interner.
const internCap = 1 << 16

// internMapMax is the largest map worth sharing: larger ones rarely repeat.
const internMapMax = 16

// labelMap returns the shared map equal to m, or m when it is the first of its kind.
func (in *interner) labelMap(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > internMapMax {
		return m
	}
	in.names, in.key = appendSortedKeys(in.names[:0], m), in.key[:0]
	for _, k := range in.names {
		in.key = appendPart(appendPart(in.key, k), m[k])
	}
	return shared(&in.labels, in.key, m)
}

// resourceList returns the shared list equal to r: same names, same quantities in the
// same format (what String and every comparison see).
func (in *interner) resourceList(r corev1.ResourceList) corev1.ResourceList {
	if len(r) == 0 || len(r) > internMapMax {
		return r
	}
	in.names, in.key = appendSortedKeys(in.names[:0], r), in.key[:0]
	for _, k := range in.names {
		q := r[corev1.ResourceName(k)]
		in.key = appendPart(appendPart(appendPart(in.key, k), string(q.Format)), q.String())
	}
	return shared(&in.resources, in.key, r)
}

// appendSortedKeys appends a map's keys to buf in order: sortedKeys for the many
// small maps of a load, into one reused slice.
func appendSortedKeys[K ~string, V any](buf []string, m map[K]V) []string {
	for k := range m {
		buf = append(buf, string(k))
	}
	slices.Sort(buf)
	return buf
}

// shared returns the value the table holds for key, or records v under it while the
// table is under internCap and returns v.
func shared[V any](table *map[string]V, key []byte, v V) V {
	if c, ok := (*table)[string(key)]; ok {
		return c
	}
	if *table == nil {
		*table = map[string]V{}
	}
	if len(*table) < internCap {
		(*table)[string(key)] = v
	}
	return v
}

// appendPart appends s to a key with its length first, so that no two different
// sequences of parts make the same key.
func appendPart(key []byte, s string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(s))), s...)
}

// str returns the shared copy of a short string that repeats across objects (a kind,
// a namespace, a reason, a component).
func (in *interner) str(s string) string {
	if s == "" || len(s) > 64 {
		return s
	}
	if c, ok := in.strings[s]; ok {
		return c
	}
	if in.strings == nil {
		in.strings = map[string]string{}
	}
	if len(in.strings) < internCap {
		in.strings[s] = s
	}
	return s
}

func (in *interner) requirements(r *corev1.ResourceRequirements) {
	r.Limits, r.Requests = in.resourceList(r.Limits), in.resourceList(r.Requests)
}

func (in *interner) meta(m *metav1.ObjectMeta) {
	m.Labels = in.labelMap(m.Labels)
	m.Annotations = in.annotations(m.Annotations)
	m.Namespace = in.str(m.Namespace)
}

// annotationsMax is the most text (keys and values) an annotations map may hold to be
// shared: a controller's bookkeeping (a ReplicaSet's desired and max replicas and
// revision, a Deployment's revision) repeats across a cluster's workloads, but a
// last-applied configuration is a whole object, unique and long.
const annotationsMax = 512

// annotations returns the shared map equal to m when it is short. The decoder shares
// equal maps too (sharedDecode), but only until its table is full, which on a big
// cluster is long before the ReplicaSets are read: their annotations were a map each.
func (in *interner) annotations(m map[string]string) map[string]string {
	n := 0
	for k, v := range m {
		if n += len(k) + len(v); n > annotationsMax {
			return m
		}
	}
	return in.labelMap(m)
}

func (in *interner) selector(s *metav1.LabelSelector) {
	if s != nil {
		s.MatchLabels = in.labelMap(s.MatchLabels)
	}
}

// podSpec shares a pod's (or a template's) node selector and container requirements.
func (in *interner) podSpec(s *corev1.PodSpec) {
	s.NodeSelector = in.labelMap(s.NodeSelector)
	s.NodeName = in.str(s.NodeName)
	s.ServiceAccountName = in.str(s.ServiceAccountName)
	if s.Resources != nil {
		in.requirements(s.Resources)
	}
	s.InitContainers, s.Containers, s.Volumes = exact(s.InitContainers), exact(s.Containers), exact(s.Volumes)
	for _, list := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			c := &list[i]
			in.requirements(&c.Resources)
			c.Name, c.Image = in.str(c.Name), in.str(c.Image)
		}
	}
}

func (in *interner) template(t *corev1.PodTemplateSpec) {
	in.meta(&t.ObjectMeta)
	in.podSpec(&t.Spec)
}

func (in *interner) pod(p *corev1.Pod) {
	in.meta(&p.ObjectMeta)
	in.podSpec(&p.Spec)
	st := &p.Status
	st.HostIP, st.Phase, st.QOSClass = in.str(st.HostIP), corev1.PodPhase(in.str(string(st.Phase))), corev1.PodQOSClass(in.str(string(st.QOSClass)))
	// Since Kubernetes 1.33 the status repeats the pod's own requests and limits.
	st.AllocatedResources = in.resourceList(st.AllocatedResources)
	if st.Resources != nil {
		in.requirements(st.Resources)
	}
	st.Conditions = exact(st.Conditions)
	st.InitContainerStatuses, st.ContainerStatuses = exact(st.InitContainerStatuses), exact(st.ContainerStatuses)
	st.EphemeralContainerStatuses = exact(st.EphemeralContainerStatuses)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status, c.Reason = corev1.PodConditionType(in.str(string(c.Type))), corev1.ConditionStatus(in.str(string(c.Status))), in.str(c.Reason)
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			c := &list[i]
			c.AllocatedResources = in.resourceList(c.AllocatedResources)
			if c.Resources != nil {
				in.requirements(c.Resources)
			}
			c.Name, c.Image, c.ImageID = in.str(c.Name), in.str(c.Image), in.str(c.ImageID)
		}
	}
}

// exact returns a list in room of its own size. The decoder grows a list by doubling:
// a pod's five conditions sit in room for eight, three containers in room for four,
// five volumes in room for eight (a volume is 256 bytes, a container 408). The lists it
// trims are decoded for one object, never shared (sharedDecode), so the copy is the
// only one.
func exact[S ~[]E, E any](s S) S {
	if cap(s) > len(s) {
		return slices.Clone(s)
	}
	return s
}

// workload shares a Deployment's, ReplicaSet's, StatefulSet's or DaemonSet's labels,
// selector and pod template.
func (in *interner) workload(m *metav1.ObjectMeta, sel *metav1.LabelSelector, t *corev1.PodTemplateSpec) {
	in.meta(m)
	in.selector(sel)
	in.template(t)
}

func (in *interner) service(s *corev1.Service) {
	in.meta(&s.ObjectMeta)
	s.Spec.Selector = in.labelMap(s.Spec.Selector)
}

// event shares what repeats across events: the kind and namespace of what they are
// about, their type, reason, field path, and the component and host that reported.
func (in *interner) event(e *Event) {
	e.Regarding.Kind, e.Regarding.Namespace = in.str(e.Regarding.Kind), in.str(e.Regarding.Namespace)
	e.FieldPath, e.Type, e.Reason = in.str(e.FieldPath), in.str(e.Type), in.str(e.Reason)
	e.Source, e.Host = in.str(e.Source), in.str(e.Host)
	e.Message = in.message(e.Message)
}

// messageMax is the longest event message worth sharing: the kubelet's and the
// controllers' routine messages ("Container started", "Container image ... already
// present on machine", "Scaled up replica set ...") repeat across a workload's pods
// and are shorter.
const messageMax = 512

// messageCap bounds the messages table. Every event of a cluster passes through it,
// and the messages that never repeat (a pod's "Successfully assigned", a ReplicaSet's
// "Created pod") take room in it too: at 80k pods, 800k events said 84k different
// messages, and with room for 64k those of the last fifth of the namespaces were each
// held apart (about 10 MB). Its keys are the messages the events keep, so an entry
// costs only the table's own few dozen bytes.
const messageCap = 1 << 18

// objectsLoaded lets the tables of maps and messages go once every list is read: only
// the node files come after, whose CRI records share short strings alone. At 80k pods
// the messages table alone held 84k entries through the load of the node files,
// where the load peaks.
func (in *interner) objectsLoaded() {
	in.labels, in.resources, in.messages = nil, nil, nil
}

// message returns the shared copy of an event message that repeats.
func (in *interner) message(s string) string {
	if s == "" || len(s) > messageMax {
		return s
	}
	if c, ok := in.messages[s]; ok {
		return c
	}
	if in.messages == nil {
		in.messages = map[string]string{}
	}
	if len(in.messages) < messageCap {
		in.messages[s] = s
	}
	return s
}
