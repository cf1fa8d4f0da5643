package analyze

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectRef names an object: a subject of a finding or the object an event is about.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// String renders Kind ns/name, or Kind name for cluster-scoped objects.
func (r ObjectRef) String() string {
	return r.Kind + " " + r.NamespacedName()
}

// NamespacedName renders ns/name, or name for cluster-scoped objects.
func (r ObjectRef) NamespacedName() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// key identifies the object regardless of UID, for joins and de-duplication.
func (r ObjectRef) key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// NodeRef is the ObjectRef of a node by name.
func NodeRef(name string) ObjectRef { return ObjectRef{Kind: "Node", Name: name} }

// Object is one API object from the bundle with the place it was read from. Rules read
// fields through Obj and cite Loc (or Loc.At(...) for a field).
type Object[T any] struct {
	Obj  *T
	Loc  Location
	kind string
	meta *metav1.ObjectMeta
}

// Ref names the object.
func (o *Object[T]) Ref() ObjectRef {
	return ObjectRef{Kind: o.kind, Namespace: o.meta.Namespace, Name: o.meta.Name, UID: string(o.meta.UID)}
}

// Meta is the object's metadata.
func (o *Object[T]) Meta() *metav1.ObjectMeta { return o.meta }

// Pod and the aliases below it are the object types a View hands out.
type (
	Pod                     = Object[corev1.Pod]
	Deployment              = Object[appsv1.Deployment]
	ReplicaSet              = Object[appsv1.ReplicaSet]
	StatefulSet             = Object[appsv1.StatefulSet]
	DaemonSet               = Object[appsv1.DaemonSet]
	Job                     = Object[batchv1.Job]
	CronJob                 = Object[batchv1.CronJob]
	Node                    = Object[corev1.Node]
	Lease                   = Object[coordinationv1.Lease]
	Service                 = Object[corev1.Service]
	EndpointSlice           = Object[discoveryv1.EndpointSlice]
	PVC                     = Object[corev1.PersistentVolumeClaim]
	PV                      = Object[corev1.PersistentVolume]
	StorageClass            = Object[storagev1.StorageClass]
	ResourceQuota           = Object[corev1.ResourceQuota]
	LimitRange              = Object[corev1.LimitRange]
	ServiceAccount          = Object[corev1.ServiceAccount]
	ConfigMap               = Object[corev1.ConfigMap]
	Secret                  = Object[corev1.Secret]
	Namespace               = Object[corev1.Namespace]
	PriorityClass           = Object[schedulingv1.PriorityClass]
	ValidatingWebhookConfig = Object[admissionregistrationv1.ValidatingWebhookConfiguration]
	MutatingWebhookConfig   = Object[admissionregistrationv1.MutatingWebhookConfiguration]
)
