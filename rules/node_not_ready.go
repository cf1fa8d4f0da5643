package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// NodeNotReady finds nodes that are not Ready, and the pods bound to them.
var NodeNotReady = &analyze.Rule{
	ID:       "node-not-ready",
	Stage:    analyze.StageNode,
	Title:    "node is not Ready",
	Doc:      nodeNotReadyDoc,
	Severity: analyze.SeverityCritical,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Nodes},
		Optional: []analyze.Kind{analyze.NodeLeases, analyze.Pods, analyze.Events, analyze.KubeletJournal},
	},
	Run: nodeNotReady,
}

const nodeNotReadyDoc = `The node's Ready condition is not True. "Unknown" with "Kubelet stopped posting node
status." means the node controller stopped hearing from the kubelet: its Lease in
kube-node-lease was not renewed within the grace period (50s by default), because the
machine is down or unreachable or the kubelet is not running. "False" (KubeletNotReady)
means the kubelet runs and reports a problem itself, such as the container runtime or
the CNI network not being ready. Pods bound to the node stop being Ready, new pods are
not scheduled there (node.kubernetes.io/not-ready and unreachable taints), and after
their toleration (300s by default) the pods are evicted and replaced elsewhere.
podflow also reports a node whose Lease is stale while Ready still says True: the
kubelet stopped and the node controller has not (yet) noticed.

The finding gives the Lease's last renewal and the last status heartbeat against the
bundle's collection time, and names what the Ready message says, from the kubelet's own
wording:

- "container runtime is down": the kubelet's last successful status call to the
  runtime (containerd, CRI-O) is older than its threshold: the runtime is stopped,
  crashed or its socket does not answer;
- "PLEG is not healthy: pleg was last seen active 3m20s ago; threshold is 3m0s": the
  kubelet's pod lifecycle event generator has not finished listing containers for over
  three minutes: the runtime hangs or answers too slowly (overloaded node, a stuck
  container, a storage or kernel problem);
- "container runtime not ready: RuntimeReady=false ...": the runtime answers and says
  it is not ready;
- "container runtime network not ready: NetworkReady=false ...": the pod network
  (CNI) is not ready. Pods that run keep running, so the finding then names the node
  only; pods waiting for a sandbox are sandbox-network-not-ready's.

When the kubelet's journal shows that its last run exited at start (it ends in the
kubelet's exit line, "command failed" with "failed to run Kubelet: ...", or "Failed to
start ContainerManager"), the finding says why: in the words of the node signature that
explains the first telling line of that run (the runtime endpoint unreachable, an
expired client certificate, a cgroup controller missing, ...), with its fix, else the
exit line's own error. A kubelet that exits at start never reports, so the node is
Unknown, not False, and only its journal says why.

Pods bound to a node that stopped reporting and that were deleted (by a user, a
controller, or the taint eviction controller once their toleration of the unreachable
taint ran out) stay Terminating: only the kubelet confirms a pod's end. The finding
names them; they go away once the kubelet returns or the Node is deleted (or, for a
node shut down for good, the node.kubernetes.io/out-of-service taint is set).

## Confirm on a live cluster

    kubectl get node NODE -o wide
    kubectl describe node NODE                     # Conditions, Taints, Events
    kubectl get lease -n kube-node-lease NODE -o jsonpath='{.spec.renewTime}'
    kubectl get pods -A --field-selector spec.nodeName=NODE
    # on the node: systemctl status kubelet; journalctl -u kubelet --since -30m

## Fix

For Unknown: bring the machine or its network back, or restart the kubelet and read
its journal for why it stopped. For False: fix what the condition's message names
(start the container runtime, install or repair the CNI plugin, free disk). A node that
is gone for good should be deleted so its pods are recreated elsewhere at once.
`

// nodeMonitorGracePeriod is the node controller's default --node-monitor-grace-period
// (pkg/controller/nodelifecycle/config/v1alpha1/defaults.go): after it without a Lease
// renewal or status update, the node controller sets Ready to Unknown with reason
// NodeStatusUnknown, "Kubelet stopped posting node status."
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go, tryUpdateNodeHealth).
const nodeMonitorGracePeriod = 50 * time.Second

func nodeNotReady(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	now := v.CollectedAt().Add(v.ClockSkew())
	for _, n := range v.SortedNodes() {
		node := n.Obj
		idx, ready := analyze.NodeReady(node)
		lease := v.NodeLease(node.Name)
		var leaseAge time.Duration
		leaseKnown := lease != nil && lease.Obj.Spec.RenewTime != nil
		if leaseKnown {
			leaseAge = now.Sub(lease.Obj.Spec.RenewTime.Time)
		}
		var state string
		verb := "is not Ready"
		switch {
		case ready == nil && analyze.Partial(node.ObjectMeta, "status"):
			// A Node known only by its name (a paste of pods and events): its pods'
			// NodeNotReady events are what shows it not Ready, or a kubectl get nodes
			// row's STATUS.
			agent := v.NodeAgent(node.Name)
			e := agent.NotReady
			what := "the Node's NodeNotReady event says so"
			row, fromRow := analyze.KubectlNodeStatus(node)
			switch {
			case e != nil:
			case fromRow && strings.HasPrefix(row, "NotReady") || row == "Unknown":
				what = "kubectl get nodes shows it " + row
			default:
				if e = agent.PodNotReady; e == nil {
					continue
				}
				what = fmt.Sprintf("the node controller marked pod %s not ready because of it (%s: %s)", e.Regarding.NamespacedName(), e.Reason, phrase.FirstLine(e.Message))
			}
			held := "the evidence holds no Node object"
			if fromRow {
				held = "the evidence shows none of the Node's conditions"
			}
			state = what + "; " + held + ", so whether Ready is False (the kubelet reports a problem) " +
				"or Unknown (the node controller no longer hears from the kubelet), and why, is not known: kubectl describe node " + node.Name + " shows it"
		case ready != nil && ready.Status != corev1.ConditionTrue:
			state = fmt.Sprintf("Ready=%s since %s (%s: %s)", ready.Status, phrase.Stamp(ready.LastTransitionTime.Time), ready.Reason, strings.TrimSpace(ready.Message))
		case ready == nil && now.Sub(node.CreationTimestamp.Time) > nodeMonitorGracePeriod && (!leaseKnown || leaseAge > nodeMonitorGracePeriod):
			state = "it has no Ready condition (the kubelet never posted node status)"
		case ready != nil && leaseKnown && leaseAge > nodeMonitorGracePeriod:
			verb = "stopped heartbeating"
			state = fmt.Sprintf("Ready still says True (last heartbeat %s) but the kubelet no longer renews its Lease", phrase.Stamp(ready.LastHeartbeatTime.Time))
		default:
			continue
		}
		if why := notReadyExplanation(ready); why != "" {
			state += "; " + why
		}
		if onlyLostPods(v, node.Name) {
			// termination-node-lost names the node's state on each of its pods.
			continue
		}
		out = append(out, nodeFinding(v, n, idx, ready, lease, leaseAge, verb+": "+state))
	}
	return out
}

// onlyLostPods reports whether every pod the evidence shows on a node that it shows not
// Ready was deleted or marked NodeLost there, and the node's kubelet journal does not
// show it exit at start (which only the node finding explains): the pods' findings at
// the termination stage then say all that is known of the node.
func onlyLostPods(v *analyze.View, node string) bool {
	if _, _, shown := v.NodeNotReadyShown(node); !shown || kubeletExit(v.NodeAgent(node)) != nil {
		return false
	}
	n := 0
	for _, p := range v.PodsOnNode(node) {
		if p.Obj.Status.Phase == corev1.PodSucceeded || p.Obj.Status.Phase == corev1.PodFailed {
			continue
		}
		if !analyze.PodDeleting(p) {
			return false
		}
		n++
	}
	return n > 0
}

func nodeFinding(v *analyze.View, n *analyze.Node, idx int, ready *corev1.NodeCondition, lease *analyze.Lease, leaseAge time.Duration, state string) analyze.Finding {
	node := n.Obj
	var evidence []analyze.Evidence
	var facts []string
	if ready != nil {
		evidence = append(evidence, n.Loc.At("status", "conditions", idx).Evidence(
			fmt.Sprintf("Ready=%s %s: %s (last heartbeat %s)", ready.Status, ready.Reason, ready.Message, phrase.Stamp(ready.LastHeartbeatTime.Time)), ready.LastTransitionTime.Time))
		if ready.Status != corev1.ConditionTrue && !ready.LastHeartbeatTime.IsZero() {
			hb := ready.LastHeartbeatTime.Time
			facts = append(facts, fmt.Sprintf("last status heartbeat %s (%s before collection)", phrase.Stamp(hb),
				v.CollectedAt().Add(v.ClockSkew()).Sub(hb).Round(time.Second)))
		}
	}
	switch {
	case lease != nil && lease.Obj.Spec.RenewTime != nil:
		renew := lease.Obj.Spec.RenewTime.Time
		text := fmt.Sprintf("Lease renewed %s, %s before collection", phrase.Stamp(renew), leaseAge.Round(time.Second))
		evidence = append(evidence, lease.Loc.At("spec", "renewTime").Evidence(text, renew))
		facts = append(facts, fmt.Sprintf("its Lease was last renewed %s before collection (%s)", leaseAge.Round(time.Second), phrase.Stamp(v.CollectedAt())))
	case v.Has(analyze.NodeLeases):
		facts = append(facts, "it has no Lease in kube-node-lease")
	}
	for i, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			evidence = append(evidence, n.Loc.At("spec", "taints", i).Evidence("taint "+analyze.TaintString(t), addedAt(t.TimeAdded)))
		}
	}
	agent := v.NodeAgent(node.Name)
	if e := agent.NotReady; e != nil {
		evidence = append(evidence, e.Evidence())
	} else if e := agent.PodNotReady; e != nil && analyze.Partial(node.ObjectMeta, "status") {
		evidence = append(evidence, e.Evidence())
	}
	exit := kubeletExit(agent)
	if last := agent.Last; last != nil {
		facts = append(facts, "the kubelet journal's last entry is at "+phrase.Stamp(last.Time))
		if exit == nil {
			evidence = append(evidence, last.Evidence())
		}
	}
	if exit != nil {
		evidence = append(evidence, exit.evidence...)
	}
	subjects := []analyze.ObjectRef{n.Ref()}
	var pods, stuck []string
	var firstStuck *analyze.Pod
	for _, p := range v.PodsOnNode(node.Name) {
		if p.Obj.Status.Phase == corev1.PodSucceeded || p.Obj.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Obj.DeletionTimestamp != nil {
			stuck = append(stuck, p.Ref().NamespacedName())
			if firstStuck == nil || p.Obj.DeletionTimestamp.Before(firstStuck.Obj.DeletionTimestamp) {
				firstStuck = p
			}
		}
		pods = append(pods, p.Ref().NamespacedName())
		if analyze.PodDeleting(p) {
			// Its root is termination-node-lost's: the pod that will not go away.
			continue
		}
		subjects = append(subjects, p.Ref())
	}
	if networkOnly(ready) {
		// Running pods keep their network; pods waiting for one are
		// sandbox-network-not-ready's. The node itself is the subject.
		subjects, pods, stuck = subjects[:1], nil, nil
	}
	if row, ok := analyze.KubectlNodeStatus(node); ok && ready == nil {
		evidence = append(evidence, n.Loc.Evidence("kubectl get nodes: "+node.Name+" "+row, time.Time{}))
	}
	if len(evidence) == 0 {
		evidence = append(evidence, n.Loc.At("status").Evidence("node "+node.Name+": no Ready condition", node.CreationTimestamp.Time))
	}
	name := "node " + node.Name
	if analyze.Partial(node.ObjectMeta, "name") {
		// A describe node fragment without its Name line.
		name = "a node whose name the evidence does not hold"
	}
	cause := fmt.Sprintf("%s %s", name, state)
	if len(facts) > 0 {
		cause += "; " + strings.Join(facts, ", ")
	}
	if exit != nil {
		cause += "; the kubelet exits at start: " + exit.cause
	}
	if len(pods) > 0 {
		shown := pods
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(pods)-5))
		}
		cause += fmt.Sprintf("; %d pod(s) bound to it: %s", len(pods), strings.Join(shown, ", "))
	}
	if len(stuck) > 0 {
		del := firstStuck.Obj.DeletionTimestamp.Time
		cause += fmt.Sprintf("; %d of them deleted and stuck Terminating (the first since %s) because no kubelet confirms their end: %s",
			len(stuck), phrase.Stamp(del), strings.Join(stuck, ", "))
		evidence = append(evidence, firstStuck.Loc.At("metadata", "deletionTimestamp").Evidence(
			fmt.Sprintf("pod %s deletionTimestamp %s", firstStuck.Ref().NamespacedName(), phrase.Stamp(del)), del))
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: cmp.Or(exit.fixText(), nodeRemediation(node.Name, ready)),
		Confirm: []string{
			analyze.Command("kubectl describe node %s", node.Name),
			analyze.Command("kubectl get lease -n kube-node-lease %s -o jsonpath='{.spec.renewTime}'", node.Name),
			analyze.Command("kubectl get pods -A --field-selector spec.nodeName=%s", node.Name),
		},
		GroupKey: "node\x00" + node.Name,
	}
}

// kubeletExited is what a kubelet that exits at start said: why, in a node signature's
// words when one explains a line of its last run, the fix, and the lines that say so.
type kubeletExited struct {
	cause, fix string
	evidence   []analyze.Evidence
}

func (k *kubeletExited) fixText() string {
	if k == nil {
		return ""
	}
	return k.fix
}

// kubeletExitMessages are the messages the kubelet logs (with err) right before it
// exits: k8s.io/component-base/cli/run.go for an error of its start-up
// (cmd/kubelet/app/server.go run: "failed to run Kubelet: ..."), and
// pkg/kubelet/kubelet.go initializeModules and initializeRuntimeDependentModules, which
// exit "and rely on the babysitter to retry starting kubelet".
var kubeletExitMessages = map[string]bool{
	"command failed":                        true,
	"Failed to start ContainerManager":      true,
	"Failed to start cAdvisor":              true,
	"Kubelet failed to get node info":       true,
	"Failed to initialize internal modules": true,
}

// kubeletExit reads a node's kubelet journal for a kubelet that exits at start: its last
// run (the entries of the last entry's process, or since the last "Kubelet version" line
// when the journal gives no process IDs) ends in one of kubeletExitMessages (a klog F
// line "failed to run Kubelet" before 1.20). The first entry of the run that a built-in node signature
// explains says why (an expired client certificate comes before the bootstrap
// kubeconfig the kubelet then misses); without one the exit line's error does. It
// returns nil when the kubelet's last run did not end so.
func kubeletExit(agent analyze.NodeAgent) *kubeletExited {
	node, last := agent.Node, agent.Last
	if last == nil {
		return nil
	}
	exitErr, hasErr := last.Field("err")
	switch {
	case last.Message == "command failed" && hasErr:
	case kubeletExitMessages[last.Message] && hasErr:
		exitErr = last.Message + ": " + exitErr
	case last.Severity == 'F' && strings.Contains(last.Message, "failed to run Kubelet"):
		exitErr = last.Message
	default:
		return nil
	}
	exitEv := last.Evidence()
	sigs, err := builtinSignatureList()
	if err == nil {
		for _, e := range agent.LastRun {
			text := e.Message
			if err, ok := e.Field("err"); ok {
				text += ": " + err
			}
			for _, sig := range sigs {
				if sig.Stage != analyze.StageNode || sig.ForRule != "" {
					continue
				}
				if cause, fix, ok := sig.Explain(text, map[string]string{"node": node}); ok {
					evidence := []analyze.Evidence{e.Evidence()}
					if e != last {
						evidence = append(evidence, exitEv)
					}
					return &kubeletExited{cause: cause + " (" + sig.ID + ")", fix: fix, evidence: evidence}
				}
			}
		}
	}
	return &kubeletExited{cause: phrase.FirstLine(exitErr), evidence: []analyze.Evidence{exitEv}}
}

func nodeRemediation(node string, ready *corev1.NodeCondition) string {
	if ready != nil && ready.Status == corev1.ConditionFalse {
		msg := ready.Message
		switch {
		case strings.Contains(msg, "container runtime is down") || strings.Contains(msg, "PLEG is not healthy"):
			return fmt.Sprintf("The kubelet on %s cannot get answers from the container runtime: check the runtime on the node "+
				"(systemctl status containerd; journalctl -u containerd; crictl ps) for a crash, a hang or a stuck container, restart it, "+
				"and read the kubelet's journal around the time Ready turned False.", node)
		case networkOnly(ready):
			return fmt.Sprintf("Get the pod network ready on %s: the network plugin's pod there must run and write its configuration "+
				"(/etc/cni/net.d) and binaries (/opt/cni/bin); the node turns Ready once the runtime reports NetworkReady=true.", node)
		}
		return fmt.Sprintf("The kubelet on %s runs and reports the problem itself: fix what its Ready condition names (%s), "+
			"then check that the condition turns True.", node, strings.TrimSpace(ready.Message))
	}
	return fmt.Sprintf("Check that %s is up and reachable and that its kubelet runs (systemctl status kubelet; journalctl -u kubelet); "+
		"restart it and read its journal for why it stopped. If the machine is gone for good, delete the node so its controllers recreate their pods elsewhere (a pod nothing owns is not recreated).", node)
}

func addedAt(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// What the kubelet puts in a Ready=False message (pkg/kubelet/runtime.go runtimeErrors:
// "container runtime is down", "%s is not healthy: %v" with the PLEG's
// "pleg was last seen active %v ago; threshold is %v" from pkg/kubelet/pleg/generic.go
// Healthy; pkg/kubelet/kubelet.go updateRuntimeUp: "container runtime not ready: %v",
// "container runtime network not ready: %v"), and the node controller's Unknown
// ("Kubelet stopped posting node status.", "Kubelet never posted node status.",
// pkg/controller/nodelifecycle/node_lifecycle_controller.go tryUpdateNodeHealth).
var rePLEG = regexp.MustCompile(`PLEG is not healthy: pleg was last seen active (\S+) ago; threshold is ([0-9][0-9a-zµ.]*)`)

// notReadyExplanation says in words what a not-Ready condition's message means.
func notReadyExplanation(ready *corev1.NodeCondition) string {
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return ""
	}
	msg := ready.Message
	var why []string
	if strings.Contains(msg, "Kubelet stopped posting node status") || strings.Contains(msg, "Kubelet never posted node status") {
		why = append(why, "the node controller no longer hears from the kubelet: the machine is down or unreachable, or the kubelet is not running")
	}
	if strings.Contains(msg, "container runtime is down") {
		why = append(why, "the container runtime is down: the kubelet's last successful status call to it is too old")
	}
	if m := rePLEG.FindStringSubmatch(msg); m != nil {
		why = append(why, fmt.Sprintf("the kubelet's pod lifecycle event generator (PLEG) last completed a container listing %s ago, over its %s threshold: the runtime hangs or answers too slowly", m[1], m[2]))
	}
	if strings.Contains(msg, "container runtime not ready:") {
		why = append(why, "the container runtime says it is not ready")
	}
	if strings.Contains(msg, "container runtime network not ready") {
		why = append(why, "the container runtime reports the pod network (CNI) not ready: "+strings.TrimRight(analyze.RuntimeNetworkMessage(msg), "]"))
	}
	return strings.Join(why, "; ")
}

// networkOnly reports whether the node is not Ready only because the runtime reports
// the pod network not ready (one error, not the kubelet's bracketed list of several).
func networkOnly(ready *corev1.NodeCondition) bool {
	return ready != nil && ready.Status == corev1.ConditionFalse &&
		strings.HasPrefix(strings.TrimSpace(ready.Message), "container runtime network not ready")
}
