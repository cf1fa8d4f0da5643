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
	// resource is the API resource kubectl gets for a list ("deployments"), empty for
	// the node-side sources; namespaced says whether it takes -n.
	resource   string
	namespaced bool
}

// kinds is every kind: the bundle lists analyze reads, from bundle.Lists, and the
// node-side sources.
var kinds = func() map[Kind]kindInfo {
	m := map[Kind]kindInfo{
		KubeletJournal: {what: "kubelet journal", where: bundle.NodePath("<node>", bundle.NodeKubeletLog)},
		RuntimeJournal: {what: "container runtime journal", where: bundle.NodePath("<node>", bundle.NodeRuntimeLog)},
		CRI:            {what: "container runtime state (crictl)", where: bundle.NodePath("<node>", bundle.NodeCRIPods)},
		ContainerLogs:  {what: "container logs", where: bundle.LogPath("<namespace>", "<pod>", "<container>", false)},
		Dmesg:          {what: "kernel log (dmesg)", where: bundle.NodePath("<node>", bundle.NodeDmesg)},
		KubeletConfigs: {what: "kubelet config", where: bundle.NodePath("<node>", bundle.NodeKubeletConfig)},
		Fragments:      {what: "unattributed fragments", where: bundle.FragmentPath("<kind>", "<file>")},
	}
	for list, k := range listKinds {
		l, _ := bundle.ListNamed(list)
		where := bundle.ClusterResourcePath(l.Name)
		if l.Namespaced {
			where = bundle.NamespacedResourcePath(l.Name, "<namespace>")
		}
		m[k] = kindInfo{what: l.Describe, where: where, resource: l.Resource, namespaced: l.Namespaced}
	}
	return m
}()

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

// listKinds maps the name of each bundle list analyze reads to the evidence kind it
// feeds (the kind's value is the list's name).
var listKinds = func() map[string]Kind {
	m := map[string]Kind{}
	for _, l := range bundle.Lists() {
		if l.Use == bundle.ReadByAnalyze {
			m[l.Name] = Kind(l.Name)
		}
	}
	return m
}()
