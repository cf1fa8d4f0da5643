package analyze

import "podflow.dev/podflow/bundle"

// Kind is one kind of evidence a rule can declare as an input: an API object list, or a
// node-side source such as the kubelet journal. A rule's View exposes only the kinds it
// declared.
type Kind string

// API object kinds; the value is the bundle's list name.
const (
	Pods               Kind = bundle.KindPods
	Deployments        Kind = bundle.KindDeployments
	ReplicaSets        Kind = bundle.KindReplicaSets
	StatefulSets       Kind = bundle.KindStatefulSets
	DaemonSets         Kind = bundle.KindDaemonSets
	Jobs               Kind = bundle.KindJobs
	CronJobs           Kind = bundle.KindCronJobs
	Nodes              Kind = bundle.KindNodes
	NodeLeases         Kind = bundle.KindNodeLeases
	Services           Kind = bundle.KindServices
	EndpointSlices     Kind = bundle.KindEndpointSlices
	Events             Kind = bundle.KindEvents
	PVCs               Kind = bundle.KindPVCs
	PVs                Kind = bundle.KindPVs
	StorageClasses     Kind = bundle.KindStorageClasses
	ResourceQuotas     Kind = bundle.KindResourceQuotas
	LimitRanges        Kind = bundle.KindLimitRanges
	ServiceAccounts    Kind = bundle.KindServiceAccounts
	ConfigMaps         Kind = bundle.KindConfigMaps
	Secrets            Kind = bundle.KindSecrets
	Namespaces         Kind = bundle.KindNamespaces
	PriorityClasses    Kind = bundle.KindPriorityClasses
	ValidatingWebhooks Kind = bundle.KindValidatingWebhooks
	MutatingWebhooks   Kind = bundle.KindMutatingWebhooks
	KubeletJournal     Kind = "kubelet-journal"
	RuntimeJournal     Kind = "runtime-journal"
	CRI                Kind = "cri"
	ContainerLogs      Kind = "container-logs"
	Dmesg              Kind = "dmesg"
	KubeletConfigs     Kind = "kubelet-config"
	// Fragments are pasted evidence an import could not attribute to a pod or node.
	Fragments Kind = "fragments"
)

// kindInfo says, for skip reasons and coverage, what a kind is and where a bundle keeps it.
type kindInfo struct {
	what  string
	where string
}

var kinds = map[Kind]kindInfo{
	Pods:               {"pods", bundle.NamespacedResourcePath(bundle.KindPods, "<namespace>")},
	Deployments:        {"deployments", bundle.NamespacedResourcePath(bundle.KindDeployments, "<namespace>")},
	ReplicaSets:        {"replicasets", bundle.NamespacedResourcePath(bundle.KindReplicaSets, "<namespace>")},
	StatefulSets:       {"statefulsets", bundle.NamespacedResourcePath(bundle.KindStatefulSets, "<namespace>")},
	DaemonSets:         {"daemonsets", bundle.NamespacedResourcePath(bundle.KindDaemonSets, "<namespace>")},
	Jobs:               {"jobs", bundle.NamespacedResourcePath(bundle.KindJobs, "<namespace>")},
	CronJobs:           {"cronjobs", bundle.NamespacedResourcePath(bundle.KindCronJobs, "<namespace>")},
	Nodes:              {"node objects", bundle.ClusterResourcePath(bundle.KindNodes)},
	NodeLeases:         {"node leases", bundle.ClusterResourcePath(bundle.KindNodeLeases)},
	Services:           {"services", bundle.NamespacedResourcePath(bundle.KindServices, "<namespace>")},
	EndpointSlices:     {"endpointslices", bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "<namespace>")},
	Events:             {"events", bundle.NamespacedResourcePath(bundle.KindEvents, "<namespace>")},
	PVCs:               {"persistentvolumeclaims", bundle.NamespacedResourcePath(bundle.KindPVCs, "<namespace>")},
	PVs:                {"persistentvolumes", bundle.ClusterResourcePath(bundle.KindPVs)},
	StorageClasses:     {"storageclasses", bundle.ClusterResourcePath(bundle.KindStorageClasses)},
	ResourceQuotas:     {"resourcequotas", bundle.NamespacedResourcePath(bundle.KindResourceQuotas, "<namespace>")},
	LimitRanges:        {"limitranges", bundle.NamespacedResourcePath(bundle.KindLimitRanges, "<namespace>")},
	ServiceAccounts:    {"serviceaccounts", bundle.NamespacedResourcePath(bundle.KindServiceAccounts, "<namespace>")},
	ConfigMaps:         {"configmaps", bundle.NamespacedResourcePath(bundle.KindConfigMaps, "<namespace>")},
	Secrets:            {"secrets (metadata)", bundle.NamespacedResourcePath(bundle.KindSecrets, "<namespace>")},
	Namespaces:         {"namespaces", bundle.ClusterResourcePath(bundle.KindNamespaces)},
	PriorityClasses:    {"priorityclasses", bundle.ClusterResourcePath(bundle.KindPriorityClasses)},
	ValidatingWebhooks: {"validating webhook configurations", bundle.ClusterResourcePath(bundle.KindValidatingWebhooks)},
	MutatingWebhooks:   {"mutating webhook configurations", bundle.ClusterResourcePath(bundle.KindMutatingWebhooks)},
	KubeletJournal:     {"kubelet journal", bundle.NodePath("<node>", bundle.NodeKubeletLog)},
	RuntimeJournal:     {"container runtime journal", bundle.NodePath("<node>", bundle.NodeRuntimeLog)},
	CRI:                {"container runtime state (crictl)", bundle.NodePath("<node>", bundle.NodeCRIPods)},
	ContainerLogs:      {"container logs", bundle.LogPath("<namespace>", "<pod>", "<container>", false)},
	Dmesg:              {"kernel log (dmesg)", bundle.NodePath("<node>", bundle.NodeDmesg)},
	KubeletConfigs:     {"kubelet config", bundle.NodePath("<node>", bundle.NodeKubeletConfig)},
	Fragments:          {"unattributed fragments", bundle.FragmentPath("<kind>", "<file>")},
}

// Description names the kind for people, e.g. "kubelet journal".
func (k Kind) Description() string {
	if i, ok := kinds[k]; ok {
		return i.what
	}
	return string(k)
}

// Where is the bundle path pattern that holds the kind.
func (k Kind) Where() string { return kinds[k].where }

// Valid reports whether k is a kind podflow knows.
func (k Kind) Valid() bool {
	_, ok := kinds[k]
	return ok
}

// listKinds maps a bundle list name to the evidence kind it feeds.
var listKinds = map[string]Kind{
	bundle.KindPods: Pods, bundle.KindDeployments: Deployments, bundle.KindReplicaSets: ReplicaSets,
	bundle.KindStatefulSets: StatefulSets, bundle.KindDaemonSets: DaemonSets, bundle.KindJobs: Jobs,
	bundle.KindCronJobs: CronJobs, bundle.KindNodes: Nodes, bundle.KindNodeLeases: NodeLeases,
	bundle.KindServices: Services, bundle.KindEndpointSlices: EndpointSlices, bundle.KindEvents: Events,
	bundle.KindPVCs: PVCs, bundle.KindPVs: PVs, bundle.KindStorageClasses: StorageClasses,
	bundle.KindResourceQuotas: ResourceQuotas, bundle.KindLimitRanges: LimitRanges,
	bundle.KindServiceAccounts: ServiceAccounts, bundle.KindConfigMaps: ConfigMaps, bundle.KindSecrets: Secrets,
	bundle.KindNamespaces: Namespaces, bundle.KindPriorityClasses: PriorityClasses,
	bundle.KindValidatingWebhooks: ValidatingWebhooks, bundle.KindMutatingWebhooks: MutatingWebhooks,
}
