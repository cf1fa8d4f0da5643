package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
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
	seenEvents map[string]bool
	// text holds the journal text of bundles read once (see loadJournal).
	text journalText
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
	if m := b.Manifest; m != nil {
		info.FormatVersion, info.Type = m.FormatVersion, m.Type
		info.CollectedAt = timePtr(m.CollectedAt)
		info.ClockSkewSeconds = m.Cluster.ClockSkewSeconds
		if m.CollectedAt.After(l.g.collectedAt) {
			l.g.collectedAt = m.CollectedAt
		}
		if l.g.clockSkew == 0 && m.Cluster.ClockSkewSeconds != 0 {
			l.g.clockSkew = time.Duration(m.Cluster.ClockSkewSeconds * float64(time.Second))
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
	for _, name := range lb.b.Names() {
		if l.ctx.Err() != nil {
			return
		}
		if k, ok := errorsPaths[name]; ok {
			l.g.failed[k] = append(l.g.failed[k], name)
			continue
		}
		info := bundle.ParsePath(name)
		if info.Area != "cluster" && info.Area != "namespaced" {
			continue
		}
		kind, ok := listKinds[info.Kind]
		if !ok {
			continue
		}
		data, err := lb.b.Take(name) // decoded once; a bundle read once lets go of it
		if err != nil {
			l.warn(lb, name, 0, "", "read: %v", err)
			continue
		}
		l.g.present[kind] = true
		l.log.WithField("file", name).Trace("loading list")
		readable := l.decodeKind(lb, kind, l.loc(lb, name), data)
		if kind == Events {
			if readable {
				l.g.eventNamespaces[info.Namespace] = true
			} else {
				l.g.unreadable[kind] = append(l.g.unreadable[kind], name)
			}
		}
	}
}

// decodeKind decodes one list; false when the file could not be read at all.
func (l *loader) decodeKind(lb *loadedBundle, kind Kind, loc Location, data []byte) bool {
	g := l.g
	switch kind {
	case Pods:
		return decodeList(l, lb, "Pod", loc, data, func(o *Pod) {
			g.pods = append(g.pods, o)
			l.notePodTimes(o)
		})
	case Deployments:
		return decodeList(l, lb, "Deployment", loc, data, func(o *Deployment) { g.deployments = append(g.deployments, o) })
	case ReplicaSets:
		return decodeList(l, lb, "ReplicaSet", loc, data, func(o *ReplicaSet) { g.replicaSets = append(g.replicaSets, o) })
	case StatefulSets:
		return decodeList(l, lb, "StatefulSet", loc, data, func(o *StatefulSet) { g.statefulSets = append(g.statefulSets, o) })
	case DaemonSets:
		return decodeList(l, lb, "DaemonSet", loc, data, func(o *DaemonSet) { g.daemonSets = append(g.daemonSets, o) })
	case Jobs:
		return decodeList(l, lb, "Job", loc, data, func(o *Job) { g.jobs = append(g.jobs, o) })
	case CronJobs:
		return decodeList(l, lb, "CronJob", loc, data, func(o *CronJob) { g.cronJobs = append(g.cronJobs, o) })
	case Nodes:
		return decodeList(l, lb, "Node", loc, data, func(o *Node) { g.nodes = append(g.nodes, o) })
	case NodeLeases:
		return decodeList(l, lb, "Lease", loc, data, func(o *Lease) { g.nodeLeases = append(g.nodeLeases, o) })
	case Services:
		return decodeList(l, lb, "Service", loc, data, func(o *Service) { g.services = append(g.services, o) })
	case EndpointSlices:
		return decodeList(l, lb, "EndpointSlice", loc, data, func(o *EndpointSlice) { g.endpointSlices = append(g.endpointSlices, o) })
	case PVCs:
		return decodeList(l, lb, "PersistentVolumeClaim", loc, data, func(o *PVC) { g.pvcs = append(g.pvcs, o) })
	case PVs:
		return decodeList(l, lb, "PersistentVolume", loc, data, func(o *PV) { g.pvs = append(g.pvs, o) })
	case StorageClasses:
		return decodeList(l, lb, "StorageClass", loc, data, func(o *StorageClass) { g.storageClasses = append(g.storageClasses, o) })
	case ResourceQuotas:
		return decodeList(l, lb, "ResourceQuota", loc, data, func(o *ResourceQuota) { g.quotas = append(g.quotas, o) })
	case LimitRanges:
		return decodeList(l, lb, "LimitRange", loc, data, func(o *LimitRange) { g.limitRanges = append(g.limitRanges, o) })
	case ServiceAccounts:
		return decodeList(l, lb, "ServiceAccount", loc, data, func(o *ServiceAccount) { g.serviceAccounts = append(g.serviceAccounts, o) })
	case ConfigMaps:
		return decodeList(l, lb, "ConfigMap", loc, data, func(o *ConfigMap) { g.configMaps = append(g.configMaps, o) })
	case Secrets:
		return decodeList(l, lb, "Secret", loc, data, func(o *Secret) { g.secrets = append(g.secrets, o) })
	case Namespaces:
		return decodeList(l, lb, "Namespace", loc, data, func(o *Namespace) { g.namespaces = append(g.namespaces, o) })
	case PriorityClasses:
		return decodeList(l, lb, "PriorityClass", loc, data, func(o *PriorityClass) { g.priorityClasses = append(g.priorityClasses, o) })
	case ValidatingWebhooks:
		return decodeList(l, lb, "ValidatingWebhookConfiguration", loc, data, func(o *ValidatingWebhookConfig) { g.validating = append(g.validating, o) })
	case MutatingWebhooks:
		return decodeList(l, lb, "MutatingWebhookConfiguration", loc, data, func(o *MutatingWebhookConfig) { g.mutating = append(g.mutating, o) })
	case Events:
		return decodeList(l, lb, "Event", loc, data, func(o *Object[rawEvent]) { l.addEvent(o) })
	}
	return true
}

// Compile-time checks that every decoded type carries ObjectMeta the loader can index.
var _ = []metav1.ObjectMetaAccessor{
	&corev1.Pod{}, &appsv1.Deployment{}, &batchv1.Job{}, &coordinationv1.Lease{}, &discoveryv1.EndpointSlice{},
	&storagev1.StorageClass{}, &schedulingv1.PriorityClass{}, &admissionregistrationv1.ValidatingWebhookConfiguration{},
}

// decodeList decodes a List (or a bare JSON array) of T. The whole list is decoded in one
// pass; only when that fails is it decoded item by item, so one bad item costs a warning
// naming its JSON pointer and the other items still load.
func decodeList[T any](l *loader, lb *loadedBundle, kind string, loc Location, data []byte, add func(*Object[T])) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	bare := len(trimmed) > 0 && trimmed[0] == '['
	base := "/items"
	if bare {
		base = ""
	}
	var items []T
	var err error
	if bare {
		err = fastUnmarshal(data, &items)
	} else {
		var list struct {
			Items []T `json:"items"`
		}
		err = fastUnmarshal(data, &list)
		items = list.Items
	}
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
		ptr := fmt.Sprintf("%s/%d", base, i)
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

// fastUnmarshal is the decode of the load path: encoding/json semantics on the
// encoding/json/v2 implementation (the module that mirrors it, and aliases the standard
// library once v2 is on by default), which validates while it decodes instead of in a
// pass of its own first and took 0.6x the CPU time on generated bundles. Only a
// success is trusted: a document it refuses is decoded again by the slow path with
// encoding/json, so warnings keep encoding/json's messages and offsets.
func fastUnmarshal(data []byte, v any) error { return jsonv1.Unmarshal(data, v) }

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
		if l.seenEvents[key] {
			return false
		}
		l.seenEvents[key] = true
		return true
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
