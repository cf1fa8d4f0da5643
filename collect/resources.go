package collect

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"podflow.dev/podflow/bundle"
)

// PageSize bounds each list response, so a large cluster is read in pieces the API
// server can serve without building one huge response.
const PageSize = 500

// NodeLeaseNamespace holds the Lease every kubelet renews as its heartbeat.
const NodeLeaseNamespace = bundle.NodeLeaseNamespace

// ValueSizesAnnotation is set on ConfigMaps and Secrets in a bundle: their values are
// dropped, and this JSON object maps each key to the size of its value in bytes.
const ValueSizesAnnotation = "podflow.dev/value-sizes"

// resourceSource is one kind of object the collector lists: where it goes in the
// bundle, which API resource it reads (the shipped RBAC role is tested against this
// table) and how to list it with a typed client.
type resourceSource struct {
	kind     string // bundle list name, from bundle.Lists
	resource schema.GroupVersionResource
	itemKind string
	// namespaced kinds are written one file per namespace.
	namespaced bool
	// namespace, when set, is the one namespace a cluster-level list reads (node Leases).
	namespace string
	list      listFunc
}

type listFunc func(ctx context.Context, c kubernetes.Interface, namespace string, opts metav1.ListOptions) (runtime.Object, error)

// listCaller is the List method every typed client shares.
type listCaller[L any] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
}

func lister[L runtime.Object](client func(c kubernetes.Interface, namespace string) listCaller[L]) listFunc {
	return func(ctx context.Context, c kubernetes.Interface, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
		l, err := client(c, namespace).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// listers lists each bundle list with a typed client, by list name; what each list
// holds comes from bundle.Lists.
var listers = map[string]listFunc{
	bundle.KindNamespaces: lister(func(c kubernetes.Interface, _ string) listCaller[*corev1.NamespaceList] {
		return c.CoreV1().Namespaces()
	}),
	bundle.KindNodes: lister(func(c kubernetes.Interface, _ string) listCaller[*corev1.NodeList] { return c.CoreV1().Nodes() }),
	bundle.KindPVs: lister(func(c kubernetes.Interface, _ string) listCaller[*corev1.PersistentVolumeList] {
		return c.CoreV1().PersistentVolumes()
	}),
	bundle.KindStorageClasses: lister(func(c kubernetes.Interface, _ string) listCaller[*storagev1.StorageClassList] {
		return c.StorageV1().StorageClasses()
	}),
	bundle.KindPriorityClasses: lister(func(c kubernetes.Interface, _ string) listCaller[*schedulingv1.PriorityClassList] {
		return c.SchedulingV1().PriorityClasses()
	}),
	bundle.KindValidatingWebhooks: lister(func(c kubernetes.Interface, _ string) listCaller[*admissionregistrationv1.ValidatingWebhookConfigurationList] {
		return c.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	}),
	bundle.KindMutatingWebhooks: lister(func(c kubernetes.Interface, _ string) listCaller[*admissionregistrationv1.MutatingWebhookConfigurationList] {
		return c.AdmissionregistrationV1().MutatingWebhookConfigurations()
	}),
	bundle.KindCSIDrivers: lister(func(c kubernetes.Interface, _ string) listCaller[*storagev1.CSIDriverList] {
		return c.StorageV1().CSIDrivers()
	}),
	bundle.KindNodeLeases: lister(func(c kubernetes.Interface, ns string) listCaller[*coordinationv1.LeaseList] {
		return c.CoordinationV1().Leases(ns)
	}),
	bundle.KindRuntimeClasses: lister(func(c kubernetes.Interface, _ string) listCaller[*nodev1.RuntimeClassList] {
		return c.NodeV1().RuntimeClasses()
	}),
	bundle.KindPods: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.PodList] { return c.CoreV1().Pods(ns) }),
	bundle.KindDeployments: lister(func(c kubernetes.Interface, ns string) listCaller[*appsv1.DeploymentList] {
		return c.AppsV1().Deployments(ns)
	}),
	bundle.KindReplicaSets: lister(func(c kubernetes.Interface, ns string) listCaller[*appsv1.ReplicaSetList] {
		return c.AppsV1().ReplicaSets(ns)
	}),
	bundle.KindStatefulSets: lister(func(c kubernetes.Interface, ns string) listCaller[*appsv1.StatefulSetList] {
		return c.AppsV1().StatefulSets(ns)
	}),
	bundle.KindDaemonSets: lister(func(c kubernetes.Interface, ns string) listCaller[*appsv1.DaemonSetList] {
		return c.AppsV1().DaemonSets(ns)
	}),
	bundle.KindJobs: lister(func(c kubernetes.Interface, ns string) listCaller[*batchv1.JobList] { return c.BatchV1().Jobs(ns) }),
	bundle.KindCronJobs: lister(func(c kubernetes.Interface, ns string) listCaller[*batchv1.CronJobList] {
		return c.BatchV1().CronJobs(ns)
	}),
	bundle.KindServices: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.ServiceList] {
		return c.CoreV1().Services(ns)
	}),
	bundle.KindEndpointSlices: lister(func(c kubernetes.Interface, ns string) listCaller[*discoveryv1.EndpointSliceList] {
		return c.DiscoveryV1().EndpointSlices(ns)
	}),
	bundle.KindEvents: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.EventList] { return c.CoreV1().Events(ns) }),
	bundle.KindPVCs: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.PersistentVolumeClaimList] {
		return c.CoreV1().PersistentVolumeClaims(ns)
	}),
	bundle.KindResourceQuotas: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.ResourceQuotaList] {
		return c.CoreV1().ResourceQuotas(ns)
	}),
	bundle.KindLimitRanges: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.LimitRangeList] {
		return c.CoreV1().LimitRanges(ns)
	}),
	bundle.KindServiceAccounts: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.ServiceAccountList] {
		return c.CoreV1().ServiceAccounts(ns)
	}),
	bundle.KindConfigMaps: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.ConfigMapList] {
		return c.CoreV1().ConfigMaps(ns)
	}),
	bundle.KindSecrets: lister(func(c kubernetes.Interface, ns string) listCaller[*corev1.SecretList] { return c.CoreV1().Secrets(ns) }),
	bundle.KindLeases: lister(func(c kubernetes.Interface, ns string) listCaller[*coordinationv1.LeaseList] {
		return c.CoordinationV1().Leases(ns)
	}),
	bundle.KindPodDisruptionBudgets: lister(func(c kubernetes.Interface, ns string) listCaller[*policyv1.PodDisruptionBudgetList] {
		return c.PolicyV1().PodDisruptionBudgets(ns)
	}),
	bundle.KindNetworkPolicies: lister(func(c kubernetes.Interface, ns string) listCaller[*networkingv1.NetworkPolicyList] {
		return c.NetworkingV1().NetworkPolicies(ns)
	}),
	bundle.KindIngresses: lister(func(c kubernetes.Interface, ns string) listCaller[*networkingv1.IngressList] {
		return c.NetworkingV1().Ingresses(ns)
	}),
	bundle.KindHPAs: lister(func(c kubernetes.Interface, ns string) listCaller[*autoscalingv2.HorizontalPodAutoscalerList] {
		return c.AutoscalingV2().HorizontalPodAutoscalers(ns)
	}),
	bundle.KindRoles: lister(func(c kubernetes.Interface, ns string) listCaller[*rbacv1.RoleList] { return c.RbacV1().Roles(ns) }),
	bundle.KindRoleBindings: lister(func(c kubernetes.Interface, ns string) listCaller[*rbacv1.RoleBindingList] {
		return c.RbacV1().RoleBindings(ns)
	}),
	bundle.KindClusterRoles: lister(func(c kubernetes.Interface, _ string) listCaller[*rbacv1.ClusterRoleList] {
		return c.RbacV1().ClusterRoles()
	}),
	bundle.KindClusterRoleBinds: lister(func(c kubernetes.Interface, _ string) listCaller[*rbacv1.ClusterRoleBindingList] {
		return c.RbacV1().ClusterRoleBindings()
	}),
}

// resourceSources is every list the collector reads, in bundle.Lists order.
var resourceSources = func() []resourceSource {
	var out []resourceSource
	for _, l := range bundle.Lists() {
		out = append(out, resourceSource{kind: l.Name, resource: gvr(l.Group, l.Version, l.Resource), itemKind: l.Kind,
			namespaced: l.Namespaced, namespace: l.Namespace, list: listers[l.Name]})
	}
	return out
}()

func (s *resourceSource) gvk() schema.GroupVersionKind {
	return s.resource.GroupVersion().WithKind(s.itemKind)
}

// describe names what a list reads, for error messages.
func (s *resourceSource) describe(namespace string) string {
	res := s.resource.GroupResource().String()
	if namespace == "" {
		if s.namespaced {
			return res + " in all namespaces"
		}
		return res
	}
	return fmt.Sprintf("%s in namespace %q", res, namespace)
}

// listAll reads every page of one list into memory (a pod's chain, the cluster-level
// lists: what is filtered or small). When the continue token expires, only a fresh,
// unpaginated list can still give a consistent answer, so that is what is read.
func listAll(ctx context.Context, c kubernetes.Interface, src *resourceSource, namespace string, opts metav1.ListOptions) ([]runtime.Object, string, error) {
	var (
		items []runtime.Object
		rv    string
	)
	err := pageAll(ctx, c, src, namespace, opts, func(pageRV string, page []runtime.Object) error {
		items, rv = append(items, page...), pageRV
		return nil
	}, func(opts *metav1.ListOptions) {
		opts.Limit = 0
		items = items[:0]
	})
	if err != nil {
		return nil, "", err
	}
	return items, rv, nil
}

// pageAll reads one list PageSize items at a time and hands each page to onPage, with
// the list's resourceVersion. Each page is cleaned (see prepare) as soon as it arrives,
// so Secret values never outlive the call that returned them. When the continue token
// outlives the API server's compaction window the list is read again from a fresh
// snapshot: restart is called first, to drop or keep what the earlier pages gave and
// to adjust the options of the new list.
func pageAll(ctx context.Context, c kubernetes.Interface, src *resourceSource, namespace string, opts metav1.ListOptions,
	onPage func(rv string, items []runtime.Object) error, restart func(opts *metav1.ListOptions)) error {
	opts.Limit = PageSize
	opts.Continue = ""
	seen := map[string]bool{}
	for {
		obj, err := src.list(ctx, c, namespace, opts)
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				opts.Continue = ""
				restart(&opts)
				clear(seen)
				continue
			}
			return fmt.Errorf("list %s: %w", src.describe(namespace), err)
		}
		page, err := meta.ExtractList(obj)
		if err != nil {
			return fmt.Errorf("list %s: read items: %w", src.describe(namespace), err)
		}
		for _, item := range page {
			if err := prepare(src, item); err != nil {
				return fmt.Errorf("list %s: %w", src.describe(namespace), err)
			}
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return fmt.Errorf("list %s: read list metadata: %w", src.describe(namespace), err)
		}
		if err := onPage(lm.GetResourceVersion(), page); err != nil {
			return fmt.Errorf("list %s: %w", src.describe(namespace), err)
		}
		next := lm.GetContinue()
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("list %s: the API server returned continue token %q twice", src.describe(namespace), next)
		}
		seen[next] = true
		opts.Continue = next
	}
}

// prepare makes one listed object ready for the bundle: the typed client leaves
// apiVersion and kind empty, managedFields are noise for diagnosis, and ConfigMap and
// Secret values are replaced by their sizes.
func prepare(src *resourceSource, obj runtime.Object) error {
	obj.GetObjectKind().SetGroupVersionKind(src.gvk())
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("read object metadata: %w", err)
	}
	m.SetManagedFields(nil)
	switch o := obj.(type) {
	case *corev1.Secret:
		return keysOnlySecret(o)
	case *corev1.ConfigMap:
		return keysOnlyConfigMap(o)
	}
	return nil
}

// keysOnlySecret keeps a Secret's metadata, type and key names. The values are released
// here: the returned object shares no memory with them.
func keysOnlySecret(s *corev1.Secret) error {
	sizes := make(map[string]int, len(s.Data)+len(s.StringData))
	keys := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		sizes[k], keys[k] = len(v), []byte{}
	}
	for k, v := range s.StringData {
		sizes[k], keys[k] = len(v), []byte{}
	}
	s.Data, s.StringData = keys, nil
	return setValueSizes(&s.ObjectMeta, sizes)
}

// keysOnlyConfigMap keeps a ConfigMap's key names and replaces each value by nothing.
func keysOnlyConfigMap(cm *corev1.ConfigMap) error {
	sizes := make(map[string]int, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		sizes[k] = len(v)
		cm.Data[k] = ""
	}
	for k, v := range cm.BinaryData {
		sizes[k] = len(v)
		cm.BinaryData[k] = []byte{}
	}
	return setValueSizes(&cm.ObjectMeta, sizes)
}

// setValueSizes records value sizes and drops the last-applied annotation, which holds a
// full copy of the values as kubectl applied them.
func setValueSizes(m *metav1.ObjectMeta, sizes map[string]int) error {
	delete(m.Annotations, corev1.LastAppliedConfigAnnotation)
	if len(sizes) == 0 {
		return nil
	}
	data, err := json.Marshal(sizes)
	if err != nil {
		return fmt.Errorf("encode value sizes of %s/%s: %w", m.Namespace, m.Name, err)
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[ValueSizesAnnotation] = string(data)
	return nil
}

// listDocument is the JSON written for each list file: a typed List, as kubectl
// prints it, with apiVersion and kind on the list and on every item.
type listDocument struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   metav1.ListMeta  `json:"metadata"`
	Items      []runtime.Object `json:"items"`
}

func newListDocument(src *resourceSource, rv string, items []runtime.Object) listDocument {
	if items == nil {
		items = []runtime.Object{}
	}
	return listDocument{
		APIVersion: src.resource.GroupVersion().String(),
		Kind:       src.itemKind + "List",
		Metadata:   metav1.ListMeta{ResourceVersion: rv},
		Items:      items,
	}
}

// byNamespace splits items by namespace; every namespace in want gets an entry, so an
// empty list is written as evidence of absence.
func byNamespace(items []runtime.Object, want []string) (map[string][]runtime.Object, error) {
	out := make(map[string][]runtime.Object, len(want))
	for _, ns := range want {
		out[ns] = nil
	}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, fmt.Errorf("read object metadata: %w", err)
		}
		out[m.GetNamespace()] = append(out[m.GetNamespace()], item)
	}
	return out, nil
}
