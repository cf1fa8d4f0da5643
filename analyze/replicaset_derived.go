package analyze

import (
	"reflect"
	"sync"
	"weak"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// derivedReplicaSet is a ReplicaSet held as what it adds to the template of the
// Deployment that controls it. The Deployment's controller copies its template into
// each ReplicaSet it makes and adds only the pod-template-hash label, so the
// ReplicaSet's own copy of the pod spec is the Deployment's over again: at 20k pods the
// ReplicaSets' fixed-size structs alone (1168 bytes each, the template 824 of them)
// were 12 MB, held from the load to the report. A ReplicaSet is kept this way only when
// the object made back from it (object) is deeply equal to the one decoded, so nothing
// read from it changes; one with status conditions stays whole, as the scans that read
// conditions go over whole ReplicaSets only.
//
// Every path that hands out a *ReplicaSet makes it back (View.ReplicaSets,
// ReplicaSetsOf, PodOwners, the graph's templates); metadata, which the owner chains
// read for every pod, is read without it (Meta).
type derivedReplicaSet struct {
	typeMeta metav1.TypeMeta
	meta     metav1.ObjectMeta
	loc      Location
	replicas *int32
	selector *metav1.LabelSelector
	// labels are the template's labels; the metadata's own map when they are equal.
	labels   map[string]string
	minReady int32
	// at is the ReplicaSet's place among every ReplicaSet loaded, whole or derived.
	at     int32
	status appsv1.ReplicaSetStatus
	owner  *Deployment

	mu   sync.Mutex
	made weak.Pointer[ReplicaSet]
}

// Meta is the ReplicaSet's metadata.
func (r *derivedReplicaSet) Meta() *metav1.ObjectMeta { return &r.meta }

// object is the ReplicaSet as decoded. It is made again once nothing holds the one
// made before, and is the same object while something does.
func (r *derivedReplicaSet) object() *ReplicaSet {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.made.Value(); o != nil {
		return o
	}
	o := r.build()
	r.made = weak.Make(o)
	return o
}

func (r *derivedReplicaSet) build() *ReplicaSet {
	template := r.owner.Obj.Spec.Template
	template.Labels = r.labels
	obj := &appsv1.ReplicaSet{TypeMeta: r.typeMeta, ObjectMeta: r.meta, Status: r.status,
		Spec: appsv1.ReplicaSetSpec{Replicas: r.replicas, MinReadySeconds: r.minReady, Selector: r.selector, Template: template}}
	return &ReplicaSet{Obj: obj, Loc: r.loc, kind: "ReplicaSet", meta: &obj.ObjectMeta}
}

// deriveWhileLoading makes the load keep ReplicaSets as derivedReplicaSet where it
// can; a test turns it off to compare with the ReplicaSets kept whole.
var deriveWhileLoading = true

// deriveReplicaSets keeps as derivedReplicaSet every ReplicaSet that its Deployment's
// template and its own few fields give back exactly. The ReplicaSets that stay whole
// are copied out of their list's array, which would otherwise stay whole for them.
func (l *loader) deriveReplicaSets() {
	g := l.g
	if !deriveWhileLoading || len(g.replicaSets) == 0 {
		return
	}
	whole := g.replicaSets[:0:0]
	for i, rs := range g.replicaSets {
		if d := derive(g, rs, int32(i)); d != nil {
			g.derivedRS = append(g.derivedRS, d)
			g.byKey["ReplicaSet/"+d.meta.Namespace+"/"+d.meta.Name] = d
			if uid := string(d.meta.UID); uid != "" {
				g.byUID[uid] = d
			}
			continue
		}
		whole = append(whole, rs)
	}
	if len(g.derivedRS) == 0 {
		return
	}
	for _, rs := range whole {
		own := *rs.Obj
		rs.Obj, rs.meta = &own, &own.ObjectMeta
	}
	g.replicaSets = whole
}

// derive is the ReplicaSet as what it adds to its Deployment's template, or nil when
// that does not give it back exactly.
func derive(g *Graph, rs *ReplicaSet, at int32) *derivedReplicaSet {
	o := rs.Obj
	if len(o.Status.Conditions) > 0 {
		return nil
	}
	c := metav1.GetControllerOfNoCopy(rs.meta)
	if c == nil || c.Kind != "Deployment" {
		return nil
	}
	owner, _ := g.byKey["Deployment/"+rs.meta.Namespace+"/"+c.Name].(*Deployment)
	if owner == nil {
		return nil
	}
	labels := o.Spec.Template.Labels
	if reflect.DeepEqual(labels, o.Labels) {
		labels = o.Labels
	}
	d := &derivedReplicaSet{typeMeta: o.TypeMeta, meta: o.ObjectMeta, loc: rs.Loc, replicas: o.Spec.Replicas, selector: o.Spec.Selector,
		labels: labels, minReady: o.Spec.MinReadySeconds, at: at, status: o.Status, owner: owner}
	if !reflect.DeepEqual(d.build().Obj, o) {
		return nil
	}
	return d
}

// allReplicaSets lists every ReplicaSet in load order, the derived ones made back.
func (g *Graph) allReplicaSets() []*ReplicaSet {
	if len(g.derivedRS) == 0 {
		return g.replicaSets
	}
	out := make([]*ReplicaSet, 0, len(g.replicaSets)+len(g.derivedRS))
	whole, derived := g.replicaSets, g.derivedRS
	for len(whole) > 0 || len(derived) > 0 {
		if len(derived) > 0 && int(derived[0].at) == len(out) {
			out = append(out, derived[0].object())
			derived = derived[1:]
			continue
		}
		out = append(out, whole[0])
		whole = whole[1:]
	}
	return out
}

// replicaSet is the ReplicaSet namespace/name, whole or made back, or nil.
func (g *Graph) replicaSet(namespace, name string) *ReplicaSet {
	switch o := g.byKey["ReplicaSet/"+namespace+"/"+name].(type) {
	case *ReplicaSet:
		return o
	case *derivedReplicaSet:
		return o.object()
	}
	return nil
}
