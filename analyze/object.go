package analyze

import (
	"strings"

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
	// UnnamedIn is set when the evidence does not show the object's name (a pasted
	// describe excerpt without its Name line): the file it was read from. Name is then
	// podflow's placeholder, which no command should use.
	UnnamedIn string `json:"unnamedIn,omitempty"`
	// NamespaceUnknown is set when the evidence does not show the namespace either;
	// Namespace is then the default podflow assumed.
	NamespaceUnknown bool `json:"namespaceUnknown,omitempty"`
}

// String renders Kind ns/name, or Kind name for cluster-scoped objects.
func (r ObjectRef) String() string {
	return r.Kind + " " + r.NamespacedName()
}

// generatedSuffix ends the placeholder an import gives a pod whose name is cut but
// whose generateName shows ("web-7d9f8b6c5d-unnamed").
const generatedSuffix = "-unnamed"

// NamespacedName renders ns/name, or name for cluster-scoped objects. An object whose
// name the evidence does not show is named by where it was read: "(unnamed in
// describe.txt)", followed by its namespace when the evidence shows that.
func (r ObjectRef) NamespacedName() string {
	if r.UnnamedIn != "" {
		s := "(unnamed in " + r.UnnamedIn + ")"
		if prefix, ok := strings.CutSuffix(r.Name, generatedSuffix); ok && prefix != "" {
			// The import kept what the evidence shows of the name: its generateName.
			s = prefix + "-… " + s
		}
		if r.Namespace != "" && !r.NamespaceUnknown {
			s += " in namespace " + r.Namespace
		}
		return s
	}
	if r.Namespace == "" || r.NamespaceUnknown {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// nsName is ns/name (name for a cluster-scoped object) as the graph knows it, a made-up
// name included: what a pod's findings, roots and scope are joined by.
func (r ObjectRef) nsName() string {
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
	r := ObjectRef{Kind: o.kind, Namespace: o.meta.Namespace, Name: o.meta.Name, UID: string(o.meta.UID)}
	if _, ok := o.meta.Annotations[partialAnnotation]; ok {
		if Partial(*o.meta, "name") {
			r.UnnamedIn = o.Loc.Path
		}
		r.NamespaceUnknown = Partial(*o.meta, "namespace")
	}
	return r
}

// Meta is the object's metadata.
func (o *Object[T]) Meta() *metav1.ObjectMeta { return o.meta }

// The object types a View hands out, one per kind the graph holds.
type (
	// Pod is a Pod as the graph holds it, with its location.
	Pod = Object[corev1.Pod]
	// Deployment is a Deployment as the graph holds it, with its location.
	Deployment = Object[appsv1.Deployment]
	// ReplicaSet is a ReplicaSet as the graph holds it, with its location.
	ReplicaSet = Object[appsv1.ReplicaSet]
	// StatefulSet is a StatefulSet as the graph holds it, with its location.
	StatefulSet = Object[appsv1.StatefulSet]
	// DaemonSet is a DaemonSet as the graph holds it, with its location.
	DaemonSet = Object[appsv1.DaemonSet]
	// Job is a Job as the graph holds it, with its location.
	Job = Object[batchv1.Job]
	// CronJob is a CronJob as the graph holds it, with its location.
	CronJob = Object[batchv1.CronJob]
	// Node is a Node as the graph holds it, with its location.
	Node = Object[corev1.Node]
	// Lease is a Lease as the graph holds it, with its location.
	Lease = Object[coordinationv1.Lease]
	// Service is a Service as the graph holds it, with its location.
	Service = Object[corev1.Service]
	// EndpointSlice is a EndpointSlice as the graph holds it, with its location.
	EndpointSlice = Object[discoveryv1.EndpointSlice]
	// PVC is a PersistentVolumeClaim as the graph holds it, with its location.
	PVC = Object[corev1.PersistentVolumeClaim]
	// PV is a PersistentVolume as the graph holds it, with its location.
	PV = Object[corev1.PersistentVolume]
	// StorageClass is a StorageClass as the graph holds it, with its location.
	StorageClass = Object[storagev1.StorageClass]
	// ResourceQuota is a ResourceQuota as the graph holds it, with its location.
	ResourceQuota = Object[corev1.ResourceQuota]
	// LimitRange is a LimitRange as the graph holds it, with its location.
	LimitRange = Object[corev1.LimitRange]
	// ServiceAccount is a ServiceAccount as the graph holds it, with its location.
	ServiceAccount = Object[corev1.ServiceAccount]
	// ConfigMap is a ConfigMap as the graph holds it, with its location.
	ConfigMap = Object[corev1.ConfigMap]
	// Secret is a Secret as the graph holds it, with its location.
	Secret = Object[corev1.Secret]
	// Namespace is a Namespace as the graph holds it, with its location.
	Namespace = Object[corev1.Namespace]
	// PriorityClass is a PriorityClass as the graph holds it, with its location.
	PriorityClass = Object[schedulingv1.PriorityClass]
	// ValidatingWebhookConfig is a ValidatingWebhookConfiguration as the graph holds it, with its location.
	ValidatingWebhookConfig = Object[admissionregistrationv1.ValidatingWebhookConfiguration]
	// MutatingWebhookConfig is a MutatingWebhookConfiguration as the graph holds it, with its location.
	MutatingWebhookConfig = Object[admissionregistrationv1.MutatingWebhookConfiguration]
)
