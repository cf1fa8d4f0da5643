package importer

import (
	"encoding/json"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SpecFromAnnotation marks a pod whose spec was taken from its owner's pasted pod
// template, because what the paste showed of the pod itself (a `kubectl get pods` row,
// events) held none: "ReplicaSet/NAME" or "Deployment/NAME".
const SpecFromAnnotation = "podflow.dev/spec-from"

// rePodTemplateHash is the pod-template-hash a Deployment puts in its ReplicaSets' and
// pods' names (rand.SafeEncodeString of a hash: no vowels, no 0, 1, 3).
var rePodTemplateHash = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2456789]{5,10}$`)

// podsFromOwners gives a pasted pod that shows no containers the spec of the pod
// template it was made from, when the paste holds its owner: the ReplicaSet its name
// comes from (NAME-xxxxx), else the Deployment (NAME-HASH-xxxxx), in its namespace. The
// controller makes the pod from that template, so its containers, images and requests
// are the template's (admission may have added to them, never taken away): a scheduling
// failure then reads the requests the paste shows, not "cpu 0". The pod is marked with
// the owner it took its spec from, and gets the owner reference the controller sets.
func (li *looseImport) podsFromOwners() {
	for key, it := range li.byKey {
		if !strings.HasPrefix(key, "Pod/") {
			continue
		}
		var p corev1.Pod
		if json.Unmarshal(it.data, &p) != nil || len(p.Spec.Containers) > 0 || p.Name == "" {
			continue
		}
		kind, owner, tmpl := li.ownerTemplate(&p)
		if tmpl == nil || len(tmpl.Spec.Containers) == 0 {
			continue
		}
		node := p.Spec.NodeName
		p.Spec = *tmpl.Spec.DeepCopy()
		if node != "" {
			p.Spec.NodeName = node
		}
		if p.Labels == nil && len(tmpl.Labels) > 0 {
			p.Labels = map[string]string{}
			for k, v := range tmpl.Labels {
				p.Labels[k] = v
			}
		}
		if len(p.OwnerReferences) == 0 {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.Name, UID: owner.UID, Controller: &yes}}
		}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[SpecFromAnnotation] = kind + "/" + owner.Name
		if data, err := json.Marshal(p); err == nil {
			it.data = data
		}
	}
}

// ownerTemplate finds the pasted owner of a pod by the names controllers give pods.
func (li *looseImport) ownerTemplate(p *corev1.Pod) (string, metav1.ObjectMeta, *corev1.PodTemplateSpec) {
	i := strings.LastIndexByte(p.Name, '-')
	if i <= 0 {
		return "", metav1.ObjectMeta{}, nil
	}
	rsName := p.Name[:i]
	if it, ok := li.byKey["ReplicaSet/"+p.Namespace+"/"+rsName]; ok {
		var rs appsv1.ReplicaSet
		if json.Unmarshal(it.data, &rs) == nil {
			return "ReplicaSet", rs.ObjectMeta, &rs.Spec.Template
		}
	}
	j := strings.LastIndexByte(rsName, '-')
	if j <= 0 || !rePodTemplateHash.MatchString(rsName[j+1:]) {
		return "", metav1.ObjectMeta{}, nil
	}
	if it, ok := li.byKey["Deployment/"+p.Namespace+"/"+rsName[:j]]; ok {
		var d appsv1.Deployment
		if json.Unmarshal(it.data, &d) == nil {
			// The pod's owner is the ReplicaSet the hash names; the Deployment owns it.
			return "ReplicaSet", metav1.ObjectMeta{Name: rsName}, &d.Spec.Template
		}
	}
	return "", metav1.ObjectMeta{}, nil
}
