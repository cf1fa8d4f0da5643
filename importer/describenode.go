package importer

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// segDescribeNode is `kubectl describe node` output (k8s.io/kubectl pkg/describe
// describeNode).
const segDescribeNode = "kubectl describe node"

// isDescribeNodeStart tells whether lines[i] starts a `kubectl describe node` block:
// "Name:" at the margin, then "Roles:"; or, in a paste that cut lines between them, then
// a key only describe node prints (Taints, Conditions with the node table's header, …)
// before any other key at the margin.
func isDescribeNodeStart(lines []textLine, i int) bool {
	if isDescribeBlockStart(lines, i, "Roles:") {
		return true
	}
	if !strings.HasPrefix(lines[i].s, "Name:") {
		return false
	}
	for j := i + 1; j < len(lines) && j <= i+3; j++ {
		s := detab(lines[j].s)
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, " ") {
			continue
		}
		// The first key at the margin after the name decides.
		return isDescribeNodeFragStart(lines, j)
	}
	return false
}

// describedNode is one node read back from `kubectl describe node`: what describe prints
// of it, the pods it lists as running there, and its events.
type describedNode struct {
	node     corev1.Node
	line     int
	pods     []tablePod
	events   []parsedEvent
	problems []string
	// sawTaints is whether the Taints line was read ("<none>" included).
	sawTaints bool
}

// describe node sections.
const (
	nsecNone = iota
	nsecLabels
	nsecTaints
	nsecConditions
	nsecAddresses
	nsecCapacity
	nsecAllocatable
	nsecSystemInfo
	nsecPods
	nsecEvents
	nsecSkip
)

// parseDescribeNode reads one node's describe block.
func parseDescribeNode(lines []textLine) *describedNode {
	d := &describedNode{line: lines[0].n}
	d.node.APIVersion, d.node.Kind = "v1", "Node"
	sec := nsecNone
	var events describeEventTable
	for _, l := range lines {
		s := detab(l.s)
		body := strings.TrimSpace(s)
		if body == "" {
			continue
		}
		if !strings.HasPrefix(s, " ") {
			if m := reKey.FindStringSubmatch(body); m != nil {
				sec = d.top(m[1], strings.TrimSpace(m[2]), l)
				continue
			}
		}
		switch sec {
		case nsecLabels:
			if k, v, ok := strings.Cut(body, "="); ok {
				d.node.Labels[k] = v
			}
		case nsecTaints:
			d.taint(body, l)
		case nsecConditions:
			d.condition(s, l)
		case nsecAddresses:
			if k, v, ok := strings.Cut(body, ":"); ok {
				d.node.Status.Addresses = append(d.node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeAddressType(k), Address: strings.TrimSpace(v)})
			}
		case nsecCapacity, nsecAllocatable:
			d.quantity(body, sec == nsecAllocatable, l)
		case nsecSystemInfo:
			d.systemInfo(body)
		case nsecPods:
			d.pod(body, l)
		case nsecEvents:
			d.event(s, l, &events)
		}
	}
	return d
}

// event reads a line of the node's Events table; events name the node and, as kubectl
// records them, the default namespace.
func (d *describedNode) event(s string, l textLine, events *describeEventTable) {
	events.addRow(s, l, corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: d.node.Name}, metav1.NamespaceDefault, &d.events, &d.problems)
}

// top handles a key at the margin and returns the section it opens.
func (d *describedNode) top(key, val string, l textLine) int {
	n := &d.node
	switch key {
	case "Name":
		n.Name = val
	case "Labels":
		n.Labels = map[string]string{}
		if k, v, ok := strings.Cut(val, "="); ok {
			n.Labels[k] = v
		}
		return nsecLabels
	case "Taints":
		d.sawTaints = true
		d.taint(val, l)
		return nsecTaints
	case "Unschedulable":
		n.Spec.Unschedulable = val == "true"
	case "CreationTimestamp":
		if t, err := time.Parse(time.RFC1123Z, val); err == nil {
			n.CreationTimestamp = metav1.NewTime(t)
		}
	case "Conditions":
		return nsecConditions
	case "Addresses":
		return nsecAddresses
	case "Capacity":
		return nsecCapacity
	case "Allocatable":
		return nsecAllocatable
	case "System Info":
		return nsecSystemInfo
	case "PodCIDR":
		n.Spec.PodCIDR = val
	case "PodCIDRs":
		n.Spec.PodCIDRs = strings.Split(val, ",")
	case "ProviderID":
		n.Spec.ProviderID = val
	case "Non-terminated Pods":
		return nsecPods
	case "Events":
		return nsecEvents
	}
	return nsecSkip
}

// taint reads "key=value:Effect" or "key:Effect" (Taint.ToString).
func (d *describedNode) taint(s string, l textLine) {
	if s == "" || s == "<none>" {
		return
	}
	kv, effect, ok := cutLast(s, ":")
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		ok = false
	}
	if !ok {
		d.problems = append(d.problems, fmt.Sprintf("line %d: not a taint: %q", l.n, s))
		return
	}
	k, v, _ := strings.Cut(kv, "=")
	d.node.Spec.Taints = append(d.node.Spec.Taints, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)})
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// condition reads a Conditions row: Type Status LastHeartbeatTime LastTransitionTime
// Reason Message, times in RFC 1123 with a numeric zone.
func (d *describedNode) condition(s string, l textLine) {
	cells := splitCells(s, 6)
	if len(cells) < 2 || cells[0] == "Type" || strings.Trim(cells[0], "-") == "" {
		return
	}
	st := corev1.ConditionStatus(cells[1])
	if st != corev1.ConditionTrue && st != corev1.ConditionFalse && st != corev1.ConditionUnknown {
		d.problems = append(d.problems, fmt.Sprintf("line %d: not a condition row", l.n))
		return
	}
	c := corev1.NodeCondition{Type: corev1.NodeConditionType(cells[0]), Status: st}
	if len(cells) > 2 {
		if t, err := time.Parse(time.RFC1123Z, cells[2]); err == nil {
			c.LastHeartbeatTime = metav1.NewTime(t)
		}
	}
	if len(cells) > 3 {
		if t, err := time.Parse(time.RFC1123Z, cells[3]); err == nil {
			c.LastTransitionTime = metav1.NewTime(t)
		}
	}
	if len(cells) > 4 {
		c.Reason = cells[4]
	}
	if len(cells) > 5 {
		c.Message = cells[5]
	}
	d.node.Status.Conditions = append(d.node.Status.Conditions, c)
}

func (d *describedNode) quantity(body string, allocatable bool, l textLine) {
	k, v, ok := strings.Cut(body, ":")
	if !ok {
		return
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		d.problems = append(d.problems, fmt.Sprintf("line %d: %s: %v", l.n, k, err))
		return
	}
	list := &d.node.Status.Capacity
	if allocatable {
		list = &d.node.Status.Allocatable
	}
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[corev1.ResourceName(k)] = q
}

func (d *describedNode) systemInfo(body string) {
	k, v, ok := strings.Cut(body, ":")
	if !ok {
		return
	}
	info := &d.node.Status.NodeInfo
	fields := map[string]*string{
		"Machine ID":                &info.MachineID,
		"System UUID":               &info.SystemUUID,
		"Boot ID":                   &info.BootID,
		"Kernel Version":            &info.KernelVersion,
		"OS Image":                  &info.OSImage,
		"Operating System":          &info.OperatingSystem,
		"Architecture":              &info.Architecture,
		"Container Runtime Version": &info.ContainerRuntimeVersion,
		"Kubelet Version":           &info.KubeletVersion,
	}
	if f := fields[k]; f != nil {
		*f = strings.TrimSpace(v)
	}
}

// pod reads a Non-terminated Pods row: Namespace Name CPU Requests ... Age. It shows the
// pod's totals, not its containers, so only the pod and its node are kept.
func (d *describedNode) pod(body string, l textLine) {
	cells := splitCells(body, -1)
	if len(cells) < 2 || cells[0] == "Namespace" || strings.Trim(cells[0], "-") == "" {
		return
	}
	var p corev1.Pod
	p.APIVersion, p.Kind = "v1", "Pod"
	p.Namespace, p.Name = cells[0], cells[1]
	p.Spec.NodeName = d.node.Name
	d.pods = append(d.pods, tablePod{pod: p, line: l.n})
}

// addNode adds a described node, the pods it lists as running there and its events.
func (li *looseImport) addNode(path string, d *describedNode) {
	li.addNodeRank(path, d, rankDescribe)
}

func (li *looseImport) addNodeRank(path string, d *describedNode, rank int) {
	data, err := json.Marshal(d.node)
	if err != nil {
		return
	}
	li.put(bundle.ClusterResourcePath(bundle.KindNodes), &looseItem{data: data, path: path, line: d.line, rank: rank,
		key: "Node//" + d.node.Name})
	for _, p := range d.pods {
		li.addPod(path, p.pod, p.line, rankTable)
	}
	for _, e := range d.events {
		li.addEvent(path, e)
	}
	li.found[bundle.KindNodes] = true
	li.found["node-describe"] = true
}
