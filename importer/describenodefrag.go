package importer

import (
	"regexp"
	"strings"

	"podflow.dev/podflow/bundle"
)

// segDescribeNodeFrag is part of a `kubectl describe node` without its Name line: its
// Conditions table, its Taints, its resources, as a user pastes them.
const segDescribeNodeFrag = "kubectl describe node fragment"

// nodeFragKeys are the keys describe node prints at the margin (k8s.io/kubectl
// pkg/describe describeNode); describe pod prints none of Taints, Unschedulable, Lease,
// Addresses, Capacity, Allocatable, System Info, Non-terminated Pods, Allocated resources.
var nodeFragKeys = map[string]bool{
	"Taints": true, "Unschedulable": true, "Lease": true, "Addresses": true, "Capacity": true, "Allocatable": true,
	"System Info": true, "Non-terminated Pods": true, "Allocated resources": true, "Conditions": true, "Events": true,
	"Labels": true, "Annotations": true, "CreationTimestamp": true, "Roles": true, "PodCIDR": true, "PodCIDRs": true, "ProviderID": true,
}

// isNodeConditionsHeader tells the header of describe node's Conditions table.
func isNodeConditionsHeader(t string) bool {
	if !strings.HasPrefix(t, "Type") {
		return false
	}
	f := strings.Fields(t)
	return len(f) >= 4 && f[0] == "Type" && f[1] == "Status" && f[2] == "LastHeartbeatTime" && f[3] == "LastTransitionTime"
}

// isDescribeNodeFragStart tells whether lines[i] opens a describe node fragment: a key
// only describe node prints, its Conditions heading followed by the node table's
// header, or that header alone.
func isDescribeNodeFragStart(lines []textLine, i int) bool {
	s := detab(lines[i].s)
	t := strings.TrimSpace(s)
	if isNodeConditionsHeader(t) {
		return true
	}
	if strings.HasPrefix(s, " ") {
		return false
	}
	m := reKey.FindStringSubmatch(t)
	if m == nil {
		return false
	}
	switch m[1] {
	case "Taints", "Allocated resources", "Non-terminated Pods", "Allocatable", "Capacity":
		return true
	case "Conditions":
		for j := i + 1; j < len(lines) && j <= i+2; j++ {
			if isNodeConditionsHeader(strings.TrimSpace(lines[j].s)) {
				return true
			}
		}
	}
	return false
}

// isNodeFragKey tells a line at the margin that continues a describe node fragment.
func isNodeFragKey(s string) bool {
	m := reKey.FindStringSubmatch(strings.TrimSpace(detab(s)))
	return m != nil && !strings.HasPrefix(s, " ") && nodeFragKeys[m[1]]
}

// reCmdNode finds the node a command names: describe node NAME, describe nodes/NAME.
var reCmdNode = regexp.MustCompile(`\bdescribe\s+(?:nodes?|no)(?:\s+|/)([a-z0-9][-a-z0-9.]*)`)

// pendingNode is a describe node fragment whose node is decided once every file is read.
type pendingNode struct {
	d    *describedNode
	path string
	name string // from the command before it
}

// describeNodeFragment reads a describe node fragment; a Conditions table pasted without
// its heading gets one.
func (li *looseImport) describeNodeFragment(name string, b segmentBlock, cmd string) (bool, []string) {
	lines := trimBlank(b.lines)
	if len(lines) == 0 {
		return false, nil
	}
	if isNodeConditionsHeader(strings.TrimSpace(lines[0].s)) {
		lines = append([]textLine{{s: "Conditions:", n: lines[0].n}}, lines...)
	}
	d := parseDescribeNode(lines)
	if len(d.node.Status.Conditions) == 0 && len(d.node.Spec.Taints) == 0 && d.node.Status.Allocatable == nil && d.node.Status.Capacity == nil &&
		!nodeEvents(d.events) {
		return false, d.problems
	}
	pn := pendingNode{d: d, path: name}
	if m := reCmdNode.FindStringSubmatch(cmd); m != nil && !strings.HasPrefix(m[1], "-") {
		pn.name = m[1]
	}
	if pn.name == "" {
		pn.name = nodeOfEvents(d.events)
	}
	li.nodeFrags = append(li.nodeFrags, pn)
	return true, d.problems
}

// resolveNodeFrags gives every describe node fragment its node: the one its command
// named, else the only node the pods of the input are bound to or the input describes,
// else a node named after the file, marked as not knowing its name. What the fragment
// does not show is marked too: its labels, taints, allocatable resources, conditions.
func (li *looseImport) resolveNodeFrags() {
	if len(li.nodeFrags) == 0 {
		return
	}
	known := map[string]bool{}
	for _, n := range li.podNodes() {
		known[n] = true
	}
	for _, n := range li.nodeNames() {
		known[n] = true
	}
	for _, pn := range li.nodeFrags {
		d := pn.d
		name, nameKnown := pn.name, pn.name != ""
		if name == "" && len(known) == 1 {
			for n := range known {
				name, nameKnown = n, true
			}
		}
		if name == "" {
			name = strings.Replace(placeholderPod(pn.path), "unnamed-", "unnamed-node-", 1)
		}
		d.node.Name = name
		var missing []string
		if !nameKnown {
			missing = append(missing, partialName)
		}
		if d.node.Labels == nil {
			missing = append(missing, "labels")
		}
		if !d.sawTaints {
			missing = append(missing, "taints")
		}
		if d.node.Status.Allocatable == nil {
			missing = append(missing, "allocatable")
		}
		if len(d.node.Status.Conditions) == 0 {
			missing = append(missing, partialStatus)
		}
		if d.node.Annotations == nil {
			d.node.Annotations = map[string]string{}
		}
		d.node.Annotations[bundle.PartialAnnotation] = strings.Join(missing, ",")
		for i := range d.events {
			d.events[i].ev.InvolvedObject.Name = name
		}
		if _, ok := li.byKey["Node//"+name]; ok {
			continue // a full describe of the node is richer
		}
		li.addNodeRank(pn.path, d, rankPartial)
	}
}

// nodeEventReasons are the reasons of the events the kubelet records about its node
// (k8s.io/kubernetes pkg/kubelet/events/event.go, the eviction manager's
// EvictionThresholdMet, and the node status setters' NodeHas… events): a fragment whose
// Events table holds one is a node's describe, even without its other sections.
var nodeEventReasons = map[string]bool{
	"NodeReady": true, "NodeNotReady": true, "NodeSchedulable": true, "NodeNotSchedulable": true, "Rebooted": true,
	"Shutdown": true, "ContainerGCFailed": true, "ImageGCFailed": true, "FreeDiskSpaceFailed": true, "InvalidDiskCapacity": true,
	"NodeAllocatableEnforced": true, "FailedNodeAllocatableEnforcement": true, "EvictionThresholdMet": true,
}

// nodeEvents reports whether one of the events is the kubelet's about its node.
func nodeEvents(evs []parsedEvent) bool {
	for _, e := range evs {
		if r := e.ev.Reason; nodeEventReasons[r] || strings.HasPrefix(r, "NodeHas") {
			return true
		}
	}
	return false
}

// reNodeStatusEvent is the kubelet's node status event (recordNodeStatusEvent):
// "Node %s status is now: %s".
var reNodeStatusEvent = regexp.MustCompile(`^Node ([a-z0-9][-a-z0-9.]*) status is now: `)

// nodeOfEvents is the node a node's events name: the one of its status events, else the
// one host the kubelet recorded them from ("kubelet, NODE" before 1.14); "" when they
// name none or several.
func nodeOfEvents(evs []parsedEvent) string {
	name := ""
	for _, e := range evs {
		if m := reNodeStatusEvent.FindStringSubmatch(e.ev.Message); m != nil {
			return m[1]
		}
		if h := e.ev.Source.Host; h != "" && (nodeEventReasons[e.ev.Reason] || strings.HasPrefix(e.ev.Reason, "NodeHas")) {
			if name != "" && name != h {
				return ""
			}
			name = h
		}
	}
	return name
}
