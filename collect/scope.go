package collect

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"podflow.dev/podflow/bundle"
)

// chain selects, from full namespace lists, what explains one pod: the pod, its owners
// (Pod→ReplicaSet→Deployment with the Deployment's other ReplicaSets for rollout
// history, Pod→Job→CronJob, StatefulSet, DaemonSet), the events of all of those, its
// node and Lease, the Services that select it with their EndpointSlices, its claims and
// volumes, the ConfigMaps and Secrets it references, its ServiceAccount, the quotas and
// limit ranges of its namespace, and the disruption budgets and network policies that
// select it. Cluster-wide configuration (storage classes, webhooks...) is kept whole.
type chain struct {
	pod *corev1.Pod
}

// podChain reads the selected pod; a pod that cannot be read fails the collection,
// since there would be nothing to scope by.
func (c *collector) podChain(ctx context.Context) (*chain, error) {
	ns, name, err := bundle.SplitPodName(c.opts.Pod)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	p, err := c.client.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("pod %s/%s not found", ns, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
	}
	return &chain{pod: p}, nil
}

// filter drops from every list what is not part of the chain.
func (ch *chain) filter(lists []*listing) {
	byKind := map[string][]runtime.Object{}
	for _, l := range lists {
		if l.err == nil {
			byKind[l.src.kind] = append(byKind[l.src.kind], l.items...)
		}
	}
	keep := ch.selectors(byKind)
	kept := map[types.UID]bool{}
	keptNames := map[string]bool{}
	for _, l := range lists {
		pred, ok := keep[l.src.kind]
		if l.err != nil || l.src.kind == bundle.KindEvents {
			continue
		}
		if ok {
			l.items = filterItems(l.items, pred)
		}
		for _, item := range l.items {
			if m, err := meta.Accessor(item); err == nil {
				kept[m.GetUID()] = true
				keptNames[l.src.itemKind+"/"+m.GetName()] = true
			}
		}
	}
	for _, l := range lists {
		if l.err == nil && l.src.kind == bundle.KindEvents {
			l.items = filterItems(l.items, func(obj runtime.Object) bool {
				ev, ok := obj.(*corev1.Event)
				if !ok {
					return false
				}
				io := ev.InvolvedObject
				if io.UID != "" {
					return kept[io.UID]
				}
				return keptNames[io.Kind+"/"+io.Name]
			})
		}
	}
}

func filterItems(items []runtime.Object, keep func(runtime.Object) bool) []runtime.Object {
	out := items[:0]
	for _, item := range items {
		if keep(item) {
			out = append(out, item)
		}
	}
	return out
}

// selectors builds, per kind, the test an object must pass to stay in the bundle. Kinds
// without an entry are kept whole.
func (ch *chain) selectors(byKind map[string][]runtime.Object) map[string]func(runtime.Object) bool {
	p := ch.pod
	podLabels := labels.Set(p.Labels)
	owners := ownerChain(p, byKind)
	claims := claimNames(p)
	configMaps, secrets := referencedConfig(p)
	services := map[string]bool{}
	for _, obj := range byKind[bundle.KindServices] {
		if s, ok := obj.(*corev1.Service); ok && len(s.Spec.Selector) > 0 &&
			labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			services[s.Name] = true
		}
	}
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	byUID := func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		return err == nil && owners[m.GetUID()]
	}
	keep := map[string]func(runtime.Object) bool{
		bundle.KindPods: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.Pod)
			return ok && o.UID == p.UID
		},
		bundle.KindReplicaSets:  byUID,
		bundle.KindDeployments:  byUID,
		bundle.KindStatefulSets: byUID,
		bundle.KindDaemonSets:   byUID,
		bundle.KindJobs:         byUID,
		bundle.KindCronJobs:     byUID,
		bundle.KindServices: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.Service)
			return ok && services[o.Name]
		},
		bundle.KindEndpointSlices: func(obj runtime.Object) bool {
			o, ok := obj.(*discoveryv1.EndpointSlice)
			return ok && services[o.Labels[discoveryv1.LabelServiceName]]
		},
		bundle.KindPVCs: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.PersistentVolumeClaim)
			return ok && claims[o.Name]
		},
		bundle.KindPVs: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.PersistentVolume)
			if !ok || o.Spec.ClaimRef == nil {
				return false
			}
			return o.Spec.ClaimRef.Namespace == p.Namespace && claims[o.Spec.ClaimRef.Name]
		},
		bundle.KindConfigMaps: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.ConfigMap)
			return ok && configMaps[o.Name]
		},
		bundle.KindSecrets: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.Secret)
			return ok && secrets[o.Name]
		},
		bundle.KindServiceAccounts: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.ServiceAccount)
			return ok && o.Name == sa
		},
		bundle.KindPodDisruptionBudgets: func(obj runtime.Object) bool {
			o, ok := obj.(*policyv1.PodDisruptionBudget)
			return ok && selects(o.Spec.Selector, podLabels)
		},
		bundle.KindNetworkPolicies: func(obj runtime.Object) bool {
			o, ok := obj.(*networkingv1.NetworkPolicy)
			return ok && selects(&o.Spec.PodSelector, podLabels)
		},
		bundle.KindNamespaces: func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.Namespace)
			return ok && o.Name == p.Namespace
		},
	}
	// An unscheduled pod's question is which node could take it, so every node stays.
	if node := p.Spec.NodeName; node != "" {
		keep[bundle.KindNodes] = func(obj runtime.Object) bool {
			o, ok := obj.(*corev1.Node)
			return ok && o.Name == node
		}
		keep[bundle.KindNodeLeases] = func(obj runtime.Object) bool {
			o, ok := obj.(*coordinationv1.Lease)
			return ok && o.Name == node
		}
	}
	return keep
}

func selects(sel *metav1.LabelSelector, set labels.Set) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(set)
}

// ownerChain follows owner references up from the pod and returns the UIDs of every
// owner found, plus all ReplicaSets of an owning Deployment.
func ownerChain(p *corev1.Pod, byKind map[string][]runtime.Object) map[types.UID]bool {
	type owned struct{ refs []metav1.OwnerReference }
	index := map[types.UID]owned{}
	for _, kind := range []string{bundle.KindReplicaSets, bundle.KindDeployments, bundle.KindStatefulSets,
		bundle.KindDaemonSets, bundle.KindJobs, bundle.KindCronJobs} {
		for _, obj := range byKind[kind] {
			if m, err := meta.Accessor(obj); err == nil {
				index[m.GetUID()] = owned{refs: m.GetOwnerReferences()}
			}
		}
	}
	found := map[types.UID]bool{}
	queue := append([]metav1.OwnerReference(nil), p.OwnerReferences...)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		o, ok := index[ref.UID]
		if !ok || found[ref.UID] {
			continue
		}
		found[ref.UID] = true
		queue = append(queue, o.refs...)
	}
	for _, obj := range byKind[bundle.KindDeployments] {
		d, ok := obj.(*appsv1.Deployment)
		if !ok || !found[d.UID] {
			continue
		}
		for _, rsObj := range byKind[bundle.KindReplicaSets] {
			if rs, ok := rsObj.(*appsv1.ReplicaSet); ok && ownedBy(rs.OwnerReferences, d.UID) {
				found[rs.UID] = true
			}
		}
	}
	// Jobs of an owning CronJob are its run history, as ReplicaSets are a Deployment's.
	for _, obj := range byKind[bundle.KindCronJobs] {
		cj, ok := obj.(*batchv1.CronJob)
		if !ok || !found[cj.UID] {
			continue
		}
		for _, jObj := range byKind[bundle.KindJobs] {
			if j, ok := jObj.(*batchv1.Job); ok && ownedBy(j.OwnerReferences, cj.UID) {
				found[j.UID] = true
			}
		}
	}
	return found
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// claimNames lists the PersistentVolumeClaims a pod mounts, including the claims that
// generic ephemeral volumes create under the name <pod>-<volume>.
func claimNames(p *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out[v.PersistentVolumeClaim.ClaimName] = true
		case v.Ephemeral != nil:
			out[p.Name+"-"+v.Name] = true
		}
	}
	return out
}

// referencedConfig lists the ConfigMaps and Secrets a pod reads through volumes,
// environment and image pull secrets.
func referencedConfig(p *corev1.Pod) (configMaps, secrets map[string]bool) {
	configMaps, secrets = map[string]bool{}, map[string]bool{}
	for _, v := range p.Spec.Volumes {
		if v.ConfigMap != nil {
			configMaps[v.ConfigMap.Name] = true
		}
		if v.Secret != nil {
			secrets[v.Secret.SecretName] = true
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					configMaps[s.ConfigMap.Name] = true
				}
				if s.Secret != nil {
					secrets[s.Secret.Name] = true
				}
			}
		}
	}
	for _, ref := range p.Spec.ImagePullSecrets {
		secrets[ref.Name] = true
	}
	env := func(envs []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, e := range envs {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				configMaps[r.Name] = true
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				secrets[r.Name] = true
			}
		}
		for _, f := range from {
			if f.ConfigMapRef != nil {
				configMaps[f.ConfigMapRef.Name] = true
			}
			if f.SecretRef != nil {
				secrets[f.SecretRef.Name] = true
			}
		}
	}
	for _, ct := range p.Spec.InitContainers {
		env(ct.Env, ct.EnvFrom)
	}
	for _, ct := range p.Spec.Containers {
		env(ct.Env, ct.EnvFrom)
	}
	for _, ct := range p.Spec.EphemeralContainers {
		env(ct.Env, ct.EnvFrom)
	}
	return configMaps, secrets
}
