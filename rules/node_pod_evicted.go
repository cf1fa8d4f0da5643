package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// NodePodEvicted finds pods the kubelet's eviction manager evicted, for node pressure or
// for exceeding their own local ephemeral storage limits.
var NodePodEvicted = &analyze.Rule{
	ID:       "node-pod-evicted",
	Stage:    analyze.StageNode,
	Title:    "kubelet evicted the pod",
	Doc:      nodePodEvictedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		// Pods evicted, or a node under pressure that evicts them (a node describe alone).
		AnyOf:    []analyze.Kind{analyze.Pods, analyze.Nodes},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: nodePodEvicted,
}

const nodePodEvictedDoc = `The kubelet's eviction manager killed the pod and set it to phase Failed with reason
Evicted; it records an Evicted event with the same message and logs "Eviction manager:
pod is evicted successfully" (or "pod failed to evict" with "timeout waiting to kill pod"
when the container outlives the grace period: the pod is evicted all the same). An
evicted pod is not restarted: its controller creates a
replacement, and a bare pod stays Failed. The message says why:

- node pressure: "The node was low on resource: memory. Threshold quantity: 100Mi,
  available: 80Mi. Container app was using 900Mi, request is 128Mi, has larger
  consumption of memory." The node crossed an eviction threshold (memory.available,
  nodefs.available, imagefs.available, inodes, pids) and the kubelet evicted pods,
  those using most above their requests first; the node reports MemoryPressure,
  DiskPressure or PIDPressure;
- the pod's own limit: "Pod ephemeral local storage usage exceeds the total limit of
  containers 2Mi." (writable layers, logs and emptyDir volumes together above the sum of
  the containers' limits.ephemeral-storage), "Container app exceeded its local ephemeral
  storage limit "1Gi"." or "Usage of EmptyDir volume "cache" exceeds the limit "1Gi"."
  (the volume's sizeLimit). The node is fine; the pod wrote more than it declared;
- admission: "The node had condition: [DiskPressure]." The kubelet refused a new pod
  because the node was under pressure.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.reason}: {.status.message}'
    kubectl get events -n NAMESPACE --field-selector reason=Evicted
    kubectl describe node NODE                   # MemoryPressure, DiskPressure, PIDPressure
    kubectl debug node/NODE -it --image=busybox -- chroot /host journalctl -u kubelet | grep 'Eviction manager'

## Fix

Over its own limit: raise limits.ephemeral-storage (or the emptyDir sizeLimit) to what
the pod really writes, or make it write less: logs to stdout with rotation, scratch data
to a volume sized for it. Node pressure: give the pods requests that match their use
(pods above their requests are evicted first), free the node's disk (images, logs) or
memory, or add capacity. Delete the Failed pods once the cause is fixed; they are
kept only as a record.
`

// What the kubelet writes (pkg/kubelet/eviction/helpers.go: Reason, nodeLowMessageFmt,
// thresholdMetMessageFmt, containerMessageFmt, nodeConditionMessageFmt,
// podEphemeralStorageMessageFmt, containerEphemeralStorageMessageFmt,
// emptyDirMessageFmt; eviction_manager.go evictPod); analyze.Eviction gathers the pods
// evicted with it.
var (
	reEvictNodeLow    = regexp.MustCompile(`The node was low on resource: ([^.]+)\.`)
	reEvictThreshold  = regexp.MustCompile(`Threshold quantity: ([^,]+), available: ([^.]+)\.`)
	reEvictContainer  = regexp.MustCompile(`Container (\S+) was using (\S+), request is (\S+), has larger consumption of`)
	reEvictCondition  = regexp.MustCompile(`The node had condition: \[?([^\].]*)\]?\.`)
	reEvictPodStorage = regexp.MustCompile(`Pod ephemeral local storage usage exceeds the total limit of containers ([^. ]+)\.?`)
	reEvictCtrStorage = regexp.MustCompile(`Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"`)
	reEvictEmptyDir   = regexp.MustCompile(`Usage of EmptyDir volume "([^"]*)" exceeds the limit "([^"]*)"`)
)

// eviction is why the kubelet evicted a pod, read from its message.
type eviction struct {
	kind     string // node-pressure, node-condition, pod-limit, container-limit, emptydir-limit, other
	what     string // for people
	resource string // the starved resource or node condition
}

func classifyEviction(msg string) eviction {
	switch {
	case reEvictPodStorage.MatchString(msg):
		limit := reEvictPodStorage.FindStringSubmatch(msg)[1]
		return eviction{kind: "pod-limit", resource: limit,
			what: "its local ephemeral storage use (writable layers, logs, emptyDir volumes) exceeded the sum of its containers' limits, " + limit}
	case reEvictCtrStorage.MatchString(msg):
		m := reEvictCtrStorage.FindStringSubmatch(msg)
		return eviction{kind: "container-limit", resource: m[2],
			what: fmt.Sprintf("container %s used more local ephemeral storage than its limit, %s", m[1], m[2])}
	case reEvictEmptyDir.MatchString(msg):
		m := reEvictEmptyDir.FindStringSubmatch(msg)
		return eviction{kind: "emptydir-limit", resource: m[2],
			what: fmt.Sprintf("emptyDir volume %s grew beyond its sizeLimit, %s", m[1], m[2])}
	case reEvictNodeLow.MatchString(msg):
		res := reEvictNodeLow.FindStringSubmatch(msg)[1]
		what := "the node ran low on " + res
		if t := reEvictThreshold.FindStringSubmatch(msg); t != nil {
			what += fmt.Sprintf(" (%s available, eviction threshold %s)", strings.TrimSpace(t[2]), strings.TrimSpace(t[1]))
		}
		var over []string
		for _, c := range reEvictContainer.FindAllStringSubmatch(msg, -1) {
			over = append(over, fmt.Sprintf("container %s used %s against a request of %s", c[1], c[2], c[3]))
		}
		if len(over) > 0 {
			what += " and " + strings.Join(over, ", ")
		}
		return eviction{kind: "node-pressure", resource: res, what: what}
	case reEvictCondition.MatchString(msg):
		cond := strings.TrimSpace(reEvictCondition.FindStringSubmatch(msg)[1])
		return eviction{kind: "node-condition", resource: cond, what: "the node reported " + cond + " when the pod was admitted"}
	}
	return eviction{kind: "other", what: "the kubelet gave no known reason"}
}

func nodePodEvicted(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	evicting := map[string]bool{}
	for _, f := range v.Evictions() {
		// An eviction known only from its event has no status message to classify; the
		// unexplained check quotes it.
		if f.Subject.Pod != nil {
			out = append(out, evictedFinding(v, f))
			evicting[f.Subject.Pod.Obj.Spec.NodeName] = true
		}
	}
	for _, n := range v.Nodes() {
		if !evicting[n.Obj.Name] {
			if f, ok := pressureFinding(v, n); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// pressureSignals are the eviction signals behind each pressure condition the kubelet
// sets when one of them crosses its threshold (pkg/kubelet/eviction/api: memory.available
// for MemoryPressure; nodefs, imagefs and their inodes for DiskPressure; pid.available
// for PIDPressure), and the taint the node lifecycle controller then puts on the node.
var pressureSignals = map[corev1.NodeConditionType]struct{ resource, taint string }{
	corev1.NodeMemoryPressure: {"memory (memory.available)", "node.kubernetes.io/memory-pressure"},
	corev1.NodeDiskPressure:   {"disk (nodefs.available, imagefs.available or their inodes)", "node.kubernetes.io/disk-pressure"},
	corev1.NodePIDPressure:    {"process IDs (pid.available)", "node.kubernetes.io/pid-pressure"},
}

// pressureFinding reports a node whose kubelet reports a pressure condition True
// ("kubelet has disk pressure", pkg/kubelet/nodestatus/setters.go) when no evicted pod
// of it is in the evidence: the eviction manager crossed a threshold, reclaims (image
// and container garbage collection for disk, then evictions) and admits no new pod
// that it would evict.
func pressureFinding(v *analyze.View, n *analyze.Node) (analyze.Finding, bool) {
	var what []string
	var taints []string
	for _, c := range n.Obj.Status.Conditions {
		if sig, ok := pressureSignals[c.Type]; ok && c.Status == corev1.ConditionTrue {
			what = append(what, fmt.Sprintf("%s=True (%s), the eviction threshold for %s", c.Type, strings.TrimSpace(c.Message), sig.resource))
			taints = append(taints, sig.taint)
		}
	}
	if len(what) == 0 {
		return analyze.Finding{}, false
	}
	name := n.Obj.Name
	cause := fmt.Sprintf("node %s crossed an eviction threshold: its kubelet reports %s, so it reclaims by garbage collection and evicting pods, "+
		"refuses new pods it would evict, and the node is tainted %s so the scheduler keeps pods off it", name, strings.Join(what, "; "), strings.Join(taints, ", "))
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{n.Ref()},
		Cause:    cause,
		Evidence: pressureEvidence(v, name),
		Remediation: "Free what the node runs short of (container logs, unused images and stopped containers, emptyDir and hostPath data for disk; the " +
			"pods using most above their requests for memory), or give the node more; set requests for what pods use so evictions pick the right ones.",
		Confirm: []string{
			analyze.Command("kubectl describe node %s", name),
			analyze.Command("kubectl get pods -A --field-selector spec.nodeName=%s,status.phase=Failed", name),
		},
		GroupKey: "pressure\x00" + name,
	}, true
}

func evictedFinding(v *analyze.View, f analyze.Eviction) analyze.Finding {
	p := f.Subject.Pod
	pod := p.Obj
	node := pod.Spec.NodeName
	msg := strings.TrimSpace(pod.Status.Message)
	event := f.Event
	// A pasted kubectl get pods row says only Evicted; the kubelet's event, when it
	// was pasted too, carries the same message.
	if msg == "" && event != nil {
		msg = strings.TrimSpace(event.Message)
	}
	// The ticket quotes the message the pods showed, in a line of its own.
	quoted := msg == "" && f.Quoted != ""
	if quoted {
		msg = f.Quoted
	}
	ev := classifyEviction(msg)
	when := evictedAt(p, event)
	evidence := []analyze.Evidence{p.Loc.At("status", "message").Evidence("Evicted: "+msg, when)}
	if event != nil {
		evidence = append(evidence, event.Evidence())
	}
	if line := f.Line; line != nil {
		evidence = append(evidence, line.Evidence())
	}
	if quoted {
		evidence = append(evidence, f.QuotedLine.Evidence())
	}
	evidence = append(evidence, evictionLimitEvidence(p, ev)...)
	if ev.kind == "node-pressure" || ev.kind == "node-condition" {
		evidence = append(evidence, pressureEvidence(v, node)...)
	}
	at := ""
	if !when.IsZero() {
		at = " at " + phrase.Stamp(when)
	}
	on := "on node " + node
	if node == "" {
		on = "on its node"
	}
	says := "it says"
	if quoted {
		says = "the evidence quotes"
	}
	cause := fmt.Sprintf("the kubelet %s evicted pod %s%s because %s; %s %q",
		on, p.Ref().NamespacedName(), at, ev.what, says, msg)
	if msg == "" {
		cause = fmt.Sprintf("the kubelet %s evicted pod %s%s; the evidence does not hold its message, which says why (kubectl describe pod shows it)",
			on, p.Ref().NamespacedName(), at)
		if pressure := v.NodePressure(); pressure != "" {
			// The node's pressure the paste shows is what the kubelet evicts for.
			cause = fmt.Sprintf("the kubelet %s evicted pod %s%s; the evidence does not hold its message, but the node shows %s: "+
				"a kubelet under a pressure condition evicts pods to reclaim what the node runs short of, and new pods placed there are evicted in turn "+
				"(kubectl describe pod shows the message)", on, p.Ref().NamespacedName(), at, pressure)
		}
	}
	subjects := []analyze.ObjectRef{p.Ref()}
	group := p.Ref().NamespacedName()
	if w := v.Workload(p); w != nil {
		subjects = append(subjects, *w)
		group = w.String()
	}
	if node != "" {
		subjects = append(subjects, analyze.NodeRef(node))
	}
	if ev.kind == "node-pressure" || ev.kind == "node-condition" {
		group = node // one cause on one node, whichever pods it hit
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: evictionFix(ev, pod),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.reason}: {.status.message}'", pod.Namespace, pod.Name),
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=Evicted", pod.Namespace, pod.Name),
			analyze.Command("kubectl describe node %s", node),
		},
		GroupKey: "evicted\x00" + group + "\x00" + ev.kind + "\x00" + ev.resource,
	}
}

// evictedAt is when the pod was evicted: the Evicted event, else the DisruptionTarget
// condition (pressure evictions), else its containers' termination, else the Ready
// condition's last change.
func evictedAt(p *analyze.Pod, event *analyze.Event) time.Time {
	if event != nil && !event.LastTime.IsZero() {
		return event.LastTime
	}
	if c, _ := analyze.PodCondition(p, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	var t time.Time
	for _, c := range analyze.Containers(p) {
		if c.Status != nil && c.Status.State.Terminated != nil && c.Status.State.Terminated.FinishedAt.After(t) {
			t = c.Status.State.Terminated.FinishedAt.Time
		}
	}
	if t.IsZero() {
		if c, _ := analyze.PodCondition(p, corev1.PodReady); c != nil {
			t = c.LastTransitionTime.Time
		}
	}
	return t
}

// evictionLimitEvidence cites the limit an over-limit eviction names.
func evictionLimitEvidence(p *analyze.Pod, ev eviction) []analyze.Evidence {
	var out []analyze.Evidence
	switch ev.kind {
	case "pod-limit", "container-limit":
		for _, c := range analyze.Containers(p) {
			if q, ok := c.Spec.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
				out = append(out, c.SpecLoc().At("resources", "limits", "ephemeral-storage").Evidence(
					fmt.Sprintf("container %s limits.ephemeral-storage: %s", c.Name, q.String()), time.Time{}))
			}
		}
	case "emptydir-limit":
		for i, vol := range p.Obj.Spec.Volumes {
			if vol.EmptyDir != nil && vol.EmptyDir.SizeLimit != nil {
				out = append(out, p.Loc.At("spec", "volumes", i, "emptyDir", "sizeLimit").Evidence(
					fmt.Sprintf("emptyDir %s sizeLimit: %s", vol.Name, vol.EmptyDir.SizeLimit.String()), time.Time{}))
			}
		}
	}
	return out
}

// pressureEvidence cites the node's pressure conditions that are True.
func pressureEvidence(v *analyze.View, node string) []analyze.Evidence {
	n := v.Node(node)
	if n == nil {
		return nil
	}
	var out []analyze.Evidence
	for i, c := range n.Obj.Status.Conditions {
		switch c.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
			if c.Status == corev1.ConditionTrue {
				out = append(out, n.Loc.At("status", "conditions", i).Evidence(
					fmt.Sprintf("%s=True %s: %s", c.Type, c.Reason, c.Message), c.LastTransitionTime.Time))
			}
		}
	}
	return out
}

func evictionFix(ev eviction, pod *corev1.Pod) string {
	switch ev.kind {
	case "pod-limit", "container-limit":
		return fmt.Sprintf("Raise limits.ephemeral-storage of pod %s/%s (now %s) to what it really writes, or make it write less: "+
			"scratch data to a volume sized for it, logs to stdout with rotation. Then delete the Failed pod.", pod.Namespace, pod.Name, ev.resource)
	case "emptydir-limit":
		return fmt.Sprintf("Raise the emptyDir's sizeLimit (now %s) of pod %s/%s to what it really holds, or clean it up as the "+
			"pod runs. Then delete the Failed pod.", ev.resource, pod.Namespace, pod.Name)
	case "node-pressure", "node-condition":
		return fmt.Sprintf("Relieve node %s (%s): free disk (unused images, logs) or memory, or add capacity; give pods requests that "+
			"match their use, since pods above their requests are evicted first. Then delete the Failed pods.", pod.Spec.NodeName, ev.resource)
	}
	return fmt.Sprintf("Read the kubelet's journal on node %s around the eviction (\"Eviction manager\") for what it reclaimed.", pod.Spec.NodeName)
}
