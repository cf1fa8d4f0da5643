package analyze

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// Graph is the evidence of one or more bundles loaded once: API objects indexed by UID
// and by kind/namespace/name, events indexed by the object they are about, node
// evidence (journals, CRI state, dmesg, container logs) linked to pods. It is read-only
// once loaded; rules see it through a View.
type Graph struct {
	bundles     []BundleInfo
	collectedAt time.Time
	// collectedInferred is true when no manifest gave a collection time and collectedAt
	// is only the latest time the evidence carries (a paste, a converted dump).
	collectedInferred bool
	clockSkew         time.Duration
	// identity is who collected the first bundle that says, and what it could do.
	identity *bundle.Identity
	warnings []Warning
	// origins holds, per bundle label, the origin of each file of an imported bundle:
	// locations in those files cite the original.
	origins map[string]map[string]*bundle.Origin
	// present records which kinds of evidence any bundle held at all.
	present map[Kind]bool
	// failed records the collector's error files per kind.
	failed map[Kind][]string
	// unreadable records files of a kind that could not be decoded at all.
	unreadable map[Kind][]string

	pods        []*Pod
	deployments []*Deployment
	replicaSets []*ReplicaSet
	// derivedRS are the ReplicaSets held as what they add to their Deployment's
	// template (derivedReplicaSet), in load order; replicaSets holds the others.
	derivedRS       []*derivedReplicaSet
	statefulSets    []*StatefulSet
	daemonSets      []*DaemonSet
	jobs            []*Job
	cronJobs        []*CronJob
	nodes           []*Node
	nodeLeases      []*Lease
	services        []*Service
	endpointSlices  []*EndpointSlice
	pvcs            []*PVC
	pvs             []*PV
	storageClasses  []*StorageClass
	quotas          []*ResourceQuota
	limitRanges     []*LimitRange
	serviceAccounts []*ServiceAccount
	configMaps      []*ConfigMap
	secrets         []*Secret
	namespaces      []*Namespace
	priorityClasses []*PriorityClass
	validating      []*ValidatingWebhookConfig
	mutating        []*MutatingWebhookConfig

	// byKey maps Kind/namespace/name to the *Object[T]; byUID maps a UID to the same
	// while the lists load, and only a pod's once they are in (keepPodUIDs).
	byKey      map[string]any
	byUID      map[string]any
	podsByNode map[string][]*Pod
	podsByNS   map[string][]*Pod
	// rsByOwner lists under a controller's Kind/namespace/name the ReplicaSets it
	// controls.
	rsByOwner keyed[*ReplicaSet]
	// derivedByOwner is rsByOwner for the derived ReplicaSets.
	derivedByOwner keyed[*derivedReplicaSet]
	// slicesBySv lists under a Service's namespace/name its EndpointSlices.
	slicesBySv keyed[*EndpointSlice]
	// endpointsByPod lists under a pod UID (or namespace/name) the endpoints that
	// target it.
	endpointsByPod keyed[podEndpoint]
	servicesByNS   map[string][]*Service
	// scoped is what a scoped load left out (LoadOptions.Namespace); nil for a full load.
	scoped *ScopedLoad
	// eventNamespaces records the namespaces whose events were collected.
	eventNamespaces map[string]bool

	events      []*Event
	eventsByUID map[string][]*Event
	eventsByKey map[string][]*Event
	// quiet holds, by the pod's key, the events about quiet pods kept compact
	// (quietenEvents), and quietUID their keys by pod UID, until eventsFor asks.
	quiet       map[string]*quietEvents
	quietUID    map[string]string
	quietTables *quietTables
	quietMu     sync.Mutex
	// quietCount is how many events quietenEvents and quietenWorkloads kept compact.
	quietCount int
	// quietWorkloads are the workloads quietenWorkloads kept compact, still there
	// when eventsFor has made their events whole: their lines read the compact ones.
	quietWorkloads []*quietEvents

	journal journalList
	// journalSkipped and logsSkipped count the journal lines and container logs left
	// out (LoadOptions.TroubleOnly).
	journalSkipped, logsSkipped int
	journalByNode               map[string][]int32
	journalByPod                map[string][]int32
	journalByUID                map[string][]int32
	runtimeJournal              map[string][]JournalEntry

	sandboxes  []*CRISandbox
	containers []*CRIContainer
	// sandboxesByUID and contsByUID are the sandboxes and containers that name a pod,
	// sorted by its UID (sandboxesOf, containersOf).
	sandboxesByUID []*CRISandbox
	contsByUID     []*CRIContainer
	// contRecords and sbRecords hold the containers of contsByUID and the sandboxes of
	// sandboxesByUID once loaded, in their order (compactContainers); criWords are the
	// words they share, and criContainerCount is how many containers were loaded.
	contRecords       []criContainerRecord
	sbRecords         []criSandboxRecord
	criWords          []string
	criContainerCount int
	criNodes          map[string]bool

	logs map[string]*ContainerLog
	// podsWithLogs are the pods the bundle has a container log of, kept or left out:
	// keyed by the pod rather than a namespace/name string made for each log, 80k of
	// them at 80k pods held to the end.
	podsWithLogs map[*Pod]bool

	ooms      []*OOMKill
	oomsByUID map[string][]*OOMKill
	oomsNode  map[string][]*OOMKill
	dmesgNode map[string]bool

	kubeletConfigs map[string]*KubeletConfig

	// fragments are the files of evidence an import could not attribute.
	fragments []*fragmentFile
	// unparsed are journal lines no journal format reads.
	unparsed []unparsedLine
	// lines are every line of evidence text (Lines), built once on first use.
	linesOnce sync.Once
	lines     []Line
	// facts are the typed facts rules read (Facts), built once on first use.
	factsOnce sync.Once
	facts     *facts
	// sigIndex holds the lines each signature may match (indexSignatures).
	sigIndex signatureIndex
	// sigTies holds the lines each signature fires on through the catalog (tieSignatures).
	sigTies signatureTieIndex
	// ruleTies holds the lines each Go rule fires on through the catalog (tieRules).
	ruleTies ruleTieIndex
	// paragraphsOnce computes paragraphOf, each pasted line's wrapped paragraph.
	paragraphsOnce sync.Once
	paragraphOf    map[int]int

	// loneImage's result, computed once.
	loneImageOnce sync.Once
	loneImageRef  string
	// loneKernelOnce computes loneKernelRel, the one kernel release the evidence names.
	loneKernelOnce sync.Once
	loneKernelRel  string
	// loneMemoryOnce computes loneMemory, the one memory limit the evidence shows.
	loneMemoryOnce sync.Once
	loneMemory     string
	// loneArchOnce computes loneArchName, the one CPU architecture the evidence names.
	loneArchOnce sync.Once
	loneArchName string
	// loneClientOnce computes loneClient, the one kubectl client version the evidence
	// shows.
	loneClientOnce sync.Once
	loneClient     string
	// dyingOnce computes dying (podsDying).
	dyingOnce sync.Once
	dying     bool
	// loneServiceOnce computes loneService, the one Service the evidence names.
	loneServiceOnce sync.Once
	loneService     string
	// loneClusterCIDROnce computes loneClusterCIDR, the one pod network range the
	// evidence's text sets.
	loneClusterCIDROnce sync.Once
	loneClusterCIDR     string
	// loneNameserverOnce computes loneNameserver, the one loopback nameserver a pasted
	// resolv.conf gives (loneLoopbackNameserver).
	loneNameserverOnce sync.Once
	loneNameserver     string
	// lonePressureOnce computes lonePressure, the one node pressure condition the
	// evidence shows (EvidencePressure).
	lonePressureOnce sync.Once
	lonePressure     string
	// loneProvisionerOnce computes loneProvisionerName (EvidenceProvisioner).
	loneProvisionerOnce sync.Once
	loneProvisionerName string
	// hostPortsOnce computes hostPorts, the host ports the evidence asks for
	// (EvidenceHostPort).
	hostPortsOnce sync.Once
	hostPorts     string
	// nodeTaintsOnce computes nodeTaints, the taints the evidence's nodes carry
	// (EvidenceTaints).
	nodeTaintsOnce sync.Once
	nodeTaints     string
	// etcdQuotaOnce computes etcdQuota, etcd's space quota as the evidence sets it
	// (EvidenceEtcdQuota).
	etcdQuotaOnce sync.Once
	etcdQuota     string
	// kubeletDirOnce computes kubeletDir, the kubelet directory an install in the
	// evidence sets (EvidenceKubeletDirSetting).
	kubeletDirOnce sync.Once
	kubeletDir     string
	// secretEnvOnce computes secretEnv, the one environment variable the evidence sets
	// from a Secret or on a command line (EvidenceSecretEnv).
	secretEnvOnce sync.Once
	secretEnv     string
	// fullFSOnce computes fullFS, the one filesystem a pasted df shows full
	// (EvidenceFullFilesystem).
	fullFSOnce sync.Once
	fullFS     string
	// proseContainerOnce computes proseContainerName, the one container the ticket's
	// sentences name in a code span.
	proseContainerOnce sync.Once
	proseContainerName string
	// sysctlDeniedOnce computes sysctlDeniedKey, the kernel setting a sysctl of the
	// evidence was refused (EvidenceSysctlDenied).
	sysctlDeniedOnce sync.Once
	sysctlDeniedKey  string
	// attachFailureOnce computes attachFailure, the one volume attach failure the
	// evidence's events give (EvidenceAttachFailure).
	attachFailureOnce sync.Once
	attachFailure     string
	// bindCapOnce computes bindCap, NET_BIND_SERVICE as the evidence's manifest adds it
	// (EvidenceBindCapability).
	bindCapOnce sync.Once
	bindCap     string
	// hugePagesOnce computes hugePages, the huge pages a node of the evidence offers
	// (EvidenceHugePages).
	hugePagesOnce sync.Once
	hugePages     string
	// sameNodeReplicaOnce computes sameNodeReplica, the running pod of another
	// ReplicaSet beside a broken replica on its node (EvidenceSameNodeReplica).
	sameNodeReplicaOnce sync.Once
	sameNodeReplica     string
	// limitRangeOnce computes limitRange, the one LimitRange of the evidence
	// (EvidenceLimitRange).
	limitRangeOnce sync.Once
	limitRange     string
	// missingNSOnce computes missingNS, the one namespace the evidence shows not found
	// (EvidenceMissingNamespace).
	missingNSOnce sync.Once
	missingNS     string
	// maxSurgeOnce computes maxSurge, the one rolling update maxSurge the evidence sets
	// (EvidenceMaxSurge).
	maxSurgeOnce sync.Once
	maxSurge     string
	// loneEventContainerOnce computes loneEventContainerName (loneEventContainer).
	loneEventContainerOnce sync.Once
	loneEventContainerName string
	// fullestFSOnce computes fullestFS, the fullest filesystem a pasted df shows.
	fullestFSOnce sync.Once
	fullestFS     string
	// loneUserOnce computes loneUser, the one USER a Dockerfile in the evidence sets.
	loneUserOnce sync.Once
	loneUser     string
	// lonePVOnce computes lonePV, the one PersistentVolume the evidence holds.
	lonePVOnce sync.Once
	lonePV     string
	// lonePVCOnce computes lonePVC, the one claim the evidence holds that is not Bound.
	lonePVCOnce sync.Once
	lonePVC     string
	// cniLoadErrOnce computes cniLoadErr, the first CNI configuration load error.
	cniLoadErrOnce sync.Once
	cniLoadErr     string
	// cniConfigsOnce computes cniConfigsText, the CNI configuration files a listing shows.
	cniConfigsOnce sync.Once
	cniConfigsText string
}

// BundleInfo describes one loaded bundle.
type BundleInfo struct {
	Source           string     `json:"source"`
	FormatVersion    string     `json:"formatVersion,omitempty"`
	Type             string     `json:"type,omitempty"`
	CollectedAt      *time.Time `json:"collectedAt,omitempty"`
	ClockSkewSeconds float64    `json:"clockSkewSeconds,omitempty"`
	// Imported is the format the bundle was imported from ("loose" for pasted text),
	// empty for a bundle podflow collected.
	Imported string `json:"imported,omitempty"`
	// Cluster is the cluster's name as the collector recorded it.
	Cluster string `json:"cluster,omitempty"`
}

// Load reads every bundle into one graph. Nothing in the bundles' content makes it fail:
// unreadable files and lines become warnings naming the file (and line or item) and the
// rest loads. A missing optional file is no evidence, not a problem.
func Load(bundles []*bundle.Bundle, log logrus.FieldLogger) *Graph {
	g, _ := LoadContext(context.Background(), bundles, log) // never cancelled
	return g
}

// LoadContext is Load that stops, with ctx's error, once ctx is done.
func LoadContext(ctx context.Context, bundles []*bundle.Bundle, log logrus.FieldLogger) (*Graph, error) {
	return LoadWith(ctx, bundles, log, LoadOptions{})
}

// LoadOptions tune what Load keeps.
type LoadOptions struct {
	// TroubleOnly leaves out what is only about pods that positively show health
	// (Running and Ready with no restart, or Succeeded): the kubelet's informational
	// lines that name only such pods, the container runtime's that name only their
	// containers and sandboxes, and their container logs. That is the bulk of a big
	// cluster's evidence; signatures pass over it and no rule reads it, so an analysis
	// finds the same with far less memory. Lines that warn or fail, and lines about
	// other pods or none, are all kept. Explaining one pod keeps its whole history.
	TroubleOnly bool
	// PodLoaded, when set, is called as each pod is loaded (for progress by pods).
	PodLoaded func()
	// Namespace is the namespace the analysis reports on (--namespace, or the pod's of
	// --pod), empty for all: what only other namespaces hold is skimmed rather than
	// decoded (loadScope). A scoped load's graph is for that report only, and a
	// bundle without a collection time is loaded whole.
	Namespace string
}

// quietWhileLoading makes the events of quiet pods compact as they are added
// (quietLoad) where the load allows it; a test turns it off to compare with the events
// made compact after the load (quietenEvents).
var quietWhileLoading = true

// LoadWith is LoadContext with options.
func LoadWith(ctx context.Context, bundles []*bundle.Bundle, log logrus.FieldLogger, opts LoadOptions) (*Graph, error) {
	if log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		log = l
	}
	g := newGraph()
	ld := &loader{ctx: ctx, g: g, log: log, podLoaded: opts.PodLoaded, share: newSharedDecode(),
		quietAtLoad: quietWhileLoading && opts.TroubleOnly && len(bundles) == 1}
	for _, b := range bundles {
		ld.addManifest(b, len(bundles) > 1)
	}
	ld.scope = newLoadScope(opts.Namespace, ld.bundles)
	for _, b := range ld.bundles {
		ld.loadObjects(b)
	}
	quieted := ld.quiet != nil
	var loadedWorkloads []*quietLoadWorkload
	if quieted {
		loadedWorkloads = ld.quiet.finish(g)
		ld.quiet = nil
	}
	ld.shareTemplates()
	ld.shareEndpoints()
	ld.deriveReplicaSets()
	g.keepPodUIDs()
	ld.share = nil // what it kept is in the graph; its texts can go
	ld.intern.objectsLoaded()
	// Every list is read: the events' keys (one per event) go before the journals come.
	ld.seenEvents = eventKeys{}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.collectedInferred = g.collectedAt.IsZero()
	g.collectedAt = ld.referenceTime()
	if opts.TroubleOnly {
		if ld.healthyPods == nil {
			ld.noteHealthyPods()
		}
		if !quieted {
			g.quietenEvents()
		}
		// Before the journals come: the load's peak is theirs, and every event is in.
		g.sortEvents()
		g.quietenWorkloads(loadedWorkloads)
	}
	for _, b := range ld.bundles {
		ld.loadNodeAndLogs(b)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ld.importWarnings()
	ld.finishCRI()
	g.index()
	log.WithFields(logrus.Fields{
		"pods": len(g.pods), "events": len(g.events) + g.quietCount, "journalEntries": g.journal.len(), "journalLinesLeftOut": g.journalSkipped, "logsLeftOut": g.logsSkipped,
		"criContainers": g.criContainerCount, "replicaSetsDerived": len(g.derivedRS), "warnings": len(g.warnings),
	}).Debug("evidence loaded")
	if s := ld.scope; s != nil {
		g.scoped = &ScopedLoad{Namespace: s.namespace, Skimmed: s.skimmed, Skipped: s.skipped}
		log.WithFields(logrus.Fields{"namespace": s.namespace, "listsSkimmed": s.skimmed, "listsSkipped": s.skipped}).Debug("scoped load")
	}
	return g, nil
}

func newGraph() *Graph {
	return &Graph{
		origins: map[string]map[string]*bundle.Origin{}, present: map[Kind]bool{}, failed: map[Kind][]string{}, unreadable: map[Kind][]string{},
		byKey: map[string]any{}, byUID: map[string]any{}, podsByNode: map[string][]*Pod{}, podsByNS: map[string][]*Pod{},
		servicesByNS: map[string][]*Service{}, eventNamespaces: map[string]bool{},
		eventsByUID: map[string][]*Event{}, eventsByKey: map[string][]*Event{},
		journalByNode: map[string][]int32{}, journalByPod: map[string][]int32{}, journalByUID: map[string][]int32{},
		runtimeJournal: map[string][]JournalEntry{}, criNodes: map[string]bool{},
		logs: map[string]*ContainerLog{}, podsWithLogs: map[*Pod]bool{},
		oomsByUID: map[string][]*OOMKill{}, oomsNode: map[string][]*OOMKill{}, dmesgNode: map[string]bool{},
		kubeletConfigs: map[string]*KubeletConfig{},
	}
}

// Bundles describes the loaded bundles in load order.
func (g *Graph) Bundles() []BundleInfo { return g.bundles }

// Warnings lists what could not be read, in load order.
func (g *Graph) Warnings() []Warning { return g.warnings }

// CollectedAt is the latest collection time of the loaded bundles; for bundles without a
// manifest, the latest time any object or event carries.
func (g *Graph) CollectedAt() time.Time { return g.collectedAt }

// ClockSkew is the API server's clock minus the collector's, from the manifest.
func (g *Graph) ClockSkew() time.Duration { return g.clockSkew }

// Has reports whether any bundle held evidence of kind k (an empty list counts).
func (g *Graph) Has(k Kind) bool { return g.present[k] }

// HasNamespace reports whether the evidence holds a pod, an event or any other object
// in the namespace.
func (g *Graph) HasNamespace(ns string) bool {
	if len(g.podsByNS[ns]) > 0 || g.eventNamespaces[ns] {
		return true
	}
	for _, e := range g.events {
		if e.Regarding.Namespace == ns {
			return true
		}
	}
	for k := range g.byKey {
		if parts := strings.SplitN(k, "/", 3); len(parts) == 3 && parts[1] == ns {
			return true
		}
	}
	return false
}

// keepPodUIDs makes byUID map only the pods' UIDs, once every list is in: the objects
// of other kinds are looked up by UID only while the lists load (to tell one object
// from another and to find a workload's events), and at 80k pods their entries were
// about 9 MB of the map, held to the end.
func (g *Graph) keepPodUIDs() {
	pods := make(map[string]any, len(g.pods))
	for _, p := range g.pods {
		if uid := string(p.meta.UID); uid != "" && g.byUID[uid] == any(p) {
			pods[uid] = p
		}
	}
	g.byUID = pods
}

// PodCount is the number of pods loaded.
func (g *Graph) PodCount() int { return len(g.pods) }

// PodRefs names the pods loaded, in the graph's order.
func (g *Graph) PodRefs() []ObjectRef {
	out := make([]ObjectRef, 0, len(g.pods))
	for _, p := range g.pods {
		out = append(out, p.Ref())
	}
	return out
}

// FindPod returns the pod namespace/name, or nil.
func (g *Graph) FindPod(namespace, name string) *Pod {
	var b [keyRoom]byte
	p, _ := g.byKey[string(joinedKey(b[:0], "Pod", namespace, name))].(*Pod)
	return p
}

// index builds the joins rules need, each in one pass over its input.
func (g *Graph) index() {
	sortObjects(g.pods)
	for _, p := range g.pods {
		g.podsByNS[p.meta.Namespace] = append(g.podsByNS[p.meta.Namespace], p)
		if n := p.Obj.Spec.NodeName; n != "" {
			g.podsByNode[n] = append(g.podsByNode[n], p)
		}
	}
	for _, rs := range g.replicaSets {
		if c := metav1.GetControllerOfNoCopy(rs.meta); c != nil {
			k := c.Kind + "/" + rs.meta.Namespace + "/" + c.Name
			g.rsByOwner.add(k, rs)
		}
	}
	for _, rs := range g.derivedRS {
		if c := metav1.GetControllerOfNoCopy(&rs.meta); c != nil {
			k := c.Kind + "/" + rs.meta.Namespace + "/" + c.Name
			g.derivedByOwner.add(k, rs)
		}
	}
	sortObjects(g.services)
	for _, s := range g.services {
		g.servicesByNS[s.meta.Namespace] = append(g.servicesByNS[s.meta.Namespace], s)
	}
	sortObjects(g.endpointSlices)
	for _, s := range g.endpointSlices {
		if svc := s.meta.Labels["kubernetes.io/service-name"]; svc != "" {
			k := s.meta.Namespace + "/" + svc
			g.slicesBySv.add(k, s)
		}
		for i, ep := range s.Obj.Endpoints {
			t := ep.TargetRef
			if t == nil || t.Kind != "Pod" {
				continue
			}
			key := string(t.UID)
			if key == "" {
				key = s.meta.Namespace + "/" + t.Name
			}
			g.endpointsByPod.add(key, podEndpoint{slice: s, index: i})
		}
	}
	g.rsByOwner.sort()
	g.derivedByOwner.sort()
	g.slicesBySv.sort()
	g.endpointsByPod.sort()
	g.sortEvents()
	for _, e := range g.events {
		if e.Regarding.UID != "" {
			g.eventsByUID[e.Regarding.UID] = append(g.eventsByUID[e.Regarding.UID], e)
		}
		k := e.Regarding.key()
		g.eventsByKey[k] = append(g.eventsByKey[k], e)
	}
	g.indexJournal()
	g.indexCRI()
	for _, o := range g.ooms {
		g.oomsNode[o.Node] = append(g.oomsNode[o.Node], o)
		if o.PodUID != "" {
			g.oomsByUID[o.PodUID] = append(g.oomsByUID[o.PodUID], o)
		}
	}
}

func sortObjects[T any](list []*Object[T]) {
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].meta, list[j].meta
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// podEndpoint is one endpoint of an EndpointSlice that targets a pod.
type podEndpoint struct {
	slice *EndpointSlice
	index int
}

// ready follows the EndpointSlice API: a nil ready condition means ready.
func (e podEndpoint) ready() bool {
	r := e.slice.Obj.Endpoints[e.index].Conditions.Ready
	return r == nil || *r
}

func (e podEndpoint) loc() Location { return e.slice.Loc.At("endpoints", e.index) }

// endpointsFor lists the endpoints that target a pod.
func (g *Graph) endpointsFor(p *Pod) []podEndpoint {
	if list := g.endpointsByPod.of(string(p.meta.UID)); len(list) > 0 {
		return list
	}
	return g.endpointsByPod.of(p.meta.Namespace + "/" + p.meta.Name)
}

// sortEvents puts the events in eventsFor's order: oldest last-seen first, in load
// order when eventLess cannot tell them apart. Sorting them again changes nothing.
func (g *Graph) sortEvents() {
	sort.SliceStable(g.events, func(i, j int) bool { return eventLess(g.events[i], g.events[j]) })
}
