package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/sirupsen/logrus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/internal/checkpoint"
)

// loader carries the state of one Load.
type loader struct {
	// ctx ends the load early: every loop over files or items stops once it is done.
	ctx     context.Context
	g       *Graph
	log     logrus.FieldLogger
	bundles []*loadedBundle
	// latest is the latest timestamp seen in objects and events, the reference time
	// for bundles without a manifest.
	latest     time.Time
	seenEvents eventKeys
	// podLoaded is LoadOptions.PodLoaded.
	podLoaded func()
	// healthyPods are the pods (namespace/name and UID) whose informational journal
	// lines are left out; nil keeps every line (LoadOptions.TroubleOnly).
	healthyPods map[string]bool
	// healthyContainers are the container IDs of those pods.
	healthyContainers map[string]bool
	// nodeBuf is the buffer node files other than journals are read into in turn.
	nodeBuf []byte
	// takeMu serializes taking files out of the bundle, which journal parsers do
	// while the loader reads other files.
	takeMu sync.Mutex
	// intern shares the maps and strings that repeat across objects.
	intern interner
	// share shares the parts of objects that repeat while lists are decoded; nil once
	// every list is loaded.
	share *sharedDecode
	// quietAtLoad says events about quiet pods are made compact as they are added
	// (quietLoad): the load keeps only what explains trouble and reads one bundle, so
	// its events can be added after its pods. quiet does it while they are added.
	quietAtLoad bool
	quiet       *quietLoad
	// cri merges the records of CRI files as they are read; nil once the node files
	// are read.
	cri *criMerge
	// scope is what a scoped load decodes in full (LoadOptions.Namespace); nil decodes
	// everything.
	scope *loadScope
	// outOfScope says the list file being added is of a namespace the scope does not
	// decode in full: only the events it keeps are added (loadScope.keepsEvent).
	outOfScope bool
}

type loadedBundle struct {
	b *bundle.Bundle
	// label prefixes locations when several bundles are loaded together.
	label string
	// imported is the import report of a bundle made from another tool's output.
	imported *bundle.ImportReport
}

func (l *loader) addManifest(b *bundle.Bundle, several bool) {
	lb := &loadedBundle{b: b}
	if several {
		lb.label = b.Source
	}
	l.bundles = append(l.bundles, lb)
	l.readImport(lb)
	info := BundleInfo{Source: b.Source}
	if lb.imported != nil {
		info.Imported = lb.imported.Format
	}
	if m := b.Manifest; m != nil {
		info.FormatVersion, info.Type = m.FormatVersion, m.Type
		info.CollectedAt = timePtr(m.CollectedAt)
		info.ClockSkewSeconds = m.Cluster.ClockSkewSeconds
		info.Cluster = m.Cluster.Name
		if m.CollectedAt.After(l.g.collectedAt) {
			l.g.collectedAt = m.CollectedAt
		}
		if l.g.identity == nil && m.Identity != nil {
			l.g.identity = m.Identity
		}
		if l.g.clockSkew == 0 && m.Cluster.ClockSkewSeconds != 0 {
			l.g.clockSkew = time.Duration(m.Cluster.ClockSkewSeconds * float64(time.Second))
		}
		if b.ReadsOnce() {
			// The load reads no more of the manifest, and a bundle read once is read by
			// nothing after it: the lists of its files (a path, size and digest each,
			// about 14 MB at 20k pods), which only verify reads, go before the lists.
			m.Files = nil
			for i := range m.Sources {
				m.Sources[i].Files = nil
			}
		}
	}
	l.g.bundles = append(l.g.bundles, info)
}

func (l *loader) referenceTime() time.Time {
	if !l.g.collectedAt.IsZero() {
		return l.g.collectedAt.UTC()
	}
	return l.latest.UTC()
}

func (l *loader) warn(lb *loadedBundle, path string, line int, pointer, format string, args ...any) {
	at := l.loc(lb, path).withPointer(pointer).Lines(line, 0)
	w := Warning{Bundle: at.Bundle, Path: at.Path, Line: at.Line, Pointer: at.Pointer, Message: fmt.Sprintf(format, args...)}
	l.g.warnings = append(l.g.warnings, w)
	l.log.WithField("file", path).Debug(w.Message)
}

// errorsPaths maps the collector's per-kind error files to the kind they are about.
var errorsPaths = func() map[string]Kind {
	m := map[string]Kind{}
	for list, k := range listKinds {
		m[bundle.ErrorsPath(list)] = k
	}
	return m
}()

func (l *loader) loadObjects(lb *loadedBundle) {
	var files, events []*objectFile
	for _, name := range lb.b.Names() {
		if k, ok := errorsPaths[name]; ok {
			l.g.failed[k] = append(l.g.failed[k], name)
			continue
		}
		info := bundle.ParsePath(name)
		if info.Area != "cluster" && info.Area != "namespaced" {
			continue
		}
		if kind, ok := listKinds[info.Kind]; ok {
			f := &objectFile{name: name, kind: kind, namespace: info.Namespace, at: len(files) + len(events)}
			if kind == Events && l.quietAtLoad {
				events = append(events, f)
			} else {
				files = append(files, f)
			}
		}
	}
	// Events about quiet pods are made compact as they are added, once every pod is:
	// the events files come last, and the warnings are put back in file order after.
	files = append(files, events...)
	warned := len(l.g.warnings)
	var warnedAt []int
	if len(events) > 0 {
		defer func() { l.warningsInFileOrder(warned, warnedAt) }()
	}
	// Lists are decoded a few at a time on every core and added to the graph in file
	// order, so what the graph holds does not depend on which decode ends first.
	window := 2 * runtime.GOMAXPROCS(0)
	// A bundle read once hands over each file's bytes, which are garbage once decoded:
	// their buffers go round instead (Bundle.TakeInto).
	buffers := make(chan []byte, window)
	// The decodes hold their own reference: when the load is cancelled they end on
	// their own, after the loader has let go of its tables.
	share := l.share
	start := func(f *objectFile) {
		f.done = make(chan struct{})
		var buf []byte
		select {
		case buf = <-buffers:
		default:
		}
		data, err := l.takeInto(lb, f.name, buf) // decoded once; a bundle read once lets go of it
		if err != nil {
			f.err = err
			close(f.done)
			return
		}
		f.data = data
		// Events carry none of the parts the tables share: their decodes go without, so
		// that the tables can go before the events are decoded (below).
		s := share
		if f.kind == Events {
			s = nil
		}
		scope := l.scope
		go func() {
			defer close(f.done)
			if scope.skims(f) {
				f.outOfScope = true
				if f.skipped = scope.skim(f); f.skipped {
					return
				}
			}
			f.decoded = kindDecoders[f.kind].decode(s, data)
		}()
	}
	for i := 0; i < len(files) && i < window; i++ {
		start(files[i])
	}
	if l.quietAtLoad {
		// Without events files every pod is loaded at the end.
		defer func() {
			if l.healthyPods == nil && l.ctx.Err() == nil {
				l.podsLoaded(lb)
			}
		}()
	}
	for i, f := range files {
		<-f.done
		if l.ctx.Err() != nil {
			return // the decodes already started end on their own
		}
		if f.kind == Events && l.quietAtLoad && l.quiet == nil {
			// Every other list of the one bundle is in: the shared parts are in the
			// graph, and the tables' texts go before the events' decode, where the
			// load first peaks.
			share, l.share = nil, nil
			l.podsLoaded(lb)
			l.quiet = newQuietLoad(l.g)
		}
		l.addObjects(lb, f)
		if f.kind == Events {
			releaseEvents(f.decoded)
		}
		if len(events) > 0 {
			for len(warnedAt) < len(l.g.warnings)-warned {
				warnedAt = append(warnedAt, f.at)
			}
		}
		checkpoint.Reach("load")
		if lb.b.ReadsOnce() && f.data != nil {
			buffers <- f.data[:0]
		}
		files[i] = nil // its objects are in the graph; its bytes can go
		if next := i + window; next < len(files) {
			start(files[next])
		}
	}
}

// podsLoaded is called once every pod of the one bundle being loaded is (quietAtLoad),
// before its events: the healthy pods are known (noteHealthyPods), and their container
// logs, which the load would leave out unread, are let go of now rather than held
// through the decode of the events and the journals (at 20k pods, 20k small files
// kept as read).
func (l *loader) podsLoaded(lb *loadedBundle) {
	l.noteHealthyPods()
	for _, name := range lb.b.Names() {
		if !strings.HasPrefix(name, bundle.ClusterResources+"/pods/logs/") {
			continue
		}
		if info := bundle.ParsePath(name); info.Area == "log" && l.healthyPods[info.Namespace+"/"+info.Pod] {
			l.drop(lb, name)
		}
	}
}

// warningsInFileOrder puts the warnings given from warned on, those of the file at
// warnedAt[i] in the bundle's order, back in that order.
func (l *loader) warningsInFileOrder(warned int, warnedAt []int) {
	w := l.g.warnings[warned:]
	if len(warnedAt) != len(w) {
		return // stopped while a file was added: the load fails anyway
	}
	sortByKeys(w, warnedAt)
}

// objectFile is one list file of the bundle on its way into the graph.
type objectFile struct {
	name      string
	kind      Kind
	namespace string
	// at is the file's place among the bundle's list files.
	at      int
	data    []byte
	err     error
	decoded decodedList
	done    chan struct{}
	// outOfScope says the file is of a namespace a scoped load does not decode in full
	// (loadScope); skipped, that its skim found nothing to add and nothing to warn of.
	outOfScope, skipped bool
}

// addObjects adds one decoded list file to the graph.
func (l *loader) addObjects(lb *loadedBundle, f *objectFile) {
	if f.err != nil {
		l.warn(lb, f.name, 0, "", "read: %v", f.err)
		return
	}
	l.g.present[f.kind] = true
	if f.outOfScope {
		l.scope.skimmed++
	}
	readable := true
	if f.skipped {
		l.scope.skipped++
		l.log.WithField("file", f.name).Trace("list out of scope: skimmed")
	} else {
		l.log.WithField("file", f.name).Trace("loading list")
		l.outOfScope = f.outOfScope
		readable = kindDecoders[f.kind].add(l, lb, l.loc(lb, f.name), f.data, f.decoded)
		l.outOfScope = false
	}
	if f.kind == Events {
		if readable {
			l.g.eventNamespaces[f.namespace] = true
		} else {
			l.g.unreadable[f.kind] = append(l.g.unreadable[f.kind], f.name)
		}
	}
}

// kindDecoder reads the list file of one kind: decode is the costly part and may run
// on any core; add puts what it decoded into the graph, one file at a time.
type kindDecoder struct {
	decode func(s *sharedDecode, data []byte) decodedList
	add    func(l *loader, lb *loadedBundle, loc Location, data []byte, d decodedList) bool
}

// decodedList is the outcome of decoding a list file in one pass: its items (a []T)
// or the error that sends it to the item-by-item path.
type decodedList struct {
	items any
	bare  bool
	err   error
}

// listOf is the decoder of the kind whose objects are T, named kind in warnings;
// add appends one object to the graph.
func listOf[T any](kind string, add func(l *loader, o *Object[T])) kindDecoder {
	return kindDecoder{
		decode: decodeWhole[T],
		add: func(l *loader, lb *loadedBundle, loc Location, data []byte, d decodedList) bool {
			return decodeList(l, lb, kind, loc, data, d, func(o *Object[T]) { add(l, o) })
		},
	}
}

var kindDecoders = map[Kind]kindDecoder{
	Pods: listOf("Pod", func(l *loader, o *Pod) {
		// No rule reads a pod's field managers (the replicas rule reads a workload's),
		// and in bundles from other tools they are often a large part of a pod.
		o.Obj.ManagedFields = nil
		l.intern.pod(o.Obj)
		forgetUnreadPodStatus(&o.Obj.Status)
		l.g.pods = append(l.g.pods, o)
		l.notePodTimes(o)
		if l.podLoaded != nil {
			l.podLoaded()
		}
	}),
	Deployments: listOf("Deployment", func(l *loader, o *Deployment) {
		l.intern.workload(&o.Obj.ObjectMeta, o.Obj.Spec.Selector, &o.Obj.Spec.Template)
		l.g.deployments = append(l.g.deployments, o)
	}),
	ReplicaSets: listOf("ReplicaSet", func(l *loader, o *ReplicaSet) {
		l.intern.workload(&o.Obj.ObjectMeta, o.Obj.Spec.Selector, &o.Obj.Spec.Template)
		l.g.replicaSets = append(l.g.replicaSets, o)
	}),
	StatefulSets: listOf("StatefulSet", func(l *loader, o *StatefulSet) {
		l.intern.workload(&o.Obj.ObjectMeta, o.Obj.Spec.Selector, &o.Obj.Spec.Template)
		l.g.statefulSets = append(l.g.statefulSets, o)
	}),
	DaemonSets: listOf("DaemonSet", func(l *loader, o *DaemonSet) {
		l.intern.workload(&o.Obj.ObjectMeta, o.Obj.Spec.Selector, &o.Obj.Spec.Template)
		l.g.daemonSets = append(l.g.daemonSets, o)
	}),
	Jobs:       listOf("Job", func(l *loader, o *Job) { l.g.jobs = append(l.g.jobs, o) }),
	CronJobs:   listOf("CronJob", func(l *loader, o *CronJob) { l.g.cronJobs = append(l.g.cronJobs, o) }),
	Nodes:      listOf("Node", func(l *loader, o *Node) { l.g.nodes = append(l.g.nodes, o) }),
	NodeLeases: listOf("Lease", func(l *loader, o *Lease) { l.g.nodeLeases = append(l.g.nodeLeases, o) }),
	Services: listOf("Service", func(l *loader, o *Service) {
		l.intern.service(o.Obj)
		forgetUnreadServiceSpec(&o.Obj.Spec)
		l.g.services = append(l.g.services, o)
	}),
	EndpointSlices: listOf("EndpointSlice", func(l *loader, o *EndpointSlice) {
		l.g.endpointSlices = append(l.g.endpointSlices, o)
	}),
	PVCs:           listOf("PersistentVolumeClaim", func(l *loader, o *PVC) { l.g.pvcs = append(l.g.pvcs, o) }),
	PVs:            listOf("PersistentVolume", func(l *loader, o *PV) { l.g.pvs = append(l.g.pvs, o) }),
	StorageClasses: listOf("StorageClass", func(l *loader, o *StorageClass) { l.g.storageClasses = append(l.g.storageClasses, o) }),
	ResourceQuotas: listOf("ResourceQuota", func(l *loader, o *ResourceQuota) { l.g.quotas = append(l.g.quotas, o) }),
	LimitRanges:    listOf("LimitRange", func(l *loader, o *LimitRange) { l.g.limitRanges = append(l.g.limitRanges, o) }),
	ServiceAccounts: listOf("ServiceAccount", func(l *loader, o *ServiceAccount) {
		l.g.serviceAccounts = append(l.g.serviceAccounts, o)
	}),
	ConfigMaps: listOf("ConfigMap", func(l *loader, o *ConfigMap) { l.g.configMaps = append(l.g.configMaps, o) }),
	Secrets:    listOf("Secret", func(l *loader, o *Secret) { l.g.secrets = append(l.g.secrets, o) }),
	Namespaces: listOf("Namespace", func(l *loader, o *Namespace) { l.g.namespaces = append(l.g.namespaces, o) }),
	PriorityClasses: listOf("PriorityClass", func(l *loader, o *PriorityClass) {
		l.g.priorityClasses = append(l.g.priorityClasses, o)
	}),
	ValidatingWebhooks: listOf("ValidatingWebhookConfiguration", func(l *loader, o *ValidatingWebhookConfig) {
		l.g.validating = append(l.g.validating, o)
	}),
	MutatingWebhooks: listOf("MutatingWebhookConfiguration", func(l *loader, o *MutatingWebhookConfig) {
		l.g.mutating = append(l.g.mutating, o)
	}),
	Events: eventsDecoder(),
}

// forgetUnreadPodStatus lets go of what a pod's status says that nothing in podflow
// reads and every pod says on its own: its host addresses (hostIP is read) and the
// mounts its containers report (the spec's are read), whose token volume's generated
// name makes each pod's a list of its own. At 80k pods they were about 180 bytes of
// each healthy pod. The statuses are the pod's own (interner.pod).
func forgetUnreadPodStatus(st *corev1.PodStatus) {
	st.HostIPs = nil
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			list[i].VolumeMounts = nil
		}
	}
}

// forgetUnreadServiceSpec lets go of the parts of a Service's spec nothing in podflow
// reads, each decoded for every Service on its own: its IP families and their policy,
// and its internal traffic policy (about 100 bytes of each of 40k Services at 80k pods).
func forgetUnreadServiceSpec(s *corev1.ServiceSpec) {
	s.IPFamilies, s.IPFamilyPolicy, s.InternalTrafficPolicy = nil, nil, nil
}

// eventsDecoder is listOf for events, with their own decode (decodeEvents).
func eventsDecoder() kindDecoder {
	k := listOf("Event", func(l *loader, o *Object[rawEvent]) { l.addEvent(o) })
	k.decode = decodeEvents
	return k
}

// Compile-time checks that every decoded type carries ObjectMeta the loader can index.
var _ = []metav1.ObjectMetaAccessor{
	&corev1.Pod{}, &appsv1.Deployment{}, &batchv1.Job{}, &coordinationv1.Lease{}, &discoveryv1.EndpointSlice{},
	&storagev1.StorageClass{}, &schedulingv1.PriorityClass{}, &admissionregistrationv1.ValidatingWebhookConfiguration{},
}

// decodeList decodes a List (or a bare JSON array) of T. The whole list is decoded in one
// pass; only when that fails is it decoded item by item, so one bad item costs a warning
// naming its JSON pointer and the other items still load.
func decodeList[T any](l *loader, lb *loadedBundle, kind string, loc Location, data []byte, d decodedList, add func(*Object[T])) bool {
	bare, err := d.bare, d.err
	base := "/items"
	if bare {
		base = ""
	}
	items, _ := d.items.([]T)
	if err != nil {
		items = decodeItems[T](l, lb, loc, data, bare)
		if items == nil {
			return false
		}
	}
	for i := range items {
		obj := &items[i]
		acc, ok := any(obj).(metav1.ObjectMetaAccessor)
		if !ok {
			return true
		}
		meta, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok || meta == nil {
			continue
		}
		ptr := itemPointer(base, i)
		if meta.Name == "" {
			// decodeItems keeps the zero value of an item it could not read; skip it quietly,
			// the warning was already given.
			if err == nil {
				l.warn(lb, loc.inBundle().Path, 0, ptr, "%s without metadata.name", strings.ToLower(kind))
			}
			continue
		}
		o := &Object[T]{Obj: obj, Loc: loc.withPointer(ptr), kind: kind, meta: meta}
		if !l.register(kind, meta, o) {
			continue
		}
		l.noteTime(meta.CreationTimestamp.Time)
		add(o)
	}
	return true
}

// decodeWhole decodes a List (or a bare JSON array) of T in one pass.
func decodeWhole[T any](s *sharedDecode, data []byte) decodedList {
	d := decodeInto(s, data, make([]T, 0, objectRoom[T](data)))
	// The decode grew the slice by doubling, and the graph keeps pointers into it:
	// an exact copy lets the spare capacity, up to half of it, go.
	if items := d.items.([]T); cap(items) > len(items)+len(items)/8 {
		d.items = slices.Clone(items)
	}
	return d
}

// objectRoom is the room to make for a list's objects: one per resourceVersion key in
// its text (a key's quotes are escaped inside a string, so only keys count), which
// every object the API server returns carries once, in its own metadata, and a pod
// template does not; the list's own metadata may add one. Grown by doubling from none
// and then copied to its size, the lists of pods, ReplicaSets and Deployments were a
// tenth of all an analysis allocated at 20k pods. A text without the key (a list
// written by hand) gets no room and is grown as before, and so is one with more
// objects than keys. The room takes at most about the text's own size, so a text of
// repeated keys reserves no more than its objects could decode to.
func objectRoom[T any](data []byte) int {
	n := bytes.Count(data, []byte(`"resourceVersion":`))
	return min(n, len(data)/max(int(unsafe.Sizeof(*new(T))), eventTextMin))
}

// decodeInto decodes a List (or a bare JSON array) of T into items, whose room the
// decode fills before it grows them.
func decodeInto[T any](s *sharedDecode, data []byte, items []T) decodedList {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	d := decodedList{bare: len(trimmed) > 0 && trimmed[0] == '['}
	if d.bare {
		d.err = s.unmarshal(data, &items)
	} else {
		list := struct {
			Items []T `json:"items"`
		}{items}
		d.err = s.unmarshal(data, &list)
		items = list.Items
	}
	d.items = items
	return d
}

// decodeEvents decodes a list of events into room for as many as its text has
// involvedObject or regarding keys (a key's quotes are escaped inside a string, so
// only keys count), and keeps them as decoded: an event is copied out of its decoded
// form (addEvent), so the list is not kept. Grown by doubling and then copied to its
// own size, the events' lists were a fifth of all an analysis allocated at 20k pods
// (200k events, about 650 bytes each decoded). When the count is wrong the decode
// grows the list as before. The room is at most one event per eventTextMin bytes, so
// a text of repeated keys reserves no more than its own size would decode to.
func decodeEvents(s *sharedDecode, data []byte) decodedList {
	// A list holds core events (involvedObject) or events.k8s.io ones (regarding): the
	// second key is counted only when the first is nowhere, a pass over the text saved.
	n := bytes.Count(data, []byte(`"involvedObject":`))
	if n == 0 {
		n = bytes.Count(data, []byte(`"regarding":`))
	}
	room := min(n, len(data)/eventTextMin)
	list := *eventLists.Get().(*[]rawEvent)
	if cap(list) < room {
		list = make([]rawEvent, 0, room)
	}
	return decodeInto(s, data, list[:0])
}

// eventLists are the lists events files were decoded into, cleared, once their events
// are copied out (releaseEvents): the next events file is decoded into one of them.
// Each file's list made anew was 125 MB at 20k pods, a fifteenth of all an analysis
// allocated.
var eventLists = sync.Pool{New: func() any { return new([]rawEvent) }}

// releaseEvents hands the list of a decoded events file on to the next one, once
// addEvent has copied every event out of it: nothing points into it.
func releaseEvents(d decodedList) {
	if list, ok := d.items.([]rawEvent); ok && cap(list) > 0 {
		list = list[:cap(list)]
		clear(list)
		list = list[:0]
		eventLists.Put(&list)
	}
}

// eventTextMin is less than any event's JSON text: its object, kind, names, reason and
// times alone take more.
const eventTextMin = 64

// fastUnmarshal is the decode of the load path: encoding/json semantics on the
// encoding/json/v2 implementation (the module that mirrors it, and aliases the standard
// library once v2 is on by default), which validates while it decodes instead of in a
// pass of its own first and took 0.6x the CPU time on generated bundles. Only a
// success is trusted: a document it refuses is decoded again by the slow path with
// encoding/json, so warnings keep encoding/json's messages and offsets.
func fastUnmarshal(data []byte, v any) error { return jsonv2.Unmarshal(data, v, fastOptions) }

// decodeItems is the slow path for a list that failed to decode as a whole.
func decodeItems[T any](l *loader, lb *loadedBundle, loc Location, data []byte, bare bool) []T {
	var raws []json.RawMessage
	var err error
	if bare {
		err = json.Unmarshal(data, &raws)
	} else {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		err = json.Unmarshal(data, &list)
		raws = list.Items
	}
	if err != nil {
		l.warn(lb, loc.inBundle().Path, jsonErrorLine(data, err), "", "not a readable JSON list: %v", err)
		return nil
	}
	base := "/items"
	if bare {
		base = ""
	}
	items := make([]T, len(raws))
	for i, raw := range raws {
		if l.ctx.Err() != nil {
			return nil
		}
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			var zero T
			items[i] = zero
			l.warn(lb, loc.inBundle().Path, 0, fmt.Sprintf("%s/%d", base, i), "unreadable item: %v", err)
		}
	}
	return items
}

// jsonErrorLine turns a decoder offset into a 1-based line number, or 0 when unknown.
func jsonErrorLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// register indexes an object by key and UID; false when an earlier bundle already had it.
func (l *loader) register(kind string, meta *metav1.ObjectMeta, o any) bool {
	if kind == "Event" {
		// Events are joined through their own indexes; here they only need de-duplication.
		key := string(meta.UID)
		if key == "" {
			key = meta.Namespace + "/" + meta.Name
		}
		return l.seenEvents.add(key)
	}
	key := kind + "/" + meta.Namespace + "/" + meta.Name
	if _, dup := l.g.byKey[key]; dup {
		return false
	}
	if uid := string(meta.UID); uid != "" {
		if _, dup := l.g.byUID[uid]; dup {
			return false
		}
		l.g.byUID[uid] = o
	}
	l.g.byKey[key] = o
	return true
}

// shareTemplates makes a ReplicaSet's template containers and volumes those of the
// Deployment that controls it when they are equal, as they are for its current
// ReplicaSet: the Deployment's controller copies its template into the ReplicaSet and
// adds only a label. The decoder shares a part only until its table is full, long
// before a big cluster's ReplicaSets are read, and at 20k pods the ReplicaSets' own
// copies of their containers were about 4 MB. Equal values are shared, whichever
// object they are read from, and nothing writes to a loaded object.
func (l *loader) shareTemplates() {
	for _, rs := range l.g.replicaSets {
		c := metav1.GetControllerOfNoCopy(rs.meta)
		if c == nil || c.Kind != "Deployment" {
			continue
		}
		d, _ := l.g.byKey["Deployment/"+rs.meta.Namespace+"/"+c.Name].(*Deployment)
		if d == nil {
			continue
		}
		to, from := &rs.Obj.Spec.Template.Spec, &d.Obj.Spec.Template.Spec
		shareEqual(&to.InitContainers, from.InitContainers)
		shareEqual(&to.Containers, from.Containers)
		shareEqual(&to.Volumes, from.Volumes)
	}
}

// shareEndpoints makes what each EndpointSlice's endpoints repeat one value: the pod an
// endpoint targets is named with the loaded pod's own UID and name strings, its kind
// and namespace with the interner's, and its node, its conditions and the slice's
// ports point at one value for each that is equal. Decoded, every endpoint had its own
// copy of each (about 150 bytes of each of the 80k endpoints at 80k pods, held to the
// end). The slices are read after the pods, whose file comes later, so this is done
// once every list is in. Equal values are shared and nothing writes to a loaded
// object, so nothing read from a slice changes.
func (l *loader) shareEndpoints() {
	in := &l.intern
	var (
		strs   map[string]*string
		bools  map[bool]*bool
		ints   map[int32]*int32
		protos map[corev1.Protocol]*corev1.Protocol
	)
	for _, s := range l.g.endpointSlices {
		for i := range s.Obj.Endpoints {
			ep := &s.Obj.Endpoints[i]
			ep.NodeName, ep.Zone = sharedPtr(&strs, ep.NodeName), sharedPtr(&strs, ep.Zone)
			c := &ep.Conditions
			c.Ready, c.Serving, c.Terminating = sharedPtr(&bools, c.Ready), sharedPtr(&bools, c.Serving), sharedPtr(&bools, c.Terminating)
			t := ep.TargetRef
			if t == nil {
				continue
			}
			t.Kind, t.Namespace, t.APIVersion = in.str(t.Kind), in.str(t.Namespace), in.str(t.APIVersion)
			if p, ok := l.g.byUID[string(t.UID)].(*Pod); ok {
				t.UID = p.meta.UID
				if t.Name == p.meta.Name {
					t.Name = p.meta.Name
				}
			}
		}
		for i := range s.Obj.Ports {
			pt := &s.Obj.Ports[i]
			pt.Name, pt.AppProtocol = sharedPtr(&strs, pt.Name), sharedPtr(&strs, pt.AppProtocol)
			pt.Protocol, pt.Port = sharedPtr(&protos, pt.Protocol), sharedPtr(&ints, pt.Port)
		}
	}
}

// sharedPtr returns the pointer the table holds for the value p points at, or records p
// for it (while the table is under internCap) and returns p.
func sharedPtr[T comparable](table *map[T]*T, p *T) *T {
	if p == nil {
		return nil
	}
	if c, ok := (*table)[*p]; ok {
		return c
	}
	if *table == nil {
		*table = map[T]*T{}
	}
	if len(*table) < internCap {
		(*table)[*p] = p
	}
	return p
}

// shareEqual points *s at from when the two lists hold equal values.
func shareEqual[S ~[]E, E any](s *S, from S) {
	if len(*s) > 0 && len(*s) == len(from) && reflect.DeepEqual(*s, from) {
		*s = from
	}
}

// notePodTimes feeds the reference time of manifest-less bundles from pod status, which
// is often newer than any creation time.
func (l *loader) notePodTimes(p *Pod) {
	st := &p.Obj.Status
	for _, c := range st.Conditions {
		l.noteTime(c.LastTransitionTime.Time)
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...) {
		if r := cs.State.Running; r != nil {
			l.noteTime(r.StartedAt.Time)
		}
		if t := cs.State.Terminated; t != nil {
			l.noteTime(t.FinishedAt.Time)
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			l.noteTime(t.FinishedAt.Time)
		}
	}
}

func (l *loader) noteTime(t time.Time) {
	if t.After(l.latest) {
		l.latest = t
	}
}
