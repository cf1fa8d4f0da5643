package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// Pod sandbox failures: the FailedCreatePodSandBox events and runtime lines of each pod,
// the failing part classified once as a sandboxKind, and the evidence, fix and commands the
// sandbox rules share.

// The runtime's wording (containerd pkg/cri/server/sandbox_run.go and, in v2,
// internal/cri/server/podsandbox/sandbox_run.go; pkg/cri/config "no runtime for %q is
// configured"; github.com/containerd/go-cni errors.go "cni plugin not initialized";
// github.com/containernetworking/cni libcni/api.go "plugin %s failed (add): %w" with
// pluginDescription's type=%q name=%q) and the kubelet's
// (pkg/kubelet/kuberuntime/kuberuntime_sandbox.go, kuberuntime_manager.go).
var (
	reNoRuntime      = regexp.MustCompile(`no runtime for "([^"]*)" is configured`)
	reLookupRC       = regexp.MustCompile(`failed to lookup RuntimeClass (\S+):`)
	reCNIPlugin      = regexp.MustCompile(`plugin type="([^"]*)"(?: name="([^"]*)")? failed \((add|delete|check)\)`)
	reSandboxImage   = regexp.MustCompile(`failed to get sandbox image "([^"]*)"`)
	reRPCDesc        = regexp.MustCompile(`rpc error: code = \w+ desc = `)
	reSandboxIDQuote = regexp.MustCompile(`"[0-9a-f]{64}"`)
	// host-local's allocator (containernetworking/plugins plugins/ipam/host-local/main.go
	// "failed to allocate for range %d: %v", backend/allocator/allocator.go "no IP
	// addresses available in range set: %s").
	reNoIPs = regexp.MustCompile(`no IP addresses available in range set: ([^\s"\\]+)`)
)

// sandboxKind is the part of sandbox creation that failed. sandbox-ip-exhausted and
// sandbox-image-pull-failed each report one kind; sandbox-create-failed reports the
// others, leaving to those two the kinds that hasOwnRule names.
type sandboxKind string

const (
	sandboxHandler       sandboxKind = "handler"
	sandboxPauseImage    sandboxKind = "pause-image"
	sandboxIPRangeUsedUp sandboxKind = "ip-exhausted"
	sandboxCNI           sandboxKind = "cni"
	sandboxOther         sandboxKind = "other"
)

// hasOwnRule reports whether a narrower rule than sandbox-create-failed reports the kind.
func (k sandboxKind) hasOwnRule() bool { return k == sandboxIPRangeUsedUp || k == sandboxPauseImage }

// sandboxPart is the part of sandbox creation that failed, told apart by the message.
type sandboxPart struct {
	kind   sandboxKind
	what   string // for people: `runtime handler "kata" (RuntimeClass kata)`
	detail string // the telling value: handler, plugin type, image
}

func classifySandboxError(msg string, pod *corev1.Pod) sandboxPart {
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
		return sandboxPart{kind: sandboxHandler, what: what, detail: h}
	case reLookupRC.MatchString(msg):
		name := reLookupRC.FindStringSubmatch(msg)[1]
		return sandboxPart{kind: sandboxHandler, what: "RuntimeClass " + name, detail: name}
	case reSandboxImage.MatchString(msg):
		img := reSandboxImage.FindStringSubmatch(msg)[1]
		return sandboxPart{kind: sandboxPauseImage, what: fmt.Sprintf("pause (sandbox) image %q", img), detail: img}
	case reNoIPs.MatchString(msg):
		return sandboxPart{kind: sandboxIPRangeUsedUp, what: "CNI IP address management, whose range is used up", detail: reNoIPs.FindStringSubmatch(msg)[1]}
	case reCNIPlugin.MatchString(msg):
		m := reCNIPlugin.FindStringSubmatch(msg)
		what := fmt.Sprintf("CNI plugin %q", m[1])
		if m[2] != "" {
			what += fmt.Sprintf(" of network %q", m[2])
		}
		return sandboxPart{kind: sandboxCNI, what: what, detail: m[1]}
	case strings.Contains(msg, "cni plugin not initialized"):
		return sandboxPart{kind: sandboxCNI, what: "CNI, which has no network configuration loaded", detail: "not initialized"}
	case strings.Contains(msg, "failed to setup network for sandbox") || strings.Contains(msg, "failed to create network namespace"):
		return sandboxPart{kind: sandboxCNI, what: "CNI network setup"}
	}
	return sandboxPart{kind: sandboxOther, what: "the container runtime"}
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

// sandboxFailure is what the bundle holds about one pod's failed sandbox creation.
type sandboxFailure struct {
	message string // the runtime's message
	event   *analyze.Event
	line    *analyze.JournalEntry
	runtime *analyze.JournalEntry
	at      time.Time
}

// tries says how often the kubelet tried, when the event counts more than one.
func (f sandboxFailure) tries() string {
	switch {
	case f.event == nil || f.event.Count <= 1:
	case f.event.LastTime.IsZero():
		// A pasted event row gives an age, not a time.
		return fmt.Sprintf(" (%d attempts)", f.event.Count)
	default:
		return fmt.Sprintf(" (%d attempts, the last at %s)", f.event.Count, f.event.LastTime.UTC().Format(time.RFC3339))
	}
	return ""
}

// failedSandbox is a pod whose latest sandbox creation failed, with what
// classifySandboxError makes of the runtime's message.
type failedSandbox struct {
	pod     *analyze.Pod
	failure sandboxFailure
	part    sandboxPart
}

// failedSandboxes lists the pods, not being deleted, that wait for a sandbox the
// runtime failed to create: the three sandbox-creation rules split them by cause. A
// failure known only from an event or a pasted line has no pod to check; the
// unexplained check quotes it.
func failedSandboxes(v *analyze.View) []failedSandbox {
	var out []failedSandbox
	for _, fact := range v.SandboxFailures() {
		p := fact.Subject.Pod
		if p == nil || p.Obj.DeletionTimestamp != nil || !waitingForSandbox(p) {
			continue
		}
		f, ok := latestSandboxFailure(fact)
		if !ok {
			continue
		}
		out = append(out, failedSandbox{pod: p, failure: f, part: classifySandboxError(f.message, p.Obj)})
	}
	return out
}

// waitingForSandbox reports whether a pod is bound and none of its containers has
// started: a sandbox failure of a pod that runs now was transient.
func waitingForSandbox(p *analyze.Pod) bool {
	pod := p.Obj
	if pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodPending {
		return false
	}
	if c, _ := analyze.PodCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionTrue {
		return false
	}
	for _, c := range analyze.Containers(p) {
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
func latestSandboxFailure(fact analyze.SandboxFailure) (sandboxFailure, bool) {
	f := sandboxFailure{event: fact.Event, line: fact.Line, runtime: fact.Runtime}
	if e := fact.Event; e != nil {
		f.message, f.at = runtimeMessage(e.Message), e.LastTime
	}
	if e := fact.Line; e != nil {
		if err, ok := e.Field("err"); ok && (f.message == "" || e.Time.After(f.at)) {
			f.message, f.at = runtimeMessage(err), e.Time
		}
	}
	return f, f.message != ""
}

// sandboxSubjects are the pod, its node and its workload.
func sandboxSubjects(v *analyze.View, p *analyze.Pod) []analyze.ObjectRef {
	subjects := []analyze.ObjectRef{p.Ref(), analyze.NodeRef(p.Obj.Spec.NodeName)}
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
	}
	return subjects
}

// sandboxEvidence cites the failure's event, kubelet and runtime lines, and the pod's
// PodReadyToStartContainers condition.
func sandboxEvidence(p *analyze.Pod, f sandboxFailure) []analyze.Evidence {
	needle := sandboxNeedle(f.message)
	var evidence []analyze.Evidence
	if f.event != nil {
		evidence = append(evidence, f.event.EvidenceAround(needle))
	}
	if f.line != nil {
		evidence = append(evidence, f.line.EvidenceAround(needle))
	}
	if f.runtime != nil {
		ev := f.runtime.Evidence()
		ev.Excerpt = analyze.ExcerptAround(f.runtime.Message, needle)
		evidence = append(evidence, ev)
	}
	if c, loc := analyze.PodCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionFalse {
		evidence = append(evidence, loc.Evidence(fmt.Sprintf("PodReadyToStartContainers False %s: %s", c.Reason, c.Message), c.LastTransitionTime.Time))
	}
	return evidence
}

// sandboxNeedle centres excerpts on the telling part of a long message.
func sandboxNeedle(msg string) string {
	for _, n := range []string{"no runtime for", "failed to lookup RuntimeClass", "failed to get sandbox image", "no IP addresses available", "plugin type=",
		"cni plugin not initialized", "failed to setup network", "failed to create network namespace"} {
		if strings.Contains(msg, n) {
			return n
		}
	}
	return msg
}

func sandboxFix(part sandboxPart, node string) string {
	switch part.kind {
	case sandboxHandler:
		if strings.HasPrefix(part.what, "RuntimeClass ") {
			return fmt.Sprintf("Create %s again or remove runtimeClassName from the pod template.", part.what)
		}
		return fmt.Sprintf("Configure a runtime handler named %q in the container runtime of node %s (containerd: a "+
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.%s] section, then restart containerd), or point the "+
			"RuntimeClass at a handler the nodes have; if only some nodes have it, set the RuntimeClass's scheduling.nodeSelector.",
			part.detail, node, part.detail)
	case sandboxCNI:
		return fmt.Sprintf("Repair the pod network on node %s: the network plugin's pod there must run, its configuration must be in "+
			"/etc/cni/net.d and its binaries in /opt/cni/bin; read the plugin's own log for the error, and free or enlarge the pod "+
			"address range if it ran out.", node)
	case sandboxPauseImage:
		return fmt.Sprintf("Make the sandbox image %q available on node %s: let the runtime reach and authenticate to its registry, "+
			"configure a mirror, or pre-load it; or set the runtime's sandbox image to one the node has.", part.detail, node)
	}
	return fmt.Sprintf("Read the container runtime's journal on node %s around the failure for the step that failed, and fix the "+
		"runtime's configuration or the node's state it names.", node)
}

func sandboxConfirm(part sandboxPart, pod *corev1.Pod) []string {
	out := []string{analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreatePodSandBox", pod.Namespace, pod.Name)}
	switch {
	case part.kind == sandboxHandler && pod.Spec.RuntimeClassName != nil:
		out = append(out, analyze.Command("kubectl get runtimeclass %s -o jsonpath='{.handler}'", *pod.Spec.RuntimeClassName))
	case part.kind == sandboxCNI:
		out = append(out, analyze.Command("kubectl debug node/%s -it --image=busybox -- ls /host/etc/cni/net.d /host/opt/cni/bin", pod.Spec.NodeName))
	case part.kind == sandboxPauseImage:
		out = append(out, analyze.Command("kubectl debug node/%s -it --image=busybox -- chroot /host crictl pull %s", pod.Spec.NodeName, analyze.Value(part.detail)))
	}
	return append(out, analyze.Command("kubectl debug node/%s -it --image=busybox -- chroot /host journalctl -u containerd --since=-10m", pod.Spec.NodeName))
}
