package analyze

import (
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodsControlledBy lists the pods whose controller is the object ref names (the pods
// of a ReplicaSet, a StatefulSet, a Job, a DaemonSet), sorted by name. Ownership is
// read from each pod's controller reference, so a pod renamed consistently (as by
// pseudonymization) still belongs to its owner.
func (v *View) PodsControlledBy(ref ObjectRef) []*Pod {
	if !v.allow(Pods) {
		return nil
	}
	var out []*Pod
	for _, p := range v.g.podsByNS[ref.Namespace] {
		if c := v.Controller(p.meta); c != nil && controls(*c, ref) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].meta.Name < out[j].meta.Name })
	return out
}

// ReplicaSetsOf lists the ReplicaSets a Deployment controls, newest revision first
// (by the deployment.kubernetes.io/revision annotation; ReplicaSets without one last,
// by name).
func (v *View) ReplicaSetsOf(d *Deployment) []*ReplicaSet {
	if !v.allow(ReplicaSets) {
		return nil
	}
	var out []*ReplicaSet
	ref := d.Ref()
	key := ref.Kind + "/" + ref.Namespace + "/" + ref.Name
	for _, rs := range v.g.rsByOwner.of(key) {
		if c := v.Controller(rs.meta); c != nil && controls(*c, ref) {
			out = append(out, rs)
		}
	}
	for _, rs := range v.g.derivedByOwner.of(key) {
		if c := v.Controller(&rs.meta); c != nil && controls(*c, ref) {
			out = append(out, rs.object())
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := Revision(out[i].meta), Revision(out[j].meta)
		if a != b {
			return a > b
		}
		return out[i].meta.Name < out[j].meta.Name
	})
	return out
}

// controls reports whether a controller reference names the object: same kind,
// namespace and name, and the same UID when both know one (an object recreated under
// the same name is another object).
func controls(c, ref ObjectRef) bool {
	if c.Kind != ref.Kind || c.Namespace != ref.Namespace || c.Name != ref.Name {
		return false
	}
	return c.UID == "" || ref.UID == "" || c.UID == ref.UID
}

// RevisionAnnotation is the Deployment controller's revision stamp on a Deployment and
// its ReplicaSets (k8s.io/kubernetes pkg/controller/deployment/util RevisionAnnotation).
const RevisionAnnotation = "deployment.kubernetes.io/revision"

// Revision reads an object's deployment revision, -1 when it has none.
func Revision(meta *metav1.ObjectMeta) int {
	if meta == nil {
		return -1
	}
	n, err := strconv.Atoi(meta.Annotations[RevisionAnnotation])
	if err != nil {
		return -1
	}
	return n
}
