package analyze

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/internal/cmdline"
)

// UnexplainedRule is the rule ID of findings about trouble no rule or signature
// explains. podflow never says "no problems" about a subject whose evidence shows
// trouble: such a subject gets an unexplained finding at the earliest stage whose
// evidence is broken, quoting the most telling lines.
const UnexplainedRule = "unexplained"

// trouble is one sign that a subject is not well, with the stage it points at.
type trouble struct {
	stage Stage
	what  string
	ev    Evidence
	// weight orders signs of one stage: the most telling first.
	weight int
	// read is what the catalog makes of the line, when a component on the path prints it.
	read chainRead
	// crash marks a sign that a container exited and is restarted (CrashLoopBackOff, a
	// restart count), logRead a line of the pod's own log the catalog reads as a
	// failure its component prints, or that the program wrote at its fatal level: the
	// reason of such a crash, whatever stage the component belongs to (CoreDNS exits on
	// "plugin/forward: no nameservers found").
	crash, logRead bool
	// spans are the stages a status word stands for when it names no one of them
	// (ContainerCreating: the sandbox, the volumes or the image); nil for a sign of
	// its stage alone.
	spans []Stage
}

// own reports a line of the pod's own log that the catalog places before the start
// stage: podTrouble reads it as the failure of the container that printed it.
func (s trouble) own() bool {
	return s.logRead && s.read.known() && s.read.stage().Order() < StageStart.Order()
}

// statusSpans are the stages a pod's or container's waiting word can stand for: kubectl
// prints ContainerCreating until the sandbox, the volumes and the image are all ready,
// and PodInitializing until the app containers' volumes and images are.
var statusSpans = map[string][]Stage{
	"ContainerCreating": {StageSandbox, StageVolume, StageImage},
	"PodInitializing":   {StageVolume, StageImage},
}

// narrowed drops the signs that stand for several stages when another sign names one
// of those stages: "ContainerCreating" and a FailedMount event say where it waits.
func narrowed(signs []trouble) []trouble {
	named := map[Stage]bool{}
	for _, s := range signs {
		if s.spans == nil {
			named[s.stage] = true
		}
	}
	return slices.DeleteFunc(signs, func(s trouble) bool {
		return slices.ContainsFunc(s.spans, func(st Stage) bool { return named[st] })
	})
}

// waitingStages maps a container's waiting reason to the stage it shows broken.
var waitingStages = map[string]Stage{
	"ErrImagePull": StageImage, "ImagePullBackOff": StageImage, "InvalidImageName": StageImage,
	"ErrImageNeverPull": StageImage, "RegistryUnavailable": StageImage, "ImageInspectError": StageImage,
	"CreateContainerConfigError": StageConfig, "CreateContainerError": StageStart,
	"RunContainerError": StageStart, "StartError": StageStart, "ContainerCannotRun": StageStart,
	"PreStartHookError": StageStart, "PostStartHookError": StageStart,
	"CrashLoopBackOff": StageRuntime, "OOMKilled": StageRuntime, "Error": StageRuntime,
	"ContainerCreating": StageSandbox, "CreatePodSandboxError": StageSandbox, "ConfigPodSandboxError": StageSandbox,
	"KillPodSandboxError": StageTermination,
}

// kubectlStatusWord places the pod-level words kubectl prints in STATUS (and a pasted
// table keeps as the pod's reason) in the chain: init containers, the sandbox, volume and
// image step of a scheduled pod, the kubelet's admission refusals, eviction, deletion.
func kubectlStatusWord(reason string) (Stage, string, bool) {
	switch {
	case reason == "Init:CrashLoopBackOff" || reason == "Init:Error":
		// The stage of start-init-container-failed, which reports the same failure when
		// the pod's status shows the init container.
		return StageStart, "an init container fails (kubectl shows " + reason + "), so the app containers never start", true
	case reason == "Init:OOMKilled":
		return StageRuntime, "an init container is killed for memory (kubectl shows " + reason + "), so the app containers never start", true
	case strings.HasPrefix(reason, "Init:ErrImagePull") || strings.HasPrefix(reason, "Init:ImagePullBackOff") || reason == "Init:InvalidImageName":
		return StageImage, "an init container's image cannot be pulled (kubectl shows " + reason + ")", true
	case reason == "Init:CreateContainerConfigError":
		return StageConfig, "an init container cannot be created from its configuration (kubectl shows " + reason + ")", true
	case strings.HasPrefix(reason, "Init:"):
		return StageStart, "the pod is scheduled and runs its init containers (kubectl shows " + reason + ": completed of all); the app containers wait for them", true
	case reason == "ContainerCreating":
		return StageSandbox, "the pod is scheduled and its containers are being created (kubectl shows ContainerCreating): its sandbox, volumes or image are not ready", true
	case reason == "PodInitializing":
		return StageVolume, "the pod is scheduled and its init containers are done; its app containers are being created (kubectl shows PodInitializing): volumes or image are not ready", true
	case reason == "Terminating":
		return StageTermination, "the pod was deleted and has not ended (kubectl shows Terminating)", true
	}
	if meaning, ok := kubeletRefusals[reason]; ok || strings.HasPrefix(reason, "OutOf") {
		said := "the kubelet refused to admit the pod on its node (kubectl shows " + reason + ")"
		if meaning != "" {
			said += ": " + meaning
		}
		return StageNode, said, true
	}
	return "", "", false
}

// kubeletRefusals are the reasons the kubelet's admission handlers give a pod they
// refuse (the pod fails with that reason and kubectl shows it in STATUS), each with what
// it means, or "" when the reason says it: pkg/kubelet/lifecycle/predicate.go (the
// predicate's name, "OutOf" and the resource, InvalidNodeInfo, UnexpectedAdmissionError,
// the pod OS checks; MatchNodeSelector, PodFitsHostPorts and HostName before 1.19),
// pkg/kubelet/sysctl, pkg/kubelet/cm/topologymanager ("Topology Affinity Error" in
// 1.16, TopologyAffinityError from 1.17), pkg/kubelet/lifecycle/handlers.go (AppArmor,
// NoNewPrivs, ProcMount), pkg/kubelet/nodeshutdown.
var kubeletRefusals = map[string]string{
	"NodeAffinity": "", "NodeName": "", "NodePorts": "the pod's hostPort is taken on the node", "TaintToleration": "",
	"MatchNodeSelector": "", "PodFitsHostPorts": "the pod's hostPort is taken on the node", "HostName": "",
	"PodToleratesNodeTaints": "", "NodeShutdown": "the node is shutting down", "UnknownReason": "",
	"UnexpectedAdmissionError":       "an admission handler of the kubelet failed (often a device plugin or resource manager that cannot allocate what the pod requests)",
	"UnexpectedPredicateFailureType": "", "InvalidNodeInfo": "",
	"SysctlForbidden":                      "the pod sets a sysctl the kubelet does not allow (an unsafe sysctl not listed in its allowedUnsafeSysctls)",
	"TopologyAffinityError":                "the Topology Manager's policy cannot place the pod's CPUs, memory or devices on the NUMA nodes it requires",
	"Topology Affinity Error":              "the Topology Manager's policy cannot place the pod's CPUs, memory or devices on the NUMA nodes it requires",
	"AppArmor":                             "the pod asks for an AppArmor profile the node cannot enforce",
	"NoNewPrivs":                           "the node's runtime cannot honour allowPrivilegeEscalation: false",
	"ProcMount":                            "the node's runtime does not support the pod's procMount",
	"PodOSNotSupported":                    "the pod's spec.os is not the node's operating system",
	"PodOSSelectorNodeLabelDoesNotMatch":   "the pod's kubernetes.io/os selector does not match the node's OS",
	"SupplementalGroupsPolicyNotSupported": "the node's runtime does not support the pod's supplementalGroupsPolicy",
	"PodFeatureUnsupported":                "the node does not support a feature the pod's spec uses",
	"PodLevelResourcesNotSupported":        "the node does not support pod-level resources",
}

// scheduled reports whether the pod's status shows it bound to a node, even when the
// evidence does not name the node (a pasted kubectl get pods without -o wide).
func scheduled(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// eventStages maps a Warning event reason to the stage it shows broken; reasons not
// listed are placed by their words (textStage).
var eventStages = map[string]Stage{
	"FailedCreate": StageAdmission, "FailedScheduling": StageScheduling, "Unschedulable": StageScheduling,
	"NotTriggerScaleUp": StageScheduling, "FailedCreatePodSandBox": StageSandbox, "NetworkNotReady": StageSandbox,
	"FailedMount": StageVolume, "FailedAttachVolume": StageVolume, "FailedMapVolume": StageVolume,
	"ProvisioningFailed": StageVolume, "FailedBinding": StageVolume, "VolumeFailedMount": StageVolume,
	"ErrImageNeverPull": StageImage, "InspectFailed": StageImage, "ErrImagePull": StageImage,
	"Unhealthy": StageProbe, "ProbeWarning": StageProbe, "FailedPostStartHook": StageStart,
	"FailedPreStopHook": StageTermination, "FailedKillPod": StageTermination, "ExceededGracePeriod": StageTermination,
	"Evicted": StageNode, "NodeNotReady": StageNode, "Rebooted": StageNode, "EvictionThresholdMet": StageNode,
	"OOMKilling": StageRuntime, "BackoffLimitExceeded": StageController, "DeadlineExceeded": StageController,
	"ProgressDeadlineExceeded": StageController, "FailedGetScale": StageController,
	"FailedGetResourceMetric": StageController, "FailedComputeMetricsReplicas": StageController,
	"FailedToUpdateEndpoint": StageService, "FailedToCreateEndpoint": StageService,
	"FailedDaemonPod": StageController, "TooManyMissedTimes": StageController, "FailedNeedsStart": StageController,
	"NodeLost": StageTermination, "FailedSync": StageRuntime, "ExternalProvisioning": StageVolume, "Provisioning": StageVolume,
}

// stageWords place a line that no table knows by what it talks about, first match wins.
var stageWords = []struct {
	stage Stage
	words []string
}{
	{StageAdmission, []string{"admission webhook", "denied the request", "exceeded quota", "failed quota", "is forbidden:", "security context constraint", "podsecuritypolicy", "violates podsecurity"}},
	{StageController, []string{"missed start time", "startingdeadlineseconds", "unable to fetch metrics", "unable to get metrics", "failed to get cpu utilization", "backofflimit", "backoff limit", "progressdeadlineexceeded", "horizontalpodautoscaler"}},
	{StageScheduling, []string{"nodes are available", "failedscheduling", "didn't match", "untolerated taint", "that the pod didn't tolerate", "insufficient cpu", "insufficient memory", "insufficient pods"}},
	{StageSandbox, []string{"sandbox", "cni", "network plugin", "setup network", "set up network", "ipam", "calico", "cilium", "flannel", "weave", "pod network"}},
	{StageVolume, []string{"mount", "unmount", "umount", "remount", "volume", "attach", "csi", "persistentvolume", "pvc", "nfs", "storageclass", "storage class", "provisioner"}},
	{StageConfig, []string{"configmap", "secret", "couldn't find key", "runasnonroot", "createcontainerconfigerror"}},
	{StageImage, []string{"pull", "image", "manifest", "registry", "toomanyrequests"}},
	{StageStart, []string{"oci runtime", "starting container process", "executable file not found", "exec format error", "exec:", "failed to create containerd task", "failed to start container", "runcontainererror"}},
	{StageProbe, []string{"probe", "liveness", "readiness"}},
	{StageService, []string{"endpoint", "kube-proxy", "iptables", "ipvs", "coredns", "conntrack", "kube-dns", "nodeport", "networkpolicy", "network policy", "clusterip", "loadbalancer"}},
	{StageTermination, []string{"finalizer", "terminating", "grace period", "nodelost"}},
	{StageNode, []string{"kubelet", "pleg", "cgroup", "eviction", "evicted", "disk pressure", "diskpressure", "memorypressure", "node ", "certificate", "container runtime", "containerd", "cri-o", "dockerd", "swap"}},
}

// stagePhrases are phrases that say the stage for sure, whatever else the line holds
// (an image named nfs-provisioner is still an image pull); tried before stageWords.
var stagePhrases = []struct {
	stage Stage
	words []string
}{
	{StageRequest, []string{"unable to connect to the server", "you must be logged in to the server", "did you specify the right host or port", "getting credentials: exec", "exec plugin:", "strict decoding error", "field is immutable", "error validating data", "no matches for kind", "in api group", "at the cluster scope", "the object has been modified", "etcdserver:", "rendered manifests contain a resource", "unable to authenticate the request",
		// the API server's refusal of a request body above its limit (a Helm release record)
		"request entity too large"}},
	{StageImage, []string{"failed to pull", "pull image", "pulling image", "errimagepull", "imagepullbackoff", "pull access denied", "manifest unknown", "failed to resolve reference"}},
	{StageSandbox, []string{"failedcreatepodsandbox", "createpodsandbox", "failed to set up sandbox", "failed to setup network for sandbox", "runpodsandbox", "failed to create pod sandbox"}},
	{StageVolume, []string{"mountvolume", "failedmount", "attachvolume", "unable to attach or mount", "failedattachvolume"}},
	{StageConfig, []string{"createcontainerconfigerror", "runasnonroot"}},
	{StageStart, []string{"createcontainererror", "failed to create containerd container", "failed to create containerd task", "failed to create shim task", "cannot load seccomp profile",
		// Docker's daemon before the CRI (daemon/start.go, 1.x)
		"cannot start container"}},
	{StageNode, []string{"failed to run kubelet", "containermanager", "cgroup subsystem", "pleg is not healthy", "kubeletnotready", "container runtime network not ready"}},
	{StageRuntime, []string{"oomkilled", "oom-killer", "observed a panic", "panic:", "address already in use"}},
	// A name that does not resolve, as a user's lookup from a pod prints it, is cluster
	// DNS, whatever else the sentence names (the CNI it runs on); a pull or a sandbox
	// whose lookup fails says so first.
	{StageService, []string{"nslookup", "can't resolve", "name does not resolve", "server can't find", "nxdomain"}},
}

// phraseStage is the stage a phrase that says it for sure places a line at
// (stagePhrases), if one does.
func phraseStage(s string) (Stage, bool) {
	low := strings.ToLower(s)
	for _, sp := range stagePhrases {
		for _, w := range sp.words {
			if strings.Contains(low, w) {
				return sp.stage, true
			}
		}
	}
	return "", false
}

// textStage places a line by its words; def is the stage when none fits. A reason a
// table knows (a pasted event row's REASON, a get pods STATUS) decides first.
func textStage(s string, def Stage) Stage {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if st, ok := waitingStages[w]; ok && w != "Error" {
			return st
		}
		if st, ok := eventStages[w]; ok {
			return st
		}
	}
	if st, ok := phraseStage(s); ok {
		return st
	}
	low := strings.ToLower(s)
	for _, sw := range stageWords {
		for _, w := range sw.words {
			if containsStageWord(low, w) {
				return sw.stage
			}
		}
	}
	return def
}

// nameWords are stage words that name things as often as they say what happened: inside
// a dashed name ("system-probe", "image-builder", "registry-cache") they are a name.
var nameWords = map[string]bool{"probe": true, "liveness": true, "readiness": true, "image": true, "pull": true, "manifest": true, "registry": true}

// containsStageWord reports whether low holds w where a word starts ("mount", not the
// end of "amount"; "cni", not the middle of "technique"), a name word only where no
// dash or underscore joins it to a name.
func containsStageWord(low, w string) bool {
	for i := 0; ; {
		j := strings.Index(low[i:], w)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(w)
		inWord := at > 0 && low[at-1] >= 'a' && low[at-1] <= 'z'
		joined := nameWords[w] && (at > 0 && (low[at-1] == '-' || low[at-1] == '_') || end < len(low) && (low[end] == '-' || low[end] == '_'))
		if !inWord && !joined {
			return true
		}
		i = at + 1
	}
}

// unexplained adds a finding for every subject whose evidence shows trouble and that no
// finding covers: pods first, then non-pod objects with Warning events, then nodes,
// then fragments of unattributed evidence that read as errors.
func unexplained(g *Graph, fs []*Finding, roots map[string]*Finding) []*Finding {
	covered := map[string]bool{}
	citedFiles := map[string]bool{}
	var excerpts []string
	for _, f := range fs {
		for _, e := range f.Evidence {
			if x := strings.TrimSuffix(strings.TrimSpace(e.Excerpt), "…"); len(x) >= 20 {
				excerpts = append(excerpts, x)
			}
		}
		for _, s := range f.Subjects {
			if f.History && s.Kind == "Pod" {
				// The pod got past that failure: what it shows now is still to explain.
				continue
			}
			covered[s.key()] = true
		}
		for _, e := range f.Evidence {
			citedFiles[e.Bundle+"\x00"+e.inBundle().Path] = true
		}
	}
	var out []*Finding
	lines := g.Lines()
	byPod := map[*Pod][]*Line{}
	var loose []*Line
	for i := range lines {
		l := &lines[i]
		switch {
		case l.Pod != nil:
			byPod[l.Pod] = append(byPod[l.Pod], l)
		case l.Fragment:
			if o := l.Object(); o.Kind != "" && o.Kind != ClientKind && covered[o.key()] {
				// A named object's output (a DaemonSet's describe) whose object a
				// finding explains.
				continue
			}
			loose = append(loose, l)
		}
	}
	for _, p := range g.pods {
		key := p.meta.Namespace + "/" + p.meta.Name
		if roots[key] != nil || covered[p.Ref().key()] || g.scopedOut(p) {
			continue
		}
		if f := unexplainedPod(g, p, byPod[p]); f != nil {
			out = append(out, f)
		}
	}
	out = append(out, unexplainedObjects(g, lines, covered)...)
	out = append(out, unexplainedNodes(g, covered)...)
	if len(g.pods) == 0 {
		// Only node-agent lines: each node's journal is a subject of its own.
		var journal []*Line
		for i := range lines {
			if l := &lines[i]; l.Kind() == TextJournal && !l.Fragment && l.Pod == nil {
				journal = append(journal, l)
			}
		}
		loose = append(loose, journal...)
	}
	explained := slices.ContainsFunc(fs, func(f *Finding) bool { return f.Rule != UnexplainedRule && !f.History })
	fragments := unexplainedFragments(loose, citedFiles, excerpts, explained, false)
	if !explained && len(out) == 0 && len(fragments) == 0 {
		// Nothing else shows trouble: a pasted log line without a level still is, when
		// the catalog reads it as a failure its component prints (CoreDNS's
		// "plugin/forward: no nameservers found"). Only then, so that the plain lines of
		// a healthy component beside a finding never become roots of their own.
		fragments = unexplainedFragments(loose, citedFiles, excerpts, explained, true)
	}
	return append(out, fragments...)
}

func unexplainedPod(g *Graph, p *Pod, lines []*Line) *Finding {
	if positivelyHealthy(p) {
		// Running, Ready and never restarted (or Succeeded): an old Warning event is
		// history, not trouble.
		return nil
	}
	all := podTrouble(g, p, lines)
	// A sign at a stage the pod later got past is history: the sandbox that failed
	// before it was created does not make the pod broken at sandbox now.
	signs := slices.DeleteFunc(slices.Clone(all), func(s trouble) bool {
		return g.isHistory(s.stage, []ObjectRef{p.Ref()}, []Evidence{s.ev})
	})
	if len(signs) == 0 {
		// Every sign is of a stage the pod got past, and nothing shows it healthy now
		// (a container that failed to start and runs again, not known to be ready):
		// the past is all the evidence says, and it is said as the past it is (the
		// finding is marked history), never dropped for "No finding".
		signs = all
	}
	if slices.ContainsFunc(signs, func(s trouble) bool { return s.crash }) {
		// A crash-looping pod's log is read as the crash's reason (crashedFromLog): a
		// line the catalog places before the start stage is no sign of its own there.
		signs = slices.DeleteFunc(signs, trouble.own)
	}
	if slices.ContainsFunc(signs, func(s trouble) bool { return s.logRead }) {
		// The crash is what the log's failure did: its line is the sign to read.
		signs = slices.DeleteFunc(signs, func(s trouble) bool { return s.crash })
	}
	signs = narrowed(signs)
	if len(signs) == 0 {
		return nil
	}
	stage := signs[0].stage
	for _, s := range signs {
		if s.stage.Order() < stage.Order() {
			stage = s.stage
		}
	}
	var at []trouble
	for _, s := range signs {
		if s.stage == stage {
			at = append(at, s)
		}
	}
	slices.SortStableFunc(at, func(a, b trouble) int {
		if a.weight != b.weight {
			return b.weight - a.weight
		}
		if ka, kb := a.read.known(), b.read.known(); ka != kb {
			if ka {
				return -1
			}
			return 1
		}
		return tellingScore(b.what) - tellingScore(a.what)
	})
	subjects := []ObjectRef{p.Ref()}
	if n := p.Obj.Spec.NodeName; n != "" {
		subjects = append(subjects, NodeRef(n))
	}
	var ev []Evidence
	for i, s := range at {
		if i == 3 {
			break
		}
		ev = append(ev, s.ev)
	}
	name := p.meta.Name
	switch {
	case isPartial(p, "name"):
		name = "(its name is not in the evidence)"
	case p.meta.Namespace != "" && !isPartial(p, "namespace"):
		name = p.meta.Namespace + "/" + name
	}
	if read := at[0].read; read.known() && (read.stage() == stage || at[0].own()) {
		return &Finding{Rule: CatalogRule, Stage: stage, Severity: SeverityError, Title: catalogTitle,
			Subjects: subjects, Cause: "pod " + name + " is broken at the " + string(stage) + " stage: " + read.cause(),
			Evidence: ev, Remediation: wouldExplain[stage], Catalog: read.refs(),
			Confirm: []string{podCommand("kubectl describe pod", p)}}
	}
	cause := "pod " + name + " is broken at the " + string(stage) + " stage: " + at[0].what +
		"; no podflow rule or signature knows this evidence"
	return &Finding{Rule: UnexplainedRule, Stage: stage, Severity: SeverityError, Title: "trouble no rule explains",
		Subjects: subjects, Cause: cause, Evidence: ev, Remediation: wouldExplain[stage],
		Confirm: []string{podCommand("kubectl describe pod", p)}}
}

// SpecKnown reports whether the evidence held the pod's spec. A pod an import built
// from a fragment (an event row, a describe State block) has none: a rule must not
// read "no memory limit" or "no probe" into its absence.
func SpecKnown(p *Pod) bool { return !isPartial(p, "spec") }

// isPartial reports whether the import that built the pod did not know what.
func isPartial(p *Pod, what string) bool { return Partial(*p.meta, what) }

// Partial reports whether the import that built an object from a fragment did not know
// what of it ("spec", "name", "namespace", "status"): a rule must not read a default
// into a field the evidence never showed.
func Partial(meta metav1.ObjectMeta, what string) bool {
	v, ok := meta.Annotations[partialAnnotation]
	return ok && slices.Contains(strings.Split(v, ","), what)
}

// partialAnnotation mirrors bundle.PartialAnnotation for objects an import built from
// fragments.
const partialAnnotation = "podflow.dev/partial"

// podTrouble lists what the pod's evidence shows wrong, each sign with its stage.
func podTrouble(g *Graph, p *Pod, lines []*Line) []trouble {
	var out []trouble
	pod := p.Obj
	healthy := positivelyHealthy(p)
	for _, l := range lines {
		if healthy && l.Kind() != TextEvent && l.Kind() != TextStatus {
			// An app that runs, is ready and never restarted may log the word "error":
			// its own log lines alone do not make it broken.
			continue
		}
		switch l.Kind() {
		case TextEvent:
			if !l.Warning && !strings.HasPrefix(l.Reason(), "Failed") && l.Reason() != "BackOff" {
				// The kubelet records a pull it backs off from as a Normal BackOff
				// event (pkg/kubelet/images BackOffPullImage): trouble all the same.
				continue
			}
			st, ok := eventStages[l.Reason()]
			read := readLine(l)
			crash := false
			switch {
			case l.Reason() == "Failed" || l.Reason() == "BackOff":
				st = textStage(l.Text, StageRuntime)
				if read.known() {
					st = read.stage()
				}
				if strings.Contains(strings.ToLower(l.Text), "restarting failed container") {
					st, crash = StageRuntime, true
				}
			case !ok && read.known():
				st = read.stage()
			case !ok:
				st = textStage(l.Reason()+" "+l.Text, StageRuntime)
			}
			out = append(out, trouble{stage: st, what: l.Reason() + ": " + oneLine(l.Text), ev: l.Evidence(), weight: 30, read: read, crash: crash})
		case TextStatus:
			if !l.Warning {
				continue
			}
			if l.Container() == "" {
				if st, what, ok := kubectlStatusWord(l.Reason()); ok {
					out = append(out, trouble{stage: st, what: joinNonEmpty(what, oneLine(l.Text)), ev: l.Evidence(), weight: 20, spans: statusSpans[l.Reason()]})
					continue
				}
			}
			st, ok := waitingStages[l.Reason()]
			read := readLine(l)
			switch {
			case !ok && read.known():
				st = read.stage()
			case !ok:
				st = textStage(l.Reason()+" "+l.Text, StageRuntime)
			}
			crash := l.Reason() == "CrashLoopBackOff" || l.Reason() == "Error"
			if crash {
				st = exitStage(pod, l.Container(), st)
			}
			out = append(out, trouble{stage: st, what: joinNonEmpty(l.Reason(), oneLine(l.Text)), ev: l.Evidence(), weight: 20, read: read, crash: crash && st == StageRuntime, spans: statusSpans[l.Reason()]})
		case TextJournal, TextText:
			if !l.Warning && l.Kind() == TextJournal {
				continue
			}
			read := readLine(l)
			if !looksLikeError(l.Text) && !read.known() {
				continue
			}
			def := StageNode
			if l.Kind() == TextText && programLevelLine(l.Text) {
				// A program's own log line, by the level it writes after its time
				// ("2018-12-28 14:22:30 +0000 [error]: …", "level=error"), pasted
				// without a journal's program: a container's output far more often
				// than a node agent's.
				def = StageRuntime
			}
			st := textStage(l.Text, def)
			if read.known() {
				st = read.stage()
			}
			out = append(out, trouble{stage: st, what: oneLine(l.Text), ev: l.Evidence(), weight: 10, read: read})
		case TextLog:
			if read := readLine(l); read.known() {
				st := read.stage()
				if st.Order() < StageStart.Order() {
					// The container's own program printed it, so this pod got past its
					// sandbox, volumes and image to run it: what the line reports is the
					// failure of that run (a CNI daemon that cannot read its config), at
					// whatever stage it breaks the pods that need the program.
					st = StageRuntime
				}
				out = append(out, trouble{stage: st, what: "the container's log says " + oneLine(l.Text), ev: l.Evidence(), weight: 25, read: read, logRead: true})
			} else if l.Warning && reFatalLevelLine.MatchString(strings.TrimSpace(l.Text)) {
				// The program's own fatal line ("level=fatal msg=\"Error starting manager:
				// …\""): the exit the crash loop repeats, said by the program.
				out = append(out, trouble{stage: StageRuntime, what: "the container's log says " + oneLine(l.Text), ev: l.Evidence(), weight: 25, logRead: true})
			} else if l.Warning {
				out = append(out, trouble{stage: StageRuntime, what: "the container's log says " + oneLine(l.Text), ev: l.Evidence(), weight: 5})
			}
		}
	}
	loc := p.Loc.At("status")
	switch {
	case pod.Status.Phase == corev1.PodPending && len(pod.Status.ContainerStatuses) == 0 && pod.Spec.NodeName == "" && !scheduled(pod):
		out = append(out, trouble{stage: StageScheduling, what: "the pod is Pending and not scheduled", ev: loc.Evidence("phase: Pending, no node", time.Time{}), weight: 1})
	case pod.Status.Phase == corev1.PodPending && len(pod.Status.ContainerStatuses) == 0 && len(pod.Status.InitContainerStatuses) == 0 &&
		pod.Status.Reason == "" && pod.Spec.NodeName != "":
		// Bound, yet kubectl still prints Pending: the kubelet reports ContainerCreating
		// or PodInitializing for a pod it has begun, so the node has not started this one.
		out = append(out, trouble{stage: StageNode, what: "the pod is Pending on node " + pod.Spec.NodeName + " and none of its containers was created",
			ev: loc.Evidence("phase: Pending, node "+pod.Spec.NodeName+", no container status", time.Time{}), weight: 1})
	case pod.Status.Phase == corev1.PodUnknown:
		out = append(out, trouble{stage: StageNode, what: "the pod's phase is Unknown: its node stopped reporting", ev: loc.Evidence("phase: Unknown", time.Time{}), weight: 1})
	case pod.Status.Phase == corev1.PodRunning && !IsReady(p) && !isPartial(p, "status") && hasReadyCondition(p):
		out = append(out, trouble{stage: StageProbe, what: "the pod runs but is not Ready", ev: loc.Evidence("Ready: False", time.Time{}), weight: 1})
	}
	for _, c := range Containers(p) {
		if c.Status == nil {
			continue
		}
		if c.Status.RestartCount > 0 && c.Status.LastTerminationState.Terminated == nil && c.Status.State.Waiting == nil {
			out = append(out, trouble{stage: StageRuntime, what: "container " + c.Name + " restarted " + itoa(int(c.Status.RestartCount)) + " times",
				ev: c.StatusLoc().At("restartCount").Evidence("restartCount: "+itoa(int(c.Status.RestartCount)), time.Time{}), weight: 1, crash: true})
		}
	}
	if pod.DeletionTimestamp != nil && !g.collectedAt.IsZero() && g.collectedAt.Sub(pod.DeletionTimestamp.Time) > 10*time.Minute {
		out = append(out, trouble{stage: StageTermination, what: "the pod was deleted at " + pod.DeletionTimestamp.UTC().Format(time.RFC3339) + " and still exists",
			ev: p.Loc.At("metadata", "deletionTimestamp").Evidence("deletionTimestamp: "+pod.DeletionTimestamp.UTC().Format(time.RFC3339), pod.DeletionTimestamp.Time), weight: 1})
	}
	return out
}

// positivelyHealthy reports whether the pod's status shows it well: Succeeded, or
// Running and Ready with no container restarted.
func positivelyHealthy(p *Pod) bool {
	st := &p.Obj.Status // not a copy: this runs for every line of every signature
	if st.Phase == corev1.PodSucceeded {
		return true
	}
	if st.Phase != corev1.PodRunning || !IsReady(p) {
		return false
	}
	for _, c := range st.ContainerStatuses {
		if c.RestartCount > 0 {
			return false
		}
	}
	return true
}

func hasReadyCondition(p *Pod) bool {
	c, _ := PodCondition(p, corev1.PodReady)
	return c != nil
}

// exitStage places a crash by its exit code: 126, 127 and 128 mean the process never
// started (not executable, not found, runtime could not start it).
func exitStage(pod *corev1.Pod, container string, def Stage) Stage {
	for _, st := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		if st.Name != container {
			continue
		}
		for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
			if t != nil && (t.ExitCode == 126 || t.ExitCode == 127 || t.ExitCode == 128) {
				return StageStart
			}
		}
	}
	return def
}

// selfRepaired are the Warning events a component records as it repairs what it found
// (kube-apiserver's allocator repair loops, pkg/registry/core/service/ipallocator and
// portallocator controller/repair.go: "Cluster IP [IPv4]:10.96.0.12 is not allocated;
// repairing", "Port 30080 is not allocated; repairing"). A new Service whose allocation
// the loop saw half-written gets one; the repair is done as it is recorded.
var selfRepaired = map[string]bool{"ClusterIPNotAllocated": true, "PortNotAllocated": true}

// unexplainedObjects covers Warning events about objects other than pods (a
// ReplicaSet's FailedCreate, a PVC's ProvisioningFailed) that nothing explains.
func unexplainedObjects(g *Graph, lines []Line, covered map[string]bool) []*Finding {
	byObj := map[string][]*Line{}
	var keys []string
	for i := range lines {
		l := &lines[i]
		if l.Kind() != TextEvent || l.Pod != nil || !l.Warning && !strings.HasPrefix(l.Reason(), "Failed") || l.Object().Kind == "" || l.Object().Kind == "Pod" && g.FindPod(l.Object().Namespace, l.Object().Name) != nil {
			continue
		}
		k := l.Object().key()
		if covered[k] || selfRepaired[l.Reason()] {
			continue
		}
		if _, ok := byObj[k]; !ok {
			keys = append(keys, k)
		}
		byObj[k] = append(byObj[k], l)
	}
	var out []*Finding
	for _, k := range keys {
		ls := byObj[k]
		l := ls[len(ls)-1]
		st, ok := eventStages[l.Reason()]
		read := readObjectLine(l)
		switch {
		case !ok && read.known():
			st = read.stage()
		case !ok:
			st = textStage(l.Reason()+" "+l.Text, StageController)
		}
		var ev []Evidence
		for i := len(ls) - 1; i >= 0 && len(ev) < 3; i-- {
			ev = append(ev, ls[i].Evidence())
		}
		if read.known() && read.stage() == st {
			out = append(out, &Finding{Rule: CatalogRule, Stage: st, Severity: SeverityError, Title: catalogTitle,
				Subjects: []ObjectRef{l.Object()}, Evidence: ev, Remediation: wouldExplain[st], Catalog: read.refs(),
				Cause: strings.ToLower(l.Object().Kind) + " " + l.Object().NamespacedName() + " is broken at the " + string(st) + " stage: " + read.cause()})
			continue
		}
		out = append(out, &Finding{Rule: UnexplainedRule, Stage: st, Severity: SeverityError, Title: "trouble no rule explains",
			Subjects: []ObjectRef{l.Object()}, Evidence: ev, Remediation: wouldExplain[st],
			Cause: strings.ToLower(l.Object().Kind) + " " + l.Object().NamespacedName() + " reports " + l.Reason() + ": " + oneLine(l.Text) +
				"; no podflow rule or signature knows this evidence"})
	}
	return out
}

// reConditionMessage is a condition's Message in a describe's flattened Status block
// ("Conditions: Last Transition Time: … Message: no response from …: connection refused
// Reason: FailedDiscoveryCheck Status: False Type: Available").
var reConditionMessage = regexp.MustCompile(`\bMessage:\s+(.+?)\s+(?:Reason|Status|Type|Last \w+ Time|Observed Generation):\s`)

// componentWords is the hint of a text known to be a component's words, not a
// reporter's (a condition's Message, a line the floor quotes as trouble): the catalog
// reads it whole even where it reads like a sentence.
const componentWords = "a component's words"

// readObjectLine reads a line through the catalog; a line the catalog does not read as
// a reporter's sentence is read as a component's when it is one (componentReading), and
// a describe's flattened Status block by its condition's Message, what the component
// printed.
func readObjectLine(l *Line) chainRead {
	if read := readLine(l); read.known() {
		return read
	}
	if read := componentReading(l.Text); read.known() {
		return read
	}
	if m := reConditionMessage.FindStringSubmatch(l.Text); m != nil {
		// A controller wrote it into the object's status: it is no reporter's sentence.
		return readChain(m[1], componentWords)
	}
	return chainRead{}
}

// componentReading is the catalog's reading of a text that reads like a sentence but is
// a component's message: a chain of wrapped errors ("MountVolume.SetUp failed for volume
// …: rpc error: …: provider not found: …"), or a message from its first word. A sentence
// that only quotes a reason ("… can't be recreated (ErrImagePull)") is the reporter's:
// the zero reading.
func componentReading(text string) chainRead {
	text = strings.TrimSpace(text)
	r := readChain(text, componentWords)
	if !r.known() {
		return chainRead{}
	}
	if len(r.layers) >= 3 || r.outer.Layer == 0 && strings.HasPrefix(text, r.outer.Text[:min(len(r.outer.Text), 24)]) {
		return r
	}
	return chainRead{}
}

// unexplainedNodes covers nodes whose Ready condition is not True, or that report
// pressure, when nothing explains them.
func unexplainedNodes(g *Graph, covered map[string]bool) []*Finding {
	var out []*Finding
	for _, n := range g.nodes {
		if covered[n.Ref().key()] {
			continue
		}
		for i, c := range n.Obj.Status.Conditions {
			bad := (c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue) ||
				(c.Type != corev1.NodeReady && c.Status == corev1.ConditionTrue)
			if !bad {
				continue
			}
			what := string(c.Type) + "=" + string(c.Status)
			if c.Message != "" {
				what += ": " + oneLine(c.Message)
			}
			out = append(out, &Finding{Rule: UnexplainedRule, Stage: StageNode, Severity: SeverityError, Title: "trouble no rule explains",
				Subjects: []ObjectRef{n.Ref()}, Remediation: wouldExplain[StageNode],
				Evidence: []Evidence{n.Loc.At("status", "conditions", i).Evidence(what, c.LastTransitionTime.Time)},
				Cause:    "node " + n.meta.Name + " reports " + what + "; no podflow rule or signature knows this evidence"})
			break
		}
	}
	return out
}

// adoptLonePod gives the evidence's only pod to the finding that explains it when the
// paste did not tie them: a pod no finding covers, whose trouble (unexplainedPod) sits
// at the stage of exactly one finding about no pod (a scheduler message quoted in the
// ticket's text beside the pod's describe). It reports whether it did.
func adoptLonePod(g *Graph, fs []*Finding, roots map[string]*Finding) bool {
	if len(g.pods) != 1 {
		return false
	}
	p := g.pods[0]
	if roots[p.meta.Namespace+"/"+p.meta.Name] != nil {
		return false
	}
	for _, f := range fs {
		for _, s := range f.Subjects {
			if s.key() == p.Ref().key() && !f.History {
				return false
			}
		}
	}
	var lines []*Line
	all := g.Lines()
	for i := range all {
		if all[i].Pod == p {
			lines = append(lines, &all[i])
		}
	}
	trouble := unexplainedPod(g, p, lines)
	if trouble == nil {
		return false
	}
	var adopter *Finding
	for _, f := range fs {
		if f.History || isFloor(f.Rule) || f.Stage != trouble.Stage || slices.ContainsFunc(f.Subjects, namedPod) {
			continue
		}
		if adopter != nil {
			return false
		}
		adopter = f
	}
	if adopter == nil {
		return false
	}
	// The pod the paste did not name ("the pod in this describe") is the one it has.
	rest := slices.DeleteFunc(slices.Clone(adopter.Subjects), func(s ObjectRef) bool { return s.Kind == "Pod" })
	adopter.Subjects = append([]ObjectRef{p.Ref()}, rest...)
	return true
}

// namedPod reports whether a subject is a pod the evidence names.
func namedPod(s ObjectRef) bool {
	return s.Kind == "Pod" && s.Name != UnknownSubject && s.UnnamedIn == ""
}

// joinedLines reports whether a line is several lines of a paste read together.
func joinedLines(l *Line) bool {
	e := l.Evidence()
	return e.EndLine > e.Line
}

// reporterText reports whether a pasted line is the reporter's own writing rather than
// a component's output: a sentence (isProse), a heading that introduces what follows
// ("Error:", "The error is:"), or a numbered step of a reproduction ("3. observe
// error"). Such a line is trouble only as far as it quotes a message the catalog knows.
func reporterText(s string) bool {
	s = strings.TrimSpace(s)
	if programLine(s) {
		// A program's line under its time and level ("09:15:54.978 [main] ERROR
		// o.a.b.LegacyCookieValidation - Cookie for this bookie is not stored …"), or
		// an exception its runtime printed ("java.lang.IllegalArgumentException:
		// Error creating broker listeners from …"), however much it reads like a
		// sentence.
		return false
	}
	if errorChain(s) {
		// "failed to start: daemon creation failed: error while initializing daemon: …"
		// reads like a sentence, and is a program's error as it wrapped it.
		return false
	}
	if isProse(s) || reNumberedStep.MatchString(s) {
		return true
	}
	if strings.HasSuffix(s, ":") && len(strings.Fields(s)) <= 14 && !strings.Contains(s, ": ") {
		// A line that introduces what follows ("all 3 pods stuck
		// `CreateContainerConfigError`:"): a component's message that a line break cut
		// after a colon has said something before it.
		return true
	}
	if h := reHeading.FindString(s); h != "" {
		// A heading alone, or followed by the command the reporter ran.
		rest := strings.TrimLeft(s[len(h):], " `$")
		return rest == "" || len(strings.Fields(rest)) > 1 && cmdline.IsClient(cmdline.Program(rest))
	}
	return false
}

var (
	// reNumberedStep is a numbered step of a how-to-reproduce list: "3. observe
	// error", "2) run helm install".
	reNumberedStep = regexp.MustCompile(`^\d{1,2}[.)]\s+[a-z][a-z ]*$`)
	// reHeading is a few words that introduce what follows: "Error:", "The error is",
	// "I get the following error:".
	reHeading = regexp.MustCompile(`^(?:[\w']+ ){0,4}(?:[\w']+:|(?:is|was|are|were|below|following))(?:\s|$)`)
)

// reConfigSetting is a setting of a configuration file: a key of one word (TOML, INI
// or YAML, dotted or quoted), "=" or ":", and its value.
var reConfigSetting = regexp.MustCompile(`^\s*(?:-\s+)?["']?[A-Za-z_][\w.\-]*["']?\s*(?:=|:)\s*(\S.*)?$`)

// configSetting reports whether s is a configuration setting whose value says nothing
// of trouble: the error words of such a line are in its key.
func configSetting(s string) bool {
	if reToleration.MatchString(s) {
		return true
	}
	m := reConfigSetting.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	if v := m[1]; len(v) < len(s) && reConfigSetting.MatchString(v) && !reMessageKey.MatchString(v) {
		// A manifest's keys a paste read as one paragraph ("spec:" and the
		// "validationFailureAction: Enforce" under it): the innermost setting tells.
		return configSetting(v)
	}
	return !looksLikeError(m[1])
}

// reQuietLevel is a log line's own level at info, debug or trace: a structured field, or
// the bracketed or bare level after the line's time ("[Wed Jan 27 13:04:45 UTC 2021]
// [INFO] …", "2021-01-27 13:04:45,120 INFO …", "09:15:54.921 [main] DEBUG …").
var reQuietLevel = regexp.MustCompile(`\blevel=(?:info|debug|trace)\b|"level":\s*"(?:info|debug|trace)"|^\s*\[[^\]]*\d\d:\d\d:\d\d[^\]]*\]\s+\[(?:INFO|DEBUG|TRACE|info|debug|trace)\]\s|` +
	logTime + `?(?:\d\d:\d\d:\d\d(?:[.,]\d+)?\s+(?:\[[^\]]*\]\s+)?)?\[?(?:INFO|DEBUG|TRACE)\]?\s`)

// reToleration is a toleration as kubectl describe prints it under Tolerations:
// "key[=value]:Effect op=Exists for 300s" (describe's tolerations table), the default
// tolerations every pod gets included ("node.kubernetes.io/unreachable:NoExecute
// op=Exists for 300s"): what the pod tolerates, not a taint a node has (a taint, as
// "Taints:" prints it, has no operator and no time).
var reToleration = regexp.MustCompile(`^\s*(?:Tolerations:\s+)?[\w./-]+(?:=[\w.-]*)?:(?:NoSchedule|PreferNoSchedule|NoExecute)?(?: op=Exists(?: for \d+s)?| for \d+s)\s*$`)

// reMessageKey is a key whose value is a message, not a setting.
var reMessageKey = regexp.MustCompile(`(?i)^\s*["']?(?:error|err|errors|msg|message|reason|status|fatal|warning|warn|panic|exception|cause|detail|description)["']?\s*[:=]`)

// severeEntry reports whether a pasted journal line is a log entry its program wrote at
// error or fatal severity (klog's E and F, a level=error or fatal): trouble by the
// program's own word, whatever its message says ("F1128 … cmd.go:161] mkdir
// /tmp/serving-cert-9", a fatal error its paste cut). The line's text is the entry's
// message; the excerpt keeps what was pasted.
func severeEntry(l *Line) bool {
	if !l.Fragment || l.Kind() != TextJournal {
		return false
	}
	e, k, _ := ParseJournalLine(l.Evidence().Excerpt, time.Time{})
	return k == LineEntry && (e.Severity == 'E' || e.Severity == 'F')
}

// unexplainedFragments covers each unattributed fragment file with error lines that
// no finding cites: "the container whose log this is", "the node this journal came from".
// With levelless, a container log's line without a level is trouble too when the
// catalog reads it.
func unexplainedFragments(lines []*Line, cited map[string]bool, excerpts []string, explained, levelless bool) []*Finding {
	byFile := map[string][]*Line{}
	var files []string
	var intros []*Line
	troubled := func(l *Line) bool { return l.Warning || l.Kind() == TextJournal || l.Kind() == TextText }
	// The lines the catalog reads, read once; its reading of a line of the paste
	// explains it as well as a finding does.
	read := map[*Line]bool{}
	for _, l := range lines {
		if (troubled(l) || levelless && l.Kind() == TextLog) && readLine(l).known() {
			read[l] = true
		}
	}
	explained = explained || len(read) > 0
	// A program's own error line in a log among the reporter's sentences ("After node is
	// restarted, es failed to start." above the log that says why) is what the trouble
	// is: the sentences the log holds around it only tell of it.
	logProgram := !explained && slices.ContainsFunc(lines, func(l *Line) bool {
		b, p := l.source()
		return l.Kind() == TextLog && !cited[b+"\x00"+p] && l.Warning && (looksLikeError(l.Text) || programLevelLine(l.Text)) && !reporterText(l.Text) && !configSetting(l.Text) &&
			!reQuietLevel.MatchString(l.Text)
	})
	for _, l := range lines {
		b, p := l.source()
		k := b + "\x00" + p
		if cited[k] || !troubled(l) && !read[l] {
			continue
		}
		known := read[l]
		if !looksLikeError(l.Text) && !known && !severeEntry(l) && !(l.Kind() == TextLog && programLevelLine(l.Text)) {
			continue
		}
		if !known && !l.Warning && joinedLines(l) {
			// Lines read together that say no trouble of their own (a manifest's
			// nested keys): their words are a setting's, not an error's.
			continue
		}
		if !known && reQuietLevel.MatchString(l.Text) {
			// A program's line at info or debug by its own level field ("level=info
			// msg=\"Endpoints restored\" failed=4"): a count or a word is no error it reports.
			continue
		}
		if !known && (reMarkdownHeading.MatchString(l.Text) || reMarkupLine.MatchString(l.Text)) {
			// The ticket's heading ("### Logs and Errors") titles what follows; an HTML
			// page's markup ("<title>403 Forbidden</title>") is what a server sent.
			continue
		}
		if !known && configSetting(l.Text) {
			// A configuration file's setting ("oom_score = -999", "failOnSwap: false")
			// names what it sets, not trouble.
			continue
		}
		if (explained || logProgram && l.Kind() == TextLog) && !known && reporterText(l.Text) {
			// What the reporter wrote around the messages a finding explains says
			// nothing a component printed: it is no root of its own.
			continue
		}
		if slices.ContainsFunc(excerpts, func(x string) bool { return strings.Contains(l.Text, x) }) {
			// The same message, pasted twice (a journal and systemctl status): a
			// finding already cites it.
			continue
		}
		if !known && introducesPaste(l.Text) {
			intros = append(intros, l)
			continue
		}
		if _, ok := byFile[k]; !ok {
			files = append(files, k)
		}
		byFile[k] = append(byFile[k], l)
	}
	if len(files) == 0 {
		// A sentence that only announces a paste ("Pod creation fails with:") is trouble
		// of its own only when nothing pasted after it is.
		for _, l := range intros {
			b, p := l.source()
			k := b + "\x00" + p
			if _, ok := byFile[k]; !ok {
				files = append(files, k)
			}
			byFile[k] = append(byFile[k], l)
		}
	}
	var out []*Finding
	for _, k := range files {
		ls := byFile[k]
		subj := ls[0].Subjects()
		def := StageNode
		if ls[0].Kind() == TextLog {
			def = StageRuntime
		}
		if st, ok := subjectStage(subj[0]); ok {
			def = st
		}
		pick := mostTelling(ls, 3)
		best := pick[0]
		// A line a component on the path prints is more telling than one it does not,
		// and a refusal more than the time-out its client gave up at (a drain's "global
		// timeout reached" after the evictions it waited on were refused).
		var read chainRead
		// systemd's word on a service that stopped is the outcome of the service's own
		// fatal line before it ("Validating runtime config: …"), which says why.
		fatal := lastFatalLine(ls)
		for _, l := range mostTelling(ls, len(ls)) {
			if fatal != nil && reUnitOutcome.MatchString(l.Text) {
				continue
			}
			if r := readObjectLine(l); r.known() {
				if !read.known() {
					read, best = r, l
				}
				if !r.timeOut() {
					read, best = r, l
					break
				}
			}
		}
		if !read.known() && fatal != nil {
			best = fatal
		}
		if best != pick[0] {
			rest := slices.DeleteFunc(slices.Clone(pick), func(l *Line) bool { return l == best })
			pick = append([]*Line{best}, rest[:min(len(rest), 2)]...)
		}
		stage := textStage(best.Text, def)
		if stage == StageNode && def == StageRequest && subj[0].Kind == ClientKind {
			// An API client's own output is the API server's answer to a request: the
			// node words in it name objects ("Kind=Certificate", a conversion
			// webhook's Service), not a node agent's trouble.
			stage = def
		}
		if ls[0].Kind() == TextText && !programLevelLine(best.Text) && programLine(best.Text) {
			// An exception's report pasted alone ("ValueError: Invalid value for
			// environment variable PHOENIX_PORT: …" under a Python traceback, a Java
			// exception, Perl's die): an application's, not a node agent's, which say
			// theirs at a level (klog, logfmt) and not as an exception.
			def = StageRuntime
		}
		if (ls[0].Kind() == TextLog || def == StageRuntime) && programLine(best.Text) {
			// A program's own line at its error level in a container's log: its
			// words name what the program works on ("Node failing to come up",
			// "volume", "certificate"), not a step of the pod's path; only a
			// phrase that says the step for sure moves it.
			stage = def
			if st, ok := phraseStage(best.Text); ok {
				stage = st
			}
		}
		if best == fatal && subj[0].Kind == "Node" && subj[0].Name != UnknownSubject {
			// A named node's journal: its fatal line is a node agent's (the runtime's,
			// the kubelet's), and the agent is down, whatever its words name ("runtime
			// config", "volume plugin").
			stage = def
		}
		if read.known() {
			stage = read.stage()
		}
		var ev []Evidence
		for _, l := range pick {
			ev = append(ev, l.Evidence())
		}
		what := "the node this journal came from"
		switch {
		case subj[0].Kind == "Container":
			what = "the container whose log this is"
		case subj[0].Kind == ClientKind:
			what = subj[0].Name + "'s own output"
		case subj[0].Kind != "Node":
			what = strings.ToLower(subj[0].Kind) + " " + subj[0].NamespacedName()
			if subj[0].Name == UnknownSubject {
				what = "the " + strings.ToLower(subj[0].Kind) + " (its name is not in the evidence)"
			}
		case subj[0].Name != UnknownSubject:
			what = "node " + subj[0].Name
		case ls[0].Kind() == TextText:
			what = "the pasted text"
		}
		if read.known() {
			if subj[0].Kind == "Container" && read.outer.Entry.Component != "" {
				what = "the evidence"
			}
			out = append(out, &Finding{Rule: CatalogRule, Stage: stage, Severity: SeverityError, Title: catalogTitle,
				Subjects: subj, Evidence: ev, Remediation: wouldExplain[stage], Catalog: read.refs(),
				Cause: what + " shows trouble at the " + string(stage) + " stage: " + read.cause()})
			continue
		}
		out = append(out, &Finding{Rule: UnexplainedRule, Stage: stage, Severity: SeverityError, Title: "trouble no rule explains",
			Subjects: subj, Evidence: ev, Remediation: wouldExplain[stage],
			Cause: what + " reports " + oneLine(best.Text) + "; no podflow rule or signature knows this evidence",
			// A client that gave up waiting (kubectl rollout status, kubectl wait, helm
			// --wait: "timed out waiting for the condition") reports an outcome: what it
			// waited for failed elsewhere, and any trouble beside it explains it.
			outcome: subj[0].Kind == ClientKind && reClientWaitTimeout.MatchString(best.Text)})
	}
	return out
}

// reClientWaitTimeout is a client's wait that gave up: apimachinery's wait.ErrWaitTimeout
// ("timed out waiting for the condition"), as kubectl rollout status, kubectl wait and
// helm --wait print it.
var reClientWaitTimeout = regexp.MustCompile(`(?i)\btimed out waiting for (?:the condition|\S+ to )`)

// reUnitOutcome is systemd's line about a unit that stopped or did not start:
// "crio.service: Main process exited, code=exited, status=1/FAILURE", "…: Failed with
// result 'exit-code'", "Failed to start Container Runtime Interface for OCI (CRI-O)".
var reUnitOutcome = regexp.MustCompile(`(?:^|systemd\[\d+\]: )(?:[\w@.-]+\.service: (?:Main process exited|Failed with result|Control process exited)|Failed to start )`)

// lastFatalLine is the last of lines at a program's fatal level, or nil: by its text, or
// by the line as pasted (a klog line read as a journal entry keeps its "F0317 …" header
// only there).
func lastFatalLine(ls []*Line) *Line {
	for i := len(ls) - 1; i >= 0; i-- {
		if reFatalLevelLine.MatchString(ls[i].Text) || reFatalLevelLine.MatchString(strings.TrimSpace(ls[i].Evidence().Excerpt)) {
			return ls[i]
		}
	}
	return nil
}

// introducesPaste reports whether a line is a reporter's sentence that only announces
// what follows it: a few words ending in a colon ("Pod creation fails with:", "I get
// this error:"), no message of a program's after it.
func introducesPaste(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, ":") && !strings.Contains(s[:len(s)-1], ": ") && len(strings.Fields(s)) <= 14 && !reLevelFirst.MatchString(s)
}

// subjectStage is where trouble no rule explains is placed when all that is known is
// the object it is about or the client that printed it: the stage whose component holds
// such an object (a workload's controller, a Service's endpoints, a namespace's
// deletion), or what the client talks to (kubectl the API server, a container CLI a
// registry, curl or nslookup a Service).
func subjectStage(s ObjectRef) (Stage, bool) {
	if s.Kind == ClientKind {
		st, ok := clientStages[s.Name]
		return st, ok
	}
	st, ok := kindStages[s.Kind]
	return st, ok
}

var clientStages = map[string]Stage{
	"kubectl": StageRequest, "oc": StageRequest, "helm": StageRequest,
	"docker": StageImage, "podman": StageImage, "nerdctl": StageImage, "crictl": StageImage, "ctr": StageImage,
	"curl": StageService, "wget": StageService, "telnet": StageService, "nc": StageService, "nslookup": StageService, "dig": StageService,
}

var kindStages = map[string]Stage{
	"APIService": StageRequest, "CustomResourceDefinition": StageRequest,
	"ResourceQuota": StageAdmission, "LimitRange": StageAdmission, "MutatingWebhookConfiguration": StageAdmission, "ValidatingWebhookConfiguration": StageAdmission,
	"Deployment": StageController, "DeploymentConfig": StageController, "ReplicaSet": StageController, "StatefulSet": StageController,
	"DaemonSet": StageController, "Job": StageController, "CronJob": StageController, "HorizontalPodAutoscaler": StageController,
	"PodDisruptionBudget":   StageController,
	"Node":                  StageNode,
	"PersistentVolumeClaim": StageVolume, "PersistentVolume": StageVolume, "StorageClass": StageVolume,
	"Service": StageService, "Endpoints": StageService, "EndpointSlice": StageService, "Ingress": StageService,
	"Namespace": StageTermination,
}

// catalogTitle is the title of a finding the catalog reads.
const catalogTitle = "trouble its component is known to print, no rule explains yet"

// wouldExplain says, per stage, what to look at and which evidence would explain the
// trouble.
var wouldExplain = map[Stage]string{
	StageRequest:     "Read the client's error in full (kubectl -v=6 shows each request and the API server's answer); check the context and identity (kubectl config current-context, kubectl auth whoami) and what it may do (kubectl auth can-i --list -n NAMESPACE). The API server's audit log and its own log name the user, verb, resource and reason.",
	StageAdmission:   "Read the owner's FailedCreate event or ReplicaFailure condition in full (kubectl describe replicaset/job); the API server's refusal names the quota, policy or webhook. Add the owner object and its events to the evidence.",
	StageController:  "Read the workload's status conditions and events (kubectl describe deployment/statefulset/job/cronjob/hpa); add them to the evidence.",
	StageScheduling:  "Read the FailedScheduling message in full: it says per reason how many nodes were ruled out. Add the node objects (kubectl get nodes -o yaml) to let podflow do the arithmetic.",
	StageNode:        "Look at the node's conditions (kubectl describe node) and the kubelet's journal around the time (journalctl -u kubelet); add both to the evidence.",
	StageSandbox:     "Read the FailedCreatePodSandBox message and the CNI plugin's pod or log on the node (journalctl -u kubelet -u containerd); add them to the evidence.",
	StageImage:       "Read the pull error in full (kubectl describe pod events, journalctl -u kubelet -u containerd): it carries the registry's answer. Try the pull on the node: crictl pull IMAGE.",
	StageVolume:      "Read the FailedMount/FailedAttachVolume message in full and the CSI driver's node and controller logs; add the PVC, PV and StorageClass to the evidence.",
	StageConfig:      "Read the CreateContainerConfigError message: it names the missing object or key. Add the pod spec and the ConfigMaps/Secrets it references (names only) to the evidence.",
	StageStart:       "Read the runtime's start error (kubectl describe pod, crictl inspect, journalctl -u containerd); it names the binary, path or permission.",
	StageRuntime:     "Read the previous container log (kubectl logs --previous) to its last lines: the process says why it exited. Add it and the pod's status (exit code, reason) to the evidence.",
	StageProbe:       "Read the Unhealthy events and test the probe from inside the pod (kubectl exec ... -- wget/curl the probe's path and port).",
	StageService:     "Compare the Service's selector and ports with the pods' labels and container ports (kubectl get endpointslices -l kubernetes.io/service-name=NAME).",
	StageTermination: "Look at the pod's finalizers, deletionTimestamp and node (kubectl get pod -o yaml); a finalizer's controller or the node holds it.",
}

// oneLine keeps a quoted message to one readable line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		cut := 240
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// podCommand is a kubectl command about the pod, its values shell-quoted; a name the
// evidence does not give, or that is not a valid Kubernetes name, is a placeholder.
func podCommand(verb string, p *Pod) string {
	caps := map[string]string{}
	if !isPartial(p, "name") {
		caps["pod"] = p.meta.Name
	}
	if !isPartial(p, "namespace") {
		caps["namespace"] = p.meta.Namespace
	}
	cmd, complete := fill(verb+" {pod} -n {namespace}", caps, true)
	if !complete {
		cmd += "   # fill in the <placeholders>: the evidence does not name them"
	}
	return cmd
}

// reNoise matches lines that say a failure happened without saying which: systemd's
// unit bookkeeping and the commands a user typed.
var reNoise = regexp.MustCompile(`(?i)(\.service: (main process exited|failed with result|unit entered failed state|scheduled restart job)|\.service (failed|holdoff time over)|^\s*(sudo |kubectl |\$ |# |journalctl |systemctl )|start request repeated too quickly|^\s*(started|stopped|starting|stopping) )`)

// reSpecific marks words of a line that names a cause.
var reSpecific = regexp.MustCompile(`(?i)(failed to|error:|err=|unable to|cannot|can't|denied|refused|not found|no such|invalid|exceeded|forbidden|panic|fatal|oom|x509|timed? ?out|misconfiguration|is not supported|mismatch|permission)`)

// reExceptionHead is a line an exception's report begins with: its class, qualified or
// not, and a colon ("java.lang.IllegalArgumentException: …", "ValueError: …",
// "System.IO.IOException: …"), or Ruby's frame before the message ("…/definition.rb:481:in
// `materialize': Could not find …").
var reExceptionHead = regexp.MustCompile(`^(?:\[[^\]]*\]\s*)?(?:[A-Za-z][\w$]*\.)*[A-Z][\w$]*(?:Exception|Error)(?::\s|$)|^\S+\.rb:\d+:in [\x60'][^'\x60]*': `)

// reTimedLevel is a log line's time of day, a thread or logger in brackets, and its
// level at error or worse (logback's and log4j's default layouts).
var reTimedLevel = regexp.MustCompile(`^(?:\d{4}[-/]\d\d[-/]\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+(?:\[[^\]]*\]\s+)?(?:ERROR|FATAL|SEVERE|CRITICAL)\b`)

// reBareException is an exception's report without a message: its class, a colon, and
// nothing or its stack frames ("…InvalidCookieException: at org.apache.…").
var reBareException = regexp.MustCompile(`^\s*(?:[a-z][\w$]*\.)*[A-Z][\w$]*(?:Exception|Error):\s*(?:at\s|$)`)

// reGaveUpOnly is a log line that ends at a program's summary of giving up, with no
// reason after it (Perl's "BEGIN failed--compilation aborted at FILE line N." after the
// error a module's load died of, MySQL's and MariaDB's "[ERROR] Aborting").
var reGaveUpOnly = regexp.MustCompile(`(?i)(?:\b(?:failed to|unable to|could not|cannot) (?:build|start|run|initiali[sz]e|launch|boot|create)(?:\s+(?:the|a|an))?(?:\s+[\w-]+){1,2}|\bapplication run failed)\s*[.!]?\s*$|^BEGIN failed--compilation aborted at |\]\s+Aborting\.?\s*$`)

// tellingScore rates how much a line says about a cause: specific error words and
// concrete values (quoted strings, paths, addresses) count; bookkeeping lines do not.
func tellingScore(s string) int {
	score := 0
	if reNoise.MatchString(s) {
		score -= 10
	}
	if reBareException.MatchString(s) {
		// An exception's class with no message, its stack frames after it: the
		// error the program logged before it says why.
		score -= 6
	}
	if reGaveUpOnly.MatchString(s) {
		// "Failed to build bookie server", "Application run failed": the program's
		// summary after the error that says why, which it logged first.
		score -= 4
	}
	score += 3 * min(3, len(reSpecific.FindAllStringIndex(s, -1)))
	score += min(3, strings.Count(s, `"`)/2)
	score += min(2, strings.Count(s, "/")/2)
	score += min(3, len(s)/80)
	return score
}

// mostTelling returns up to n lines, the most telling first, then the rest in their
// order.
func mostTelling(ls []*Line, n int) []*Line {
	idx := make([]int, len(ls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return tellingScore(ls[b].Text) - tellingScore(ls[a].Text) })
	if len(idx) > n {
		idx = idx[:n]
	}
	best := idx[0]
	rest := slices.Clone(idx[1:])
	slices.Sort(rest)
	out := []*Line{ls[best]}
	for _, i := range rest {
		out = append(out, ls[i])
	}
	return out
}
