package main

import (
	"regexp"
	"strings"

	"podflow.dev/podflow/catalog"
)

// The stage of an entry is derived from where it is printed, following the stage table of
// podflow's design (docs/catalog.md): first the curated template overrides, then the event
// reason or status code, then the package and function of the call site, then the
// component's own stage. A Pod Pending because its claim is unbound, or because its
// volume's node affinity or zone excludes every node, is held by the scheduler: messages of
// the scheduler's volume binding, the PersistentVolume controller and the external
// provisioner are `scheduling`.

// placeRule maps a component's package (a path inside the module, by prefix), optionally
// narrowed to files or functions, to a stage.
type placeRule struct {
	component string
	dir       string         // prefix of the path inside the module; "" for any
	file      *regexp.Regexp // base name of the file; nil for any
	function  *regexp.Regexp // function or method; nil for any
	stage     string
}

var re = regexp.MustCompile

// placeRules are read top to bottom; the first that applies gives the stage.
var placeRules = []placeRule{
	// kubelet
	{component: "kubelet", dir: "pkg/kubelet/images/image_gc_manager", stage: "node"},
	{component: "kubelet", file: re(`^image_gc_manager`), stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/images", stage: "image"},
	{component: "kubelet", dir: "pkg/kubelet/volumemanager", stage: "volume"},
	{component: "kubelet", dir: "pkg/kubelet/volume", stage: "volume"},
	{component: "kubelet", dir: "pkg/volume", stage: "volume"},
	{component: "kubelet", dir: "pkg/kubelet/pluginmanager", stage: "volume"},
	{component: "kubelet", dir: "pkg/kubelet/prober", stage: "probe"},
	{component: "kubelet", dir: "pkg/kubelet/lifecycle", function: re(`(?i)prestop|poststart|hook`), stage: "start"},
	{component: "kubelet", dir: "pkg/kubelet/lifecycle", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/eviction", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/nodestatus", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/nodeshutdown", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/nodelease", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/cm", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/pleg", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/preemption", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/certificate", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/kubeletconfig", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/server", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/stats", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/cadvisor", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/oom", stage: "runtime"},
	{component: "kubelet", dir: "cmd/kubelet", stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet/network", stage: "sandbox"},
	{component: "kubelet", dir: "pkg/kubelet/dockershim/network", stage: "sandbox"},
	{component: "kubelet", dir: "pkg/kubelet/dockershim", function: re(`(?i)sandbox|network`), stage: "sandbox"},
	{component: "kubelet", dir: "pkg/kubelet/dockershim", function: re(`(?i)pullimage|image`), stage: "image"},
	{component: "kubelet", dir: "pkg/kubelet/kuberuntime", function: re(`(?i)sandbox`), stage: "sandbox"},
	{component: "kubelet", dir: "pkg/kubelet/kuberuntime", function: re(`(?i)generateContainerConfig|makeMounts|makeDevices|ContainerConfig|verifyRunAsNonRoot|determineEffectiveSecurityContext|getImageUser`), stage: "config"},
	{component: "kubelet", dir: "pkg/kubelet/kuberuntime", function: re(`(?i)startContainer|executePostStartHook|runPostStart`), stage: "start"},
	{component: "kubelet", dir: "pkg/kubelet/kuberuntime", function: re(`(?i)killContainer|killPod|executePreStopHook|KillPod`), stage: "termination"},
	{component: "kubelet", dir: "pkg/kubelet/kuberuntime", function: re(`(?i)pullImage|ImageService|image`), stage: "image"},
	{component: "kubelet", dir: "pkg/kubelet", file: re(`^kubelet_volumes`), stage: "volume"},
	{component: "kubelet", dir: "pkg/kubelet", file: re(`^kubelet_node_status|^kubelet_network|^runonce|^kubelet_getters`), stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet", function: re(`(?i)makeEnvironmentVariables|makeMounts|GenerateRunContainerOptions|makeBlockVolumes|makeHostsMount|getServiceEnvVarMap|makeGPUDevices|podFieldSelectorRuntimeValue`), stage: "config"},
	{component: "kubelet", dir: "pkg/kubelet", function: re(`(?i)canAdmitPod|HandlePodAdditions|rejectPod|admit`), stage: "node"},
	{component: "kubelet", dir: "pkg/kubelet", file: re(`^kubelet\.go$`), function: re(`(?i)^\(\*Kubelet\)\.(Run|initializeModules|initializeRuntimeDependentModules|updateRuntimeUp|StartGarbageCollection|syncLoop|setupDataDirs|BirthCry|ListenAndServe|fastStatusUpdateOnce|syncNodeStatus)|^NewMainKubelet|^PreInitRuntimeService`), stage: "node"},

	// kube-controller-manager
	{component: "kube-controller-manager", dir: "pkg/controller/volume/persistentvolume", stage: "scheduling"},
	{component: "kube-controller-manager", dir: "pkg/controller/volume/scheduling", stage: "scheduling"},
	{component: "kube-controller-manager", dir: "pkg/controller/volume/pvcprotection", stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/volume/pvprotection", stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/volume", stage: "volume"},
	{component: "kube-controller-manager", dir: "pkg/controller/endpoint", stage: "service"},
	// a Service's cloud load balancer: the Service is what does not work
	{component: "kube-controller-manager", dir: "pkg/controller/service", stage: "service"},
	{component: "cloud-controller-manager", dir: "controllers/service", stage: "service"},
	{component: "kube-controller-manager", dir: "pkg/controller/endpointslice", stage: "service"},
	{component: "kube-controller-manager", dir: "pkg/controller/endpointslicemirroring", stage: "service"},
	// node IPAM: a node without a pod CIDR gets no pod network, its pods no sandbox
	{component: "kube-controller-manager", dir: "pkg/controller/nodeipam", stage: "sandbox"},
	{component: "kube-controller-manager", dir: "pkg/controller/node/ipam", stage: "sandbox"},
	{component: "kube-controller-manager", dir: "pkg/controller/node", file: re(`^cidr`), stage: "sandbox"},
	{component: "kube-controller-manager", dir: "pkg/controller/nodelifecycle", function: re(`(?i)evict|taint|delete`), stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/nodelifecycle", stage: "node"},
	{component: "kube-controller-manager", dir: "pkg/controller/podgc", stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/disruption", stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/podautoscaler", stage: "controller"},
	// the namespace controller and the garbage collector delete: what stops them keeps a
	// namespace Terminating or dependents alive
	{component: "kube-controller-manager", dir: "pkg/controller/namespace", stage: "termination"},
	{component: "kube-controller-manager", dir: "pkg/controller/garbagecollector", stage: "termination"},
	// the quota controller computes the usage the quota admission plugin refuses Pods by
	{component: "kube-controller-manager", dir: "pkg/controller/resourcequota", stage: "admission"},
	{component: "kube-controller-manager", dir: "pkg/controller/", stage: "controller"},

	// kube-apiserver
	{component: "kube-apiserver", dir: "plugin/pkg/admission", stage: "admission"},
	{component: "kube-apiserver", dir: "pkg/admission", stage: "admission"},
	{component: "kube-apiserver", dir: "staging/src/k8s.io/apiserver/pkg/admission", stage: "admission"},
	{component: "kube-apiserver", dir: "pkg/quota", stage: "admission"},
	// the aggregator's APIService availability: an APIService that is not Available is a
	// group whose discovery fails (see templateOverrides)
	{component: "kube-apiserver", dir: "pkg/controllers/status", stage: "termination"},
	{component: "kube-apiserver", dir: "staging/src/k8s.io/kube-aggregator/pkg/controllers/status", stage: "termination"},
	{component: "kube-apiserver", dir: "pkg/registry/core/pod", function: re(`(?i)evict`), stage: "termination"},
	// the eviction subresource's refusals, built by helpers of its file
	// (createTooManyRequestsError: "Cannot evict pod as it would violate the pod's
	// disruption budget."), are what a drain waits on
	{component: "kube-apiserver", dir: "pkg/registry/core/pod", file: re(`^eviction`), stage: "termination"},
	{component: "kube-apiserver", dir: "pkg/registry/core/pod", stage: "request"},
	// the API server's proxy to a Service finds no endpoint behind it (ResourceLocation);
	// the rest of the Service registry refuses a request (an allocated port or IP)
	{component: "kube-apiserver", dir: "pkg/registry/core/service", function: re(`(?i)ResourceLocation`), stage: "service"},
	{component: "kube-apiserver", dir: "pkg/registry/core/service", stage: "request"},
	{component: "kube-apiserver", dir: "pkg/apis/core/validation", stage: "request"},
	// an authorization refusal ("User %q cannot list resource %q … at the cluster scope")
	{component: "kube-apiserver", dir: "pkg/endpoints/handlers/responsewriters", stage: "request"},
	{component: "kube-apiserver", dir: "staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters", stage: "request"},
	// decoding what a client sent: an unknown field, a kind no scheme registers
	{component: "kube-apiserver", dir: "pkg/runtime", stage: "request"},
	{component: "kube-apiserver", dir: "internal/golang/encoding/json", stage: "request"},

	// containerd: the CRI plugin by the CRI call, then the packages under it
	// the daemon's own configuration and start-up (services/server, cmd/containerd/server
	// in 2.x): what stops containerd stops every pod of its node
	{component: "containerd", dir: "services/server", stage: "node"},
	{component: "containerd", dir: "cmd/containerd/server", stage: "node"},
	{component: "containerd", function: re(`(?i)sandbox|network|cni|setupPod|teardownPod|netns`), stage: "sandbox"},
	{component: "containerd", function: re(`(?i)pullimage|pull|resolve|fetch|unpack|registry|auth|credential|mirror`), stage: "image"},
	{component: "containerd", dir: "remotes", stage: "image"},
	{component: "containerd", dir: "core/remotes", stage: "image"},
	{component: "containerd", dir: "images", stage: "image"},
	{component: "containerd", dir: "core/images", stage: "image"},
	{component: "containerd", dir: "core/unpack", stage: "image"},
	{component: "containerd", dir: "pkg/unpack", stage: "image"},
	{component: "containerd", dir: "pkg/cri/server/images", stage: "image"},
	{component: "containerd", dir: "internal/cri/server/images", stage: "image"},
	{component: "containerd", function: re(`(?i)createContainer|containerSpec|generateContainer|WithMounts|mounts|volume`), stage: "config"},
	{component: "containerd", function: re(`(?i)startContainer|Start$|Exec|Create$|newTask|NewTask`), stage: "start"},
	{component: "containerd", function: re(`(?i)stopContainer|removeContainer|Kill|Delete`), stage: "termination"},
	{component: "containerd", dir: "oci", stage: "config"},
	{component: "containerd", dir: "pkg/oci", stage: "config"},
	{component: "containerd", dir: "runtime", stage: "start"},
	{component: "containerd", dir: "core/runtime", stage: "start"},
	{component: "containerd", dir: "cmd/containerd-shim-runc-v2", stage: "start"},
	{component: "containerd", dir: "pkg/process", stage: "start"},

	// runc: the container process; runc exec (exec.go, "exec failed: %w") runs a command
	// in a container that started (kubectl exec, an exec probe, a lifecycle hook), so
	// what the command is for says its stage
	{component: "runc", file: re(`^exec\.go$`), stage: ""},
	{component: "runc", stage: "start"},

	// kubelet 1.5/1.6: dockertools pulled images and ran containers
	{component: "kubelet", dir: "pkg/kubelet/dockertools", function: re(`(?i)pull|image|auth|credential`), stage: "image"},

	// kubectl: rollout status waits on the workload controllers; the rest is its request
	{component: "kubectl", dir: "pkg/polymorphichelpers", function: re(`(?i)status`), stage: "controller"},
	{component: "kubectl", dir: "pkg/cmd/rollout", stage: "controller"},
	{component: "kubectl", dir: "pkg/cmd/drain", stage: "termination"},
	{component: "kubectl", dir: "pkg/drain", stage: "termination"},
	// port-forward reaches a pod's port through its name, as a Service's targetPort does
	{component: "kubectl", dir: "pkg/cmd/portforward", stage: "service"},
	{component: "kubectl", dir: "pkg/util", file: re(`_port\.go$`), stage: "service"},
	// client-side schema validation (kube-openapi's validation errors): the request
	{component: "kubectl", dir: "pkg/util/proto/validation", stage: "request"},
	{component: "kubectl", dir: "pkg/cmd/logs", stage: ""},
	{component: "kubectl", dir: "pkg/cmd/exec", stage: ""},

	// calico-node's own start (node/pkg/lifecycle/startup: "Calico node '%s' is already
	// using the IPv4 address %s.", the node's address and AS checks): what it refuses
	// stops calico-node itself, whose container exits and restarts
	{component: "calico", dir: "node/pkg/lifecycle/startup", stage: "runtime"},

	// hcsshim, the runtime shim of Windows nodes. The Host Networking Service (internal/hns,
	// hcn: "HNS failed with error : …", an endpoint or network not found) makes the pod's
	// network: sandbox, as is the shim's creation of the pod (createPod) and the network
	// namespace of its container document.
	{component: "hcsshim", dir: "internal/hns", stage: "sandbox"},
	{component: "hcsshim", dir: "hcn", stage: "sandbox"},
	// HCS's error values (internal/hcs/errors.go: "hcsshim: timeout waiting for
	// notification", "unexpected container exit"), the legacy API's errors that name their
	// operation in their text (errors.go: "container %s encountered an error during %s: …")
	// and the Win32 errors of any call (internal/hcserror: "… failed in Win32: …") are
	// returned by every operation: the operation around them ("hcs::System::Start …") says
	// the stage
	{component: "hcsshim", file: re(`^errors\.go$`), stage: ""},
	{component: "hcsshim", dir: "internal/hcserror", stage: ""},
	// properties, statistics, pids and diagnostics the kubelet and tools ask of a running
	// container say nothing of its stage
	{component: "hcsshim", function: re(`(?i)properties|stats|statistics|queryInProc|pids|diag|dumpGuestStacks|etwCallback`), stage: ""},
	// shutting down, terminating, killing, closing and deleting a compute system, a
	// process or a task: termination
	{component: "hcsshim", function: re(`(?i)shutdown|terminate|kill|signal|close|delete|release|cleanup|unmount|remove`), stage: "termination"},
	// a process or compute system seen to exit after it ran
	{component: "hcsshim", function: re(`(?i)^\(\*\w+\)\.wait|^wait`), stage: "runtime"},
	{component: "hcsshim", dir: "cmd/containerd-shim-runhcs-v1", function: re(`^createPod$`), stage: "sandbox"},
	{component: "hcsshim", dir: "internal/hcsoci", file: re(`^network`), stage: "sandbox"},
	{component: "hcsshim", dir: "internal/hcsoci", function: re(`(?i)namespace`), stage: "sandbox"},
	// the rest (componentStages): creating and starting a compute system, its container
	// document, its process and layers, the shim's create and start: start

	// Docker Engine (dockershim): the registry and pulls
	{component: "docker", dir: "distribution", stage: "image"},
	{component: "docker", dir: "registry", stage: "image"},
	{component: "docker", dir: "volume", stage: "volume"},
	// Docker Engine: stopping and removing a container
	{component: "docker", dir: "daemon", file: re(`^(kill|stop|delete)\.go$`), stage: "termination"},
	{component: "docker", dir: "daemon", function: re(`(?i)kill`), stage: "termination"},
	{component: "docker", dir: "daemon", stage: ""},
}

// componentStages is the stage of a component whose messages all concern one stage.
var componentStages = map[string]string{
	"kube-scheduler": "scheduling", "kube-proxy": "service", "coredns": "service",
	"cni-plugins": "sandbox", "go-cni": "sandbox", "flannel": "sandbox", "calico": "sandbox",
	"cilium": "sandbox", "aws-vpc-cni": "sandbox", "aws-vpc-resource-controller": "sandbox",
	"csi-external-provisioner": "scheduling", "csi-external-attacher": "volume",
	"csi-aws-ebs": "volume", "csi-gcp-pd": "volume", "csi-external-snapshotter": "volume",
	// a client's request and what the API server and its store answer it
	"client-go": "request", "etcd": "request", "kyverno": "admission", "gatekeeper": "admission",
	"pod-security-admission": "admission", "openshift-scc": "admission",
	"mount-utils": "volume", "nfs-utils": "volume",
	"karpenter": "scheduling", "containers-image": "image", "distribution": "image",
	"linux": "runtime", "systemd": "node",
	// the logger inside a component's process: what it cannot do stops that process
	"klog": "runtime",
	// an operator's own process: what its manager and reconcilers say is its container's run
	"controller-runtime": "runtime",
	// NVIDIA's device plugin advertises the node's GPUs: a plugin that cannot load NVML,
	// finds no devices or refuses its configuration leaves the node without nvidia.com/gpu
	// (pods that request it are not placed), and its Allocate refusals are the kubelet's
	// admission (UnexpectedAdmissionError)
	"nvidia-device-plugin": "node",
	// the NVIDIA container toolkit's runtime wrapper and hooks (and libnvidia-container's
	// nvidia-container-cli, curated) run as a container is created: what they refuse ends
	// its start
	"nvidia-container-toolkit": "start",
	// hcsshim: see placeRules; creating and starting a container is its start
	"hcsshim": "start",
}

// reasonStages maps event reasons (and scheduler status codes) to stages.
var reasonStages = map[string]string{
	"FailedScheduling": "scheduling", "Preempted": "scheduling", "Preempting": "scheduling",
	"Unschedulable": "scheduling", "UnschedulableAndUnresolvable": "scheduling",
	"FailedCreate": "admission", "FailedDelete": "controller",
	"FailedCreatePodSandBox": "sandbox", "SandboxChanged": "sandbox", "FailedKillPod": "termination",
	"FailedMount": "volume", "FailedAttachVolume": "volume", "FailedMapVolume": "volume",
	"FailedUnMount": "volume", "FailedDetachVolume": "volume", "VolumeResizeFailed": "volume",
	"FileSystemResizeFailed": "volume", "FailedUnmapDevice": "volume", "FailedMountOnFilesystemMismatch": "volume",
	"ProvisioningFailed": "scheduling", "ExternalProvisioning": "scheduling", "WaitForFirstConsumer": "scheduling",
	"WaitForPodScheduled": "scheduling", "FailedBinding": "scheduling",
	"Failed": "", "BackOff": "", "ErrImagePull": "image", "ImagePullBackOff": "image", "InspectFailed": "image",
	"ErrImageNeverPull": "image", "InvalidImageName": "image", "Pulling": "image", "Pulled": "image",
	"Unhealthy": "probe", "ProbeWarning": "probe", "Killing": "termination", "ExceededGracePeriod": "termination",
	"FailedPostStartHook": "start", "FailedPreStopHook": "termination",
	"Evicted": "node", "EvictionThresholdMet": "node", "NodeNotReady": "node", "NodeHasDiskPressure": "node",
	"NodeHasInsufficientMemory": "node", "NodeHasInsufficientPID": "node", "OutOfDisk": "node",
	"Rebooted": "node", "InvalidDiskCapacity": "node", "FreeDiskSpaceFailed": "node", "ImageGCFailed": "node",
	"ContainerGCFailed": "node", "NodeSysctlChange": "node", "FailedNodeAllocatableEnforcement": "node",
	"SystemOOM": "runtime", "OOMKilling": "runtime", "HostPortConflict": "node", "NodeSelectorMismatching": "node",
	"UnexpectedAdmissionError": "node", "OutOfcpu": "node", "OutOfmemory": "node", "OutOfpods": "node",
	"TopologyAffinityError": "node", "FailedValidation": "config", "DNSConfigForming": "config",
	"FailedSync": "", "NetworkNotReady": "sandbox", "FailedToCreateEndpoint": "service",
	"FailedToUpdateEndpoint": "service", "FailedToUpdateEndpointSlices": "service",
	"DeadlineExceeded": "controller", "BackoffLimitExceeded": "controller", "ProgressDeadlineExceeded": "controller",
	"ReplicaSetCreateError": "controller", "SuccessfulCreate": "controller", "SuccessfulDelete": "controller",
}

// templateOverride is a curated stage for templates that say more than where they are
// printed.
type templateOverride struct {
	component string // "" for any
	contains  string // lower-case substring of the template
	stage     string
}

var templateOverrides = []templateOverride{
	{"kubelet", "back-off restarting failed container", "runtime"},
	{"kubelet", "back-off pulling image", "image"},
	{"kubelet", "failed to pull image", "image"},
	{"kubelet", "image garbage collection", "node"},
	// the kubelet cannot read its own Node object: it never registered (another API
	// endpoint, credentials the API server refuses) or the object was deleted
	{"kubelet", "error getting node", "node"},
	{"kubelet", "failed to garbage collect required amount of images", "node"},
	{"kubelet", "network plugin is not ready", "node"},
	{"kubelet", "container runtime network not ready", "node"},
	{"kubelet", "predicate %s failed", "node"},
	{"kubelet", "pod was rejected", "node"},
	{"kubelet", "couldn't find key", "config"},
	{"kubelet", "configmap %q not found", "config"},
	{"kubelet", "secret %q not found", "config"},
	{"kubelet", "container has runasnonroot and image will run as root", "config"},
	{"kubelet", "unable to attach or mount volumes", "volume"},
	{"kubelet", "multi-attach error", "volume"},
	// a container's lifecycle hook that fails (handlerRunner.Run, for postStart as for
	// preStop): the kubelet kills the container it just started, and FailedPostStartHook
	// is by far the commoner event
	{"kubelet", "lifecycle hook (", "start"},
	// Docker Engine's parse of a container's mounts, refused as the container is
	// created (CreateContainerError: "invalid volume specification: '…:/:ro'",
	// "invalid mount config for type \"bind\": …"): the container does not start; no
	// volume failed to attach or mount
	{"docker", "invalid volume specification", "start"},
	{"docker", "invalid mount config", "start"},
	{"kubelet", "liveness probe", "probe"},
	{"kubelet", "readiness probe", "probe"},
	{"kubelet", "startup probe", "probe"},
	{"", "pod cidr not assigned", "sandbox"},
	{"containerd", "failed to setup network for sandbox", "sandbox"},
	{"containerd", "failed to pull and unpack image", "image"},
	{"containerd", "failed to resolve reference", "image"},
	{"containerd", "pull access denied", "image"},
	{"containerd", "exec format error", "start"},
	// the CRI plugin's container create (CreateContainerError): whatever fails under it,
	// a mount of the container's snapshot, a spec option, the process does not start;
	// CreateContainerConfigError, the config stage, is the kubelet's own
	{"containerd", "failed to create containerd container", "start"},
	// an image volume (a pod volume whose source is an OCI image, KEP-4639) the CRI
	// plugin mounts for the container: the volume stage, whatever the mount's error
	{"containerd", "image volume", "volume"},
	{"kube-controller-manager", "error creating: ", "admission"},
	// the StatefulSet controller's "create Pod %s in StatefulSet %s failed error: %s": the
	// API server refused the Pod, as for a ReplicaSet's "Error creating:"
	{"kube-controller-manager", "pod %s in statefulset %s failed error", "admission"},
	// A group whose discovery fails (an aggregated API such as metrics.k8s.io whose
	// APIService is not Available) stops, on the Pod path, the controllers that must list
	// every resource type before they delete: the namespace controller
	// (NamespaceDeletionDiscoveryFailure) and the garbage collector. client-go's discovery
	// prints it; kubectl passes it on.
	{"", "unable to retrieve the complete list of server apis", "termination"},
	{"client-go", "couldn't get resource list for", "termination"},
	// The registry's error codes that name what a registry serves are printed by
	// registries alone, so even their short ones ("manifest unknown", "blob unknown to
	// registry") name the image stage; "service unavailable" or "authentication required"
	// any server prints, and they stay without a stage.
	{"distribution", "manifest", "image"},
	{"distribution", "blob", "image"},
	{"distribution", "digest", "image"},
	{"distribution", "repository", "image"},
	{"distribution", "registry", "image"},
	{"distribution", "tag ", "image"},
	{"distribution", "layer", "image"},
	// CoreDNS's forward plugin with no upstream in its resolv.conf: the cluster's DNS
	{"coredns", "no nameservers found", "service"},
	// an operator's health and readiness endpoints answer the kubelet's probes
	{"controller-runtime", "reason withheld", "probe"},
	{"controller-runtime", "healthz check failed", "probe"},
	{"kube-scheduler", "didn't find available persistent volumes to bind", "scheduling"},
	{"kube-scheduler", "volume node affinity conflict", "scheduling"},
	{"kubelet", "image pull failed for", "image"},
	// kubectl prints any API error inside its own words: those words name no stage, the
	// error inside does; what it says of the connection and credentials is the request.
	{"kubectl", "you must be logged in to the server", "request"},
	{"kubectl", "the connection to the server", "request"},
	{"kubectl", "unable to connect to the server", "request"},
	{"kubectl", "error validating", "request"},
	{"kubectl", "exceeded its progress deadline", "controller"},
	// hcsshim's CreateContainer wraps the network namespace it could not make for the
	// container (createNetworkNamespace, the pod's HNS namespace)
	{"hcsshim", "creating namespace for container", "sandbox"},
}

func templateStage(component, template string) (string, bool) {
	t := strings.ToLower(template)
	for _, o := range templateOverrides {
		if (o.component == "" || o.component == component) && strings.Contains(t, o.contains) {
			return o.stage, true
		}
	}
	return "", false
}

// benignTemplates are warnings a component prints on every healthy start, which say
// nothing is wrong: client-go's note that an in-cluster program found no kubeconfig
// (clientcmd BuildConfigFromFlags, logged by nearly every controller and operator as it
// starts in a pod). Their class is info, so a log that holds one and then the error the
// program stops at is read at the error.
var benignTemplates = []struct{ component, contains string }{
	{"client-go", "neither --kubeconfig nor --master was specified"},
}

// benign reports whether an entry's template is one of benignTemplates.
func benign(component, template string) bool {
	t := strings.ToLower(template)
	for _, b := range benignTemplates {
		if b.component == component && strings.Contains(t, b.contains) {
			return true
		}
	}
	return false
}

// stageFor is the stage of one call site.
func stageFor(s site) string {
	if s.stage != "" {
		return s.stage
	}
	if st, ok := templateStage(s.component, s.template); ok {
		return st
	}
	if st, ok := reasonStages[s.reason]; ok && st != "" {
		return st
	}
	rel := strings.TrimPrefix(s.file, "")
	base := rel[strings.LastIndex(rel, "/")+1:]
	for _, r := range placeRules {
		if r.component != s.component {
			continue
		}
		if r.dir != "" && !strings.HasPrefix(rel, r.dir) {
			continue
		}
		if r.file != nil && !r.file.MatchString(base) {
			continue
		}
		if r.function != nil && !r.function.MatchString(s.function) {
			continue
		}
		return r.stage
	}
	return componentStages[s.component]
}

func levelFor(s site) string {
	switch {
	case s.level != "":
		return s.level
	case s.eventType == "Warning":
		return "warning"
	case s.eventType == "Normal":
		return "info"
	case s.kind == "error":
		return "error"
	}
	return ""
}

// failureWords mark a message without a level (a built message, an event of unknown
// type) as a failure.
var failureWords = re(`(?i)\b(fail|failed|failure|error|unable|cannot|can't|couldn't|could not|denied|refused|forbidden|invalid|not found|timed? ?out|timeout|exceeded|insufficient|unauthorized|back-off|backoff|crash|killed|conflict|missing|no such|not ready|unavailable|exhausted|rejected|didn't|does not|doesn't|not allowed|must|unknown|unexpected|panic|no response)\b`)

// failureReason marks a reason word as a failure.
var failureReason = re(`(?i)fail|error|backoff|killed|evict|unhealthy|invalid|denied|exceeded|insufficient|outof|notready|pressure|conflict|mismatch|unknown|lost|reject|crashloop|deadline|oomkill|^oom|systemoom|unschedulable|notfound|exhaust`)

// classFor is failure, warning or info, from the kind and level of the entry.
func classFor(e *catalog.Entry) string {
	if e.Package == "k8s.io/apimachinery/pkg/api/errors" && e.Kind == "message" {
		// Every constructor there builds the status of a request the API server refused
		// ("Request entity too large: %s", "Too many requests: %s", "%s %q already exists").
		return "failure"
	}
	switch e.Kind {
	case "reason":
		if failureReason.MatchString(e.Template) || e.Level == "warning" || e.Level == "error" {
			return "failure"
		}
		return "info"
	case "error":
		return "failure"
	case "status":
		if e.Level == "error" {
			return "failure"
		}
		return "info"
	case "event":
		if e.Level == "warning" {
			return "failure"
		}
		if e.Level == "info" {
			return "info"
		}
	case "message":
		if e.Level == "error" || e.Reason != "" && failureReason.MatchString(e.Reason) {
			return "failure"
		}
	case "log":
		switch e.Level {
		case "error":
			return "failure"
		case "warning":
			return "warning"
		case "info":
			if failureWords.MatchString(e.Template) {
				return "warning"
			}
			return "info"
		}
	}
	if failureWords.MatchString(e.Template) {
		return "failure"
	}
	return "info"
}
