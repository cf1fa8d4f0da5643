package analyze

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Pod sandbox failures: the FailedCreatePodSandBox events and runtime lines of each pod,
// the failing part classified once as a SandboxKind, and the evidence, fix and commands the
// sandbox rules share.

// The runtime's wording (containerd pkg/cri/server/sandbox_run.go and, in v2,
// internal/cri/server/podsandbox/sandbox_run.go; pkg/cri/config "no runtime for %q is
// configured"; github.com/containerd/go-cni errors.go "cni plugin not initialized";
// github.com/containernetworking/cni libcni/api.go "plugin %s failed (add): %w" with
// pluginDescription's type=%q name=%q) and the kubelet's
// (pkg/kubelet/kuberuntime/kuberuntime_sandbox.go, kuberuntime_manager.go).
var (
	reNoRuntime             = regexp.MustCompile(`no runtime for "([^"]*)" is configured`)
	reLookupRC              = regexp.MustCompile(`failed to lookup RuntimeClass (\S+):`)
	SandboxCNIPluginPattern = regexp.MustCompile(`plugin type="([^"]*)"(?: name="([^"]*)")? failed \((add|delete|check)\)`)
	reSandboxImage          = regexp.MustCompile(`failed to get sandbox image "([^"]*)"`)
	reRPCDesc               = regexp.MustCompile(`rpc error: code = \w+ desc = `)
	SandboxIDQuotePattern   = regexp.MustCompile(`"[0-9a-f]{64}"`)
	// host-local's allocator (containernetworking/plugins plugins/ipam/host-local/main.go
	// "failed to allocate for range %d: %v", backend/allocator/allocator.go "no IP
	// addresses available in range set: %s").
	reNoIPs = regexp.MustCompile(`no IP addresses available in range set: ([^\s"\\]+)`)
	// The other IP address managers' words for the same: amazon-vpc-cni-k8s
	// cmd/routed-eni-cni-plugin/cni.go ("failed to assign an IP address to container") and
	// ipamd's datastore ("no available IP/Prefix addresses"); cilium's agent answering the
	// CNI plugin (plugins/cilium-cni "unable to allocate IP via local cilium agent: %w" over
	// its allocator's "range is full"); Calico IPAM ("failed to request %d IPv4 addresses.
	// IPAM allocated only %d"); azure-vnet-ipam ("No available addresses") and Azure CNS
	// ("not enough IPs available").
	reIPAMExhausted = regexp.MustCompile(`failed to assign an IP address to container|(?:AssignPodIPAddress: |DataStore has )?no available IP/Prefix addresses|` +
		`unable to allocate IP via local cilium agent: .*?\brange is full|failed to request \d+ IPv[46] addresses\. IPAM allocated only \d+|` +
		`Failed to allocate (?:address|pool): (?:Failed to delegate: )?(?:Failed to allocate (?:address|pool): )?No available address(?:es| pools)|` +
		`not enough IPs available for [\w-]+`)
	reCiliumAgent = regexp.MustCompile(`via local (cilium) agent`)
)

// SandboxKind is the part of sandbox creation that failed. sandbox-ip-exhausted and
// sandbox-image-pull-failed each report one kind; sandbox-create-failed reports the
// others, leaving to those two the kinds that HasOwnRule names.
type SandboxKind string

// The sandbox failure kinds.
const (
	SandboxHandler       SandboxKind = "handler"
	SandboxPauseImage    SandboxKind = "pause-image"
	SandboxIPRangeUsedUp SandboxKind = "ip-exhausted"
	SandboxCNI           SandboxKind = "cni"
	SandboxOther         SandboxKind = "other"
)

// HasOwnRule reports whether a narrower rule than sandbox-create-failed reports the kind.
func (k SandboxKind) HasOwnRule() bool { return k == SandboxIPRangeUsedUp || k == SandboxPauseImage }

// SandboxPart is the part of sandbox creation that failed, told apart by the message.
type SandboxPart struct {
	Kind   SandboxKind
	What   string // for people: `runtime handler "kata" (RuntimeClass kata)`
	Detail string // the telling value: handler, plugin type, image
}

// ClassifySandboxError tells which part of sandbox creation the runtime's message names.
func ClassifySandboxError(msg string, pod *corev1.Pod) SandboxPart {
	rc := ""
	if pod.Spec.RuntimeClassName != nil {
		rc = *pod.Spec.RuntimeClassName
	}
	switch {
	case reNoRuntime.MatchString(msg):
		h := reNoRuntime.FindStringSubmatch(msg)[1]
		what := fmt.Sprintf("runtime handler %q", h)
		if rc != "" {
			what += " of RuntimeClass " + rc
		}
		return SandboxPart{Kind: SandboxHandler, What: what, Detail: h}
	case reLookupRC.MatchString(msg):
		name := reLookupRC.FindStringSubmatch(msg)[1]
		return SandboxPart{Kind: SandboxHandler, What: "RuntimeClass " + name, Detail: name}
	case reSandboxImage.MatchString(msg):
		img := reSandboxImage.FindStringSubmatch(msg)[1]
		return SandboxPart{Kind: SandboxPauseImage, What: fmt.Sprintf("pause (sandbox) image %q", img), Detail: img}
	case reNoIPs.MatchString(msg):
		return SandboxPart{Kind: SandboxIPRangeUsedUp, What: "CNI IP address management, whose range is used up", Detail: reNoIPs.FindStringSubmatch(msg)[1]}
	case reIPAMExhausted.MatchString(msg):
		w := reIPAMExhausted.FindString(msg)
		if m := reCiliumAgent.FindStringSubmatch(w); m != nil {
			w = m[1] + ": " + w[strings.LastIndex(w, "range is full"):]
		}
		return SandboxPart{Kind: SandboxIPRangeUsedUp, What: "CNI IP address management, which has no address left", Detail: w}
	case SandboxCNIPluginPattern.MatchString(msg):
		m := SandboxCNIPluginPattern.FindStringSubmatch(msg)
		what := fmt.Sprintf("CNI plugin %q", m[1])
		if m[2] != "" {
			what += fmt.Sprintf(" of network %q", m[2])
		}
		return SandboxPart{Kind: SandboxCNI, What: what, Detail: m[1]}
	case strings.Contains(msg, "cni plugin not initialized"):
		return SandboxPart{Kind: SandboxCNI, What: "CNI, which has no network configuration loaded", Detail: "not initialized"}
	case strings.Contains(msg, "failed to setup network for sandbox") || strings.Contains(msg, "failed to create network namespace"):
		return SandboxPart{Kind: SandboxCNI, What: "CNI network setup"}
	}
	return SandboxPart{Kind: SandboxOther, What: "the container runtime"}
}

// runtimeMessage is the runtime's own error: the kubelet's and gRPC's prefixes removed.
func runtimeMessage(msg string) string {
	if loc := reRPCDesc.FindStringIndex(msg); loc != nil {
		return strings.TrimSpace(msg[loc[1]:])
	}
	msg = strings.TrimPrefix(msg, "Failed to create pod sandbox: ")
	if _, rest, ok := strings.Cut(msg, "Failed to create sandbox for pod "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			return strings.TrimSpace(after)
		}
	}
	return strings.TrimSpace(msg)
}

// SandboxAttempt is what the bundle holds about one pod's failed sandbox creation.
type SandboxAttempt struct {
	Message string // the runtime's message
	Event   *Event
	Line    *JournalEntry
	Runtime *JournalEntry
	At      time.Time
}

// Tries says how often the kubelet tried, when the event counts more than one.
func (f SandboxAttempt) Tries() string {
	switch {
	case f.Event == nil || f.Event.Count <= 1:
	case f.Event.LastTime.IsZero():
		// A pasted event row gives an age, not a time.
		return fmt.Sprintf(" (%d attempts)", f.Event.Count)
	default:
		return fmt.Sprintf(" (%d attempts, the last at %s)", f.Event.Count, f.Event.LastTime.UTC().Format(time.RFC3339))
	}
	return ""
}

// FailedSandbox is a pod whose latest sandbox creation failed, with what
// ClassifySandboxError makes of the runtime's message.
type FailedSandbox struct {
	Pod     *Pod
	Failure SandboxAttempt
	Part    SandboxPart
}

// FailedSandboxes lists the pods, not being deleted, that wait for a sandbox the
// runtime failed to create: the three sandbox-creation rules split them by cause. A
// failure known only from an event or a pasted line has no pod to check; the
// unexplained check quotes it.
func (v *View) FailedSandboxes() []FailedSandbox {
	var out []FailedSandbox
	for _, fact := range v.SandboxFailures() {
		p := fact.Subject.Pod
		if p == nil || p.Obj.DeletionTimestamp != nil || !WaitingForSandbox(p) {
			continue
		}
		f, ok := latestSandboxFailure(fact)
		if !ok {
			continue
		}
		out = append(out, FailedSandbox{Pod: p, Failure: f, Part: ClassifySandboxError(f.Message, p.Obj)})
	}
	return out
}

// WaitingForSandbox reports whether a pod is bound and none of its containers has
// started: a sandbox failure of a pod that runs now was transient.
func WaitingForSandbox(p *Pod) bool {
	pod := p.Obj
	// A pod an import built from an excerpt (an event row) may show neither its node
	// nor its phase: the sandbox failure it shows says it is bound and waiting.
	shown := !isPartial(p, "status") && !isPartial(p, "spec")
	if pod.Spec.NodeName == "" && shown || pod.Status.Phase != corev1.PodPending && (shown || pod.Status.Phase != "") {
		return false
	}
	if c, _ := PodCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionTrue {
		return false
	}
	for _, c := range Containers(p) {
		if c.Status == nil {
			continue
		}
		if c.Status.State.Running != nil || c.Status.State.Terminated != nil || c.Status.LastTerminationState.Terminated != nil {
			return false
		}
	}
	return true
}

// latestSandboxFailure reads the runtime's message from the latest
// FailedCreatePodSandBox event or the kubelet's "CreatePodSandbox for pod failed" line,
// whichever is newer.
func latestSandboxFailure(fact SandboxFailure) (SandboxAttempt, bool) {
	f := SandboxAttempt{Event: fact.Event, Line: fact.Line, Runtime: fact.Runtime}
	if e := fact.Event; e != nil {
		f.Message, f.At = runtimeMessage(e.Message), e.LastTime
	}
	if e := fact.Line; e != nil {
		if err, ok := e.Field("err"); ok && (f.Message == "" || e.Time.After(f.At)) {
			f.Message, f.At = runtimeMessage(err), e.Time
		}
	}
	return f, f.Message != ""
}

// SandboxSubjects are the pod, its node and its workload.
func (v *View) SandboxSubjects(p *Pod) []ObjectRef {
	subjects := []ObjectRef{p.Ref(), NodeRef(p.Obj.Spec.NodeName)}
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
	}
	return subjects
}

// SandboxEvidence cites the failure's event, kubelet and runtime lines, and the pod's
// PodReadyToStartContainers condition.
func SandboxEvidence(p *Pod, f SandboxAttempt) []Evidence {
	needle := sandboxNeedle(f.Message)
	var evidence []Evidence
	if f.Event != nil {
		evidence = append(evidence, f.Event.EvidenceAround(needle))
	}
	if f.Line != nil {
		evidence = append(evidence, f.Line.EvidenceAround(needle))
	}
	if f.Runtime != nil {
		ev := f.Runtime.Evidence()
		ev.Excerpt = ExcerptAround(f.Runtime.Message, needle)
		evidence = append(evidence, ev)
	}
	if c, loc := PodCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionFalse {
		evidence = append(evidence, loc.Evidence(fmt.Sprintf("PodReadyToStartContainers False %s: %s", c.Reason, c.Message), c.LastTransitionTime.Time))
	}
	return evidence
}

// sandboxNeedle centres excerpts on the telling part of a long message.
func sandboxNeedle(msg string) string {
	for _, n := range []string{"no runtime for", "failed to lookup RuntimeClass", "failed to get sandbox image", "no IP addresses available", "IP address to container", "range is full", "plugin type=",
		"cni plugin not initialized", "failed to setup network", "failed to create network namespace"} {
		if strings.Contains(msg, n) {
			return n
		}
	}
	return msg
}

// SandboxFix is the remediation for the failed part on a node.
func SandboxFix(part SandboxPart, node string) string {
	switch part.Kind {
	case SandboxHandler:
		if strings.HasPrefix(part.What, "RuntimeClass ") {
			return fmt.Sprintf("Create %s again or remove runtimeClassName from the pod template.", part.What)
		}
		return fmt.Sprintf("Configure a runtime handler named %q in the container runtime of %s (containerd: a "+
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.%s] section, then restart containerd), or point the "+
			"RuntimeClass at a handler the nodes have; if only some nodes have it, set the RuntimeClass's scheduling.nodeSelector.",
			part.Detail, NodeWords(node), part.Detail)
	case SandboxCNI:
		return fmt.Sprintf("Repair the pod network on %s: the network plugin's pod there must run, its configuration must be in "+
			"/etc/cni/net.d and its binaries in /opt/cni/bin; read the plugin's own log for the error, and free or enlarge the pod "+
			"address range if it ran out.", NodeWords(node))
	case SandboxPauseImage:
		return fmt.Sprintf("Make the sandbox image %q available on %s: let the runtime reach and authenticate to its registry, "+
			"configure a mirror, or pre-load it; or set the runtime's sandbox image to one the node has.", part.Detail, NodeWords(node))
	}
	return fmt.Sprintf("Read the container runtime's journal on %s around the failure for the step that failed, and fix the "+
		"runtime's configuration or the node's state it names.", NodeWords(node))
}

// SandboxConfirm lists the commands that show the failed part live.
func SandboxConfirm(part SandboxPart, pod *corev1.Pod) []string {
	out := []string{Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreatePodSandBox", pod.Namespace, pod.Name)}
	switch {
	case part.Kind == SandboxHandler && pod.Spec.RuntimeClassName != nil:
		out = append(out, Command("kubectl get runtimeclass %s -o jsonpath='{.handler}'", *pod.Spec.RuntimeClassName))
	case part.Kind == SandboxCNI:
		out = append(out, Command("kubectl debug node/%s -it --image=busybox -- ls /host/etc/cni/net.d /host/opt/cni/bin", pod.Spec.NodeName))
	case part.Kind == SandboxPauseImage:
		out = append(out, Command("kubectl debug node/%s -it --image=busybox -- chroot /host crictl pull %s", pod.Spec.NodeName, Value(part.Detail)))
	}
	return append(out, Command("kubectl debug node/%s -it --image=busybox -- chroot /host journalctl -u containerd --since=-10m", pod.Spec.NodeName))
}
