// Package bundle defines podflow's bundle format (version 1): where every piece of
// evidence lives inside a bundle, the manifest, and how bundles are written, read and
// verified. It is the only package that spells bundle paths.
package bundle

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Paths of the top-level files of a bundle.
const (
	ManifestPath       = "podflow.json"
	VersionMarkerPath  = "version.yaml"
	ClusterVersionPath = "cluster-info/cluster_version.json"
	ClusterResources   = "cluster-resources"
	NodesDir           = "nodes"
	// ImportReportPath records, in a bundle made from another tool's output, what each
	// input file was taken for and where every produced file came from.
	ImportReportPath = "import-report.json"
)

// Cluster-scoped resource lists, one JSON List each under cluster-resources/.
const (
	KindNamespaces         = "namespaces"
	KindNodes              = "nodes"
	KindPVs                = "pvs"
	KindStorageClasses     = "storage-classes"
	KindPriorityClasses    = "priorityclasses"
	KindValidatingWebhooks = "validating-webhook-configurations"
	KindMutatingWebhooks   = "mutating-webhook-configurations"
	KindCSIDrivers         = "csidrivers"
	KindNodeLeases         = "node-leases"
	KindRuntimeClasses     = "runtimeclasses"
	KindClusterRoles       = "clusterroles"
	KindClusterRoleBinds   = "clusterrolebindings"
)

// Namespaced resource lists, one JSON List per namespace under cluster-resources/<kind>/<ns>.json.
const (
	KindPods                 = "pods"
	KindDeployments          = "deployments"
	KindReplicaSets          = "replicasets"
	KindStatefulSets         = "statefulsets"
	KindDaemonSets           = "daemonsets"
	KindJobs                 = "jobs"
	KindCronJobs             = "cronjobs"
	KindServices             = "services"
	KindEndpointSlices       = "endpointslices"
	KindEvents               = "events"
	KindPVCs                 = "pvcs"
	KindResourceQuotas       = "resource-quota"
	KindLimitRanges          = "limitranges"
	KindServiceAccounts      = "serviceaccounts"
	KindConfigMaps           = "configmaps"
	KindSecrets              = "secrets"
	KindLeases               = "leases"
	KindPodDisruptionBudgets = "pod-disruption-budgets"
	KindNetworkPolicies      = "network-policy"
	KindIngresses            = "ingress"
	KindHPAs                 = "horizontalpodautoscalers"
	KindRoles                = "roles"
	KindRoleBindings         = "rolebindings"
)

// ListUse says who reads a resource list of a bundle.
type ListUse int

const (
	// ReadByAnalyze lists are decoded into analyze's evidence graph.
	ReadByAnalyze ListUse = iota + 1
	// CompatibilityOnly lists are collected for people reading the bundle and for
	// viewers of the Troubleshoot layout; analyze does not read them.
	CompatibilityOnly
)

// NodeLeaseNamespace holds the Lease every kubelet renews as its heartbeat.
const NodeLeaseNamespace = "kube-node-lease"

// ResourceList describes one resource list of a bundle. Lists is the one table of
// them: the collector, the importer, redaction and analyze derive theirs from it.
type ResourceList struct {
	// Name is the list's name in the layout, e.g. "storage-classes".
	Name string
	// Group, Version and Resource name the API resource it is listed from.
	Group, Version, Resource string
	// Kind is the API kind of its items, e.g. "StorageClass".
	Kind string
	// Namespaced lists are written one file per namespace under cluster-resources/<name>/.
	Namespaced bool
	// Namespace, for a cluster-level list, is the one namespace it is read from.
	Namespace string
	// Describe names what the list holds for people, in skip reasons and coverage.
	Describe string
	Use      ListUse
}

// APIVersion is the list's group/version as objects spell it, e.g. "storage.k8s.io/v1".
func (l ResourceList) APIVersion() string {
	if l.Group == "" {
		return l.Version
	}
	return l.Group + "/" + l.Version
}

// lists is every resource list of the format, cluster-scoped ones first, each group in
// the order it is collected.
var lists = []ResourceList{
	{Name: KindNamespaces, Version: "v1", Resource: "namespaces", Kind: "Namespace", Describe: "namespaces", Use: ReadByAnalyze},
	{Name: KindNodes, Version: "v1", Resource: "nodes", Kind: "Node", Describe: "node objects", Use: ReadByAnalyze},
	{Name: KindPVs, Version: "v1", Resource: "persistentvolumes", Kind: "PersistentVolume", Describe: "persistentvolumes", Use: ReadByAnalyze},
	{Name: KindStorageClasses, Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Kind: "StorageClass",
		Describe: "storageclasses", Use: ReadByAnalyze},
	{Name: KindPriorityClasses, Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Kind: "PriorityClass",
		Describe: "priorityclasses", Use: ReadByAnalyze},
	{Name: KindValidatingWebhooks, Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations",
		Kind: "ValidatingWebhookConfiguration", Describe: "validating webhook configurations", Use: ReadByAnalyze},
	{Name: KindMutatingWebhooks, Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations",
		Kind: "MutatingWebhookConfiguration", Describe: "mutating webhook configurations", Use: ReadByAnalyze},
	{Name: KindCSIDrivers, Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers", Kind: "CSIDriver",
		Describe: "CSI drivers", Use: CompatibilityOnly},
	{Name: KindNodeLeases, Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease",
		Namespace: NodeLeaseNamespace, Describe: "node leases", Use: ReadByAnalyze},
	{Name: KindRuntimeClasses, Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Kind: "RuntimeClass",
		Describe: "runtime classes", Use: CompatibilityOnly},
	{Name: KindClusterRoles, Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole",
		Describe: "cluster roles", Use: CompatibilityOnly},
	{Name: KindClusterRoleBinds, Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings",
		Kind: "ClusterRoleBinding", Describe: "cluster role bindings", Use: CompatibilityOnly},

	{Name: KindPods, Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Describe: "pods", Use: ReadByAnalyze},
	{Name: KindDeployments, Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true,
		Describe: "deployments", Use: ReadByAnalyze},
	{Name: KindReplicaSets, Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true,
		Describe: "replicasets", Use: ReadByAnalyze},
	{Name: KindStatefulSets, Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true,
		Describe: "statefulsets", Use: ReadByAnalyze},
	{Name: KindDaemonSets, Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true,
		Describe: "daemonsets", Use: ReadByAnalyze},
	{Name: KindJobs, Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", Namespaced: true, Describe: "jobs", Use: ReadByAnalyze},
	{Name: KindCronJobs, Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob", Namespaced: true,
		Describe: "cronjobs", Use: ReadByAnalyze},
	{Name: KindServices, Version: "v1", Resource: "services", Kind: "Service", Namespaced: true, Describe: "services", Use: ReadByAnalyze},
	{Name: KindEndpointSlices, Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Kind: "EndpointSlice",
		Namespaced: true, Describe: "endpointslices", Use: ReadByAnalyze},
	{Name: KindEvents, Version: "v1", Resource: "events", Kind: "Event", Namespaced: true, Describe: "events", Use: ReadByAnalyze},
	{Name: KindPVCs, Version: "v1", Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true,
		Describe: "persistentvolumeclaims", Use: ReadByAnalyze},
	{Name: KindResourceQuotas, Version: "v1", Resource: "resourcequotas", Kind: "ResourceQuota", Namespaced: true,
		Describe: "resourcequotas", Use: ReadByAnalyze},
	{Name: KindLimitRanges, Version: "v1", Resource: "limitranges", Kind: "LimitRange", Namespaced: true,
		Describe: "limitranges", Use: ReadByAnalyze},
	{Name: KindServiceAccounts, Version: "v1", Resource: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true,
		Describe: "serviceaccounts", Use: ReadByAnalyze},
	{Name: KindConfigMaps, Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true,
		Describe: "configmaps", Use: ReadByAnalyze},
	{Name: KindSecrets, Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true,
		Describe: "secrets (metadata)", Use: ReadByAnalyze},
	{Name: KindLeases, Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true,
		Describe: "leases", Use: CompatibilityOnly},
	{Name: KindPodDisruptionBudgets, Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget",
		Namespaced: true, Describe: "pod disruption budgets", Use: CompatibilityOnly},
	{Name: KindNetworkPolicies, Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies", Kind: "NetworkPolicy",
		Namespaced: true, Describe: "network policies", Use: CompatibilityOnly},
	{Name: KindIngresses, Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress",
		Namespaced: true, Describe: "ingresses", Use: CompatibilityOnly},
	{Name: KindHPAs, Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler",
		Namespaced: true, Describe: "horizontal pod autoscalers", Use: CompatibilityOnly},
	{Name: KindRoles, Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles", Kind: "Role",
		Namespaced: true, Describe: "roles", Use: CompatibilityOnly},
	{Name: KindRoleBindings, Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings", Kind: "RoleBinding",
		Namespaced: true, Describe: "role bindings", Use: CompatibilityOnly},
}

// Lists returns every resource list of the format, cluster-scoped ones first, each
// group in the order it is collected.
func Lists() []ResourceList { return slices.Clone(lists) }

// ListNamed returns the list a layout name stands for, e.g. "pods".
func ListNamed(name string) (ResourceList, bool) {
	i := slices.IndexFunc(lists, func(l ResourceList) bool { return l.Name == name })
	if i < 0 {
		return ResourceList{}, false
	}
	return lists[i], true
}

// ListOfKind returns the list that holds objects of an API kind, e.g. "Pod". A list
// read from one namespace only (node Leases) is a view of another and never the answer.
func ListOfKind(kind string) (ResourceList, bool) {
	i := slices.IndexFunc(lists, func(l ResourceList) bool { return l.Kind == kind && l.Namespace == "" })
	if i < 0 {
		return ResourceList{}, false
	}
	return lists[i], true
}

// ClusterScopedKinds lists the cluster-scoped lists in the order they are collected.
var ClusterScopedKinds = listNames(false)

// NamespacedKinds lists the per-namespace lists in the order they are collected.
var NamespacedKinds = listNames(true)

func listNames(namespaced bool) []string {
	var out []string
	for _, l := range lists {
		if l.Namespaced == namespaced {
			out = append(out, l.Name)
		}
	}
	return out
}

// ClusterResourcePath is the path of a cluster-scoped list, e.g. cluster-resources/nodes.json.
func ClusterResourcePath(kind string) string {
	return path.Join(ClusterResources, kind+".json")
}

// NamespacedResourcePath is the path of one namespace's list of a kind.
func NamespacedResourcePath(kind, namespace string) string {
	return path.Join(ClusterResources, kind, namespace+".json")
}

// ErrorsPath is where a source that failed records its error, in the Troubleshoot layout.
func ErrorsPath(kind string) string {
	return path.Join(ClusterResources, kind+"-errors.json")
}

// LogPath is the path of a container log; previous selects the log of the previous instance.
func LogPath(namespace, pod, container string, previous bool) string {
	name := container + ".log"
	if previous {
		name = container + "-previous.log"
	}
	return path.Join(ClusterResources, "pods", "logs", namespace, pod, name)
}

// Node evidence files, relative to nodes/<node>/.
const (
	NodeKubeletLog     = "kubelet.log"
	NodeRuntimeLog     = "containerd.log"
	NodeKubeletConfig  = "kubelet-config.yaml"
	NodeCRIPods        = "crictl/pods.json"
	NodeCRIContainers  = "crictl/ps.json"
	NodeCRIImages      = "crictl/images.json"
	NodeDmesg          = "dmesg.log"
	NodeCollection     = "collection.json"
	nodeCRIInspectDir  = "crictl/inspect"
	nodeCRIInspectPDir = "crictl/inspectp"
)

// NodePath is the path of one node evidence file, e.g. NodePath("n1", NodeKubeletLog).
func NodePath(node, file string) string {
	return path.Join(NodesDir, nodeSegment(node), file)
}

// nodeSegment is a node's name as a path segment. No real node is named "." or
// "..", but evidence may say so; as a segment either would vanish into nodes/ or
// its parent, with the evidence filed under it, so they are written %2E and %2E%2E
// (which no node name can be either) and ParsePath reads them back.
func nodeSegment(node string) string {
	switch node {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return node
}

func nodeFromSegment(seg string) string {
	switch seg {
	case "%2E":
		return "."
	case "%2E%2E":
		return ".."
	}
	return seg
}

// NodeCRIInspectPath is the path of `crictl inspect` output for one container.
func NodeCRIInspectPath(node, containerID string) string {
	return path.Join(NodesDir, nodeSegment(node), nodeCRIInspectDir, containerID+".json")
}

// NodeCRIInspectPodPath is the path of `crictl inspectp` output for one sandbox.
func NodeCRIInspectPodPath(node, podID string) string {
	return path.Join(NodesDir, nodeSegment(node), nodeCRIInspectPDir, podID+".json")
}

// FragmentsDir holds evidence an import read but could not attribute to a pod or a
// node: a container log that names no pod, node-agent lines (kubelet, runtime, CNI,
// kernel) of an unknown node, text podflow did not recognise. Each file is one
// contiguous block of one input file (its import-report origin gives the line offset),
// so every line can still be cited where the user pasted it.
const FragmentsDir = "fragments"

// Kinds of fragment, the folder under FragmentsDir.
const (
	FragmentLog     = "logs"    // a container's log; the pod is not known
	FragmentJournal = "journal" // node-agent or kernel lines; the node is not known
	FragmentText    = "text"    // lines read but not understood
)

// FragmentPath is the path of one fragment file, e.g. FragmentPath(FragmentLog, "app-L12.log").
func FragmentPath(kind, name string) string {
	return path.Join(FragmentsDir, kind, name)
}

// PartialAnnotation marks an object an import built from a fragment (an event's OBJECT
// column, a journal's pod="ns/name", a describe State block alone) rather than from the
// object itself. Its value lists, comma-separated, what the evidence did not show:
// "namespace" (the namespace is a guess), "spec", "status", "name", and "cut" (a paste
// left parts of the object out, so a field it does not show may be there). Analysis reasons only from
// what is known and says what is not.
const PartialAnnotation = "podflow.dev/partial"

// KubectlRowAnnotation holds, on a pod imported from a `kubectl get pods` row, the
// row's READY, STATUS and RESTARTS cells as JSON (KubectlRow). The row names none of
// the pod's containers, so the pod has none; serve prints the row again from these
// cells, with containers and statuses that kubectl's printer reads back as the same.
const KubectlRowAnnotation = "podflow.dev/kubectl-get-pods"

// KubectlNodeStatusAnnotation holds, on a node imported from a `kubectl get nodes` row,
// the row's STATUS cell ("NotReady,SchedulingDisabled"): kubectl prints NotReady for a
// Ready condition that is False or Unknown, so the node gets no condition from it.
const KubectlNodeStatusAnnotation = "podflow.dev/kubectl-get-nodes"

// KubectlRow is the value of KubectlRowAnnotation.
type KubectlRow struct {
	Ready    string `json:"ready"`
	Status   string `json:"status"`
	Restarts string `json:"restarts,omitempty"`
}

// DeletionAnnotation says what an import from `kubectl describe pod` knows of a pod's
// deletion, which describe prints without the deletionTimestamp: "terminating 5m16s"
// for "Status: Terminating (lasts 5m16s)", the pod deleted and that long past its
// deletionTimestamp (the moment it should have been gone); "not shown" for a pod in a
// terminal phase, whose phase describe prints whether or not it is being deleted.
const DeletionAnnotation = "podflow.dev/deletion"

// SplitPodName parses the namespace/name form that names one pod in a bundle's scope
// and in podflow's --pod flags.
func SplitPodName(s string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(s, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("pod %q: want namespace/name", s)
	}
	return namespace, name, nil
}

// PathInfo says what a bundle path holds, as parsed by ParsePath.
type PathInfo struct {
	// Area is "cluster", "namespaced", "log", "node", "fragment" or "" for anything else.
	Area      string
	Kind      string // resource kind for cluster and namespaced lists
	Namespace string // namespace for namespaced lists and logs
	Pod       string // pod for logs
	Container string // container for logs
	Previous  bool   // previous-instance log
	Node      string // node for node evidence
	NodeFile  string // file relative to nodes/<node>/
	Fragment  string // FragmentLog, FragmentJournal or FragmentText for fragments
}

// ParsePath tells what a bundle path holds, so readers never spell the layout themselves.
func ParsePath(p string) PathInfo {
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 2 && parts[0] == ClusterResources && strings.HasSuffix(parts[1], ".json") &&
		!strings.HasSuffix(parts[1], "-errors.json"):
		return PathInfo{Area: "cluster", Kind: strings.TrimSuffix(parts[1], ".json")}
	case len(parts) == 6 && parts[0] == ClusterResources && parts[1] == "pods" && parts[2] == "logs" &&
		strings.HasSuffix(parts[5], ".log"):
		c := strings.TrimSuffix(parts[5], ".log")
		prev := strings.HasSuffix(c, "-previous")
		return PathInfo{Area: "log", Namespace: parts[3], Pod: parts[4],
			Container: strings.TrimSuffix(c, "-previous"), Previous: prev}
	case len(parts) == 3 && parts[0] == ClusterResources && strings.HasSuffix(parts[2], ".json"):
		return PathInfo{Area: "namespaced", Kind: parts[1], Namespace: strings.TrimSuffix(parts[2], ".json")}
	case len(parts) == 3 && parts[0] == FragmentsDir &&
		(parts[1] == FragmentLog || parts[1] == FragmentJournal || parts[1] == FragmentText):
		return PathInfo{Area: "fragment", Fragment: parts[1]}
	case len(parts) >= 3 && parts[0] == NodesDir:
		return PathInfo{Area: "node", Node: nodeFromSegment(parts[1]), NodeFile: strings.Join(parts[2:], "/")}
	}
	return PathInfo{}
}
