package rules

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// SandboxNetworkNotReady finds pods the kubelet does not start because the container
// runtime reports the pod network (CNI) not ready.
var SandboxNetworkNotReady = &analyze.Rule{
	ID:       "sandbox-network-not-ready",
	Stage:    analyze.StageSandbox,
	Title:    "node's pod network (CNI) is not ready",
	Doc:      sandboxNetworkNotReadyDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: sandboxNetworkNotReady,
}

const sandboxNetworkNotReadyDoc = `The container runtime reports its NetworkReady condition false, so the kubelet does
not even ask it for a sandbox of a pod that needs the pod network (any pod without
hostNetwork). Each attempt records a NetworkNotReady event, "network is not ready:
container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady
message:Network plugin returns error: cni plugin not initialized", and the kubelet logs
"Error syncing pod, skipping" with the same error; the pod stays Pending in
ContainerCreating. The same message makes the node's Ready condition False
(KubeletNotReady), which taints the node not-ready: only pods that tolerate the taint
(DaemonSets, such as the network plugin's own) are still placed there.

containerd says "cni plugin not initialized" when it has loaded no CNI configuration:
the directory it reads (/etc/cni/net.d by default) is empty or holds no valid file,
usually because the network plugin's DaemonSet pod has not written it yet (new node,
plugin crashing, plugin not installed) or something removed it. Pods already running
keep their network.

## Confirm on a live cluster

    kubectl get node NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}'
    kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=NODE   # the CNI agent
    kubectl debug node/NODE -it --image=busybox -- ls /host/etc/cni/net.d /host/opt/cni/bin
    kubectl debug node/NODE -it --image=busybox -- chroot /host crictl info   # status.conditions, lastCNILoadStatus

## Fix

Get the network plugin running on the node: its DaemonSet pod there must be up (read its
log), its configuration file must be in the runtime's CNI configuration directory and
its binaries in the binary directory (containerd: conf_dir and bin_dir in the CRI
plugin's cni section). containerd reloads the directory on change; the pods start on
the kubelet's next retry.
`

// networkNotReadyPrefix starts the kubelet's error and event (pkg/kubelet/errors.go
// NetworkNotReadyErrorMsg; kubelet.go SyncPod; the runtime condition is printed by
// pkg/kubelet/container/runtime.go RuntimeCondition.String, containerd's message by
// pkg/cri/server/status.go "Network plugin returns error: %v").
const networkNotReadyPrefix = analyze.NetworkNotReadyPrefix

// netNotReady is what the bundle holds about one pod waiting for the network.
type netNotReady struct {
	message string // the runtime's condition, after the kubelet's prefixes
	event   *analyze.Event
	line    *analyze.JournalEntry
	at      time.Time
}

func sandboxNetworkNotReady(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, f := range v.SandboxFailures() {
		p := f.Subject.Pod
		if p == nil || p.Obj.DeletionTimestamp != nil || p.Obj.Spec.HostNetwork || !analyze.WaitingForSandbox(p) {
			continue
		}
		w, ok := latestNetworkNotReady(f)
		if !ok || networkRecovered(v, p.Obj.Spec.NodeName, w.at) {
			continue
		}
		out = append(out, networkNotReadyFinding(v, p, w))
	}
	return out
}

// latestNetworkNotReady reads the runtime's condition from the latest NetworkNotReady
// event or the kubelet's line, whichever is newer.
func latestNetworkNotReady(f analyze.SandboxFailure) (netNotReady, bool) {
	w := netNotReady{event: f.NetworkEvent, line: f.NetworkLine}
	if e := f.NetworkEvent; e != nil {
		w.at, w.message = e.LastTime, strings.TrimPrefix(e.Message, networkNotReadyPrefix)
	}
	if e := f.NetworkLine; e != nil {
		err, _ := e.Field("err")
		if w.message == "" || e.Time.After(w.at) {
			w.message, w.at = strings.TrimPrefix(err, networkNotReadyPrefix), e.Time
		}
	}
	return w, w.message != ""
}

// networkRecovered reports whether the node's Ready condition turned True after the
// pod's last network error: the pod is then merely waiting for its next retry.
func networkRecovered(v *analyze.View, node string, at time.Time) bool {
	n := v.Node(node)
	if n == nil {
		return false
	}
	_, ready := analyze.NodeReady(n.Obj)
	return ready != nil && ready.Status == corev1.ConditionTrue && ready.LastTransitionTime.After(at)
}

func networkNotReadyFinding(v *analyze.View, p *analyze.Pod, w netNotReady) analyze.Finding {
	node := p.Obj.Spec.NodeName
	var evidence []analyze.Evidence
	if w.event != nil {
		evidence = append(evidence, w.event.EvidenceAround("NetworkReady=false"))
	}
	if w.line != nil {
		evidence = append(evidence, w.line.EvidenceAround("NetworkReady=false"))
	}
	state := ""
	if n := v.Node(node); n != nil {
		if idx, ready := analyze.NodeReady(n.Obj); ready != nil && strings.Contains(ready.Message, "NetworkReady=false") {
			evidence = append(evidence, n.Loc.At("status", "conditions", idx).Evidence(
				fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message), ready.LastTransitionTime.Time))
			state = fmt.Sprintf("; node %s has been Ready=%s for this since %s", node, ready.Status, phrase.Stamp(ready.LastTransitionTime.Time))
		}
	}
	tries := ""
	switch {
	case w.event == nil || w.event.Count <= 1:
	case w.event.LastTime.IsZero():
		tries = fmt.Sprintf(" (%d attempts)", w.event.Count)
	default:
		tries = fmt.Sprintf(" (%d attempts, the last at %s)", w.event.Count, phrase.Stamp(w.event.LastTime))
	}
	cause := fmt.Sprintf("the kubelet on node %s does not create the sandbox of pod %s because the container runtime reports the pod network not ready: %q%s%s",
		node, p.Ref().NamespacedName(), analyze.RuntimeNetworkMessage(w.message), tries, state)
	return analyze.Finding{
		Subjects: v.SandboxSubjects(p),
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Get the network plugin running on node %s: its DaemonSet pod there must be up, its configuration in the "+
			"runtime's CNI configuration directory (/etc/cni/net.d by default) and its binaries in /opt/cni/bin; the pods start on the "+
			"kubelet's next retry once the runtime reports NetworkReady=true.", node),
		Confirm: []string{
			analyze.Command("kubectl get node %s -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].message}'", node),
			analyze.Command("kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=%s", node),
			analyze.Command("kubectl debug node/%s -it --image=busybox -- ls /host/etc/cni/net.d /host/opt/cni/bin", node),
		},
		GroupKey: "network-not-ready\x00" + node + "\x00" + w.message,
	}
}
