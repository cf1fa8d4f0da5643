package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// Table kinds a header line announces.
const (
	tableEvents        = "kubectl get events table"
	tablePods          = "kubectl get pods table"
	tableCRIPods       = "crictl pods table"
	tableCRIContainers = "crictl ps table"
	tableEndpoints     = "kubectl get endpoints table"
	tableNodes         = "kubectl get nodes table"
)

// tableKind tells which table a header line starts, or "".
func tableKind(line string) string {
	if !strings.Contains(line, "NAME") && !strings.Contains(line, "LAST SEEN") && !strings.Contains(line, "CONTAINER") {
		return "" // every header below names one of these
	}
	f := splitCells(line, -1)
	has := func(names ...string) bool {
		for _, n := range names {
			found := false
			for _, c := range f {
				if c == n {
					found = true
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	if k := pvcTableKind(f); k != "" {
		return k
	}
	switch {
	case isDaemonSetsHeader(f):
		return tableDaemonSets
	case isStorageClassesHeader(f):
		return tableStorageClasses
	case has("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"):
		return tableEvents
	case has("NAME", "READY", "STATUS", "RESTARTS", "AGE"):
		return tablePods
	case has("NAME", "ENDPOINTS", "AGE"):
		return tableEndpoints
	case has("NAME", "STATUS", "ROLES", "AGE", "VERSION"):
		return tableNodes
	// crictl ps prints POD ID and NAMESPACE too, so it is told apart first.
	case has("CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT"):
		return tableCRIContainers
	case has("POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT"):
		return tableCRIPods
	}
	return ""
}

// table is a kubectl table: its column names and where they start in the header.
type table struct {
	names []string
	cols  []int
}

func newTable(header string) table {
	return table{names: splitCells(header, -1), cols: headerColumns(header)}
}

// podRowKeep is how many leading columns of get pods (NAME, READY, STATUS, or
// NAMESPACE, NAME, READY with -A) a row cut short must still hold.
const podRowKeep = 3

// rowCut reads a row that lines up with the header but ends before its last columns:
// the columns it reaches are cut as row does, at least keep of them, and the rest stay
// empty.
func (t table) rowCut(s string, keep int) (map[string]string, bool) {
	s = strings.TrimRight(detab(s), " ")
	if len(t.cols) != len(t.names) {
		return nil, false
	}
	n := 0
	for n < len(t.cols) && t.cols[n] < len(s) {
		n++
	}
	if n < keep || n == len(t.cols) {
		return nil, false
	}
	cells, ok := cutColumns(s, t.cols[:n])
	if !ok || cells[0] == "" || cells[n-1] == "" {
		return nil, false
	}
	return t.named(append(cells, make([]string, len(t.cols)-n)...)), true
}

// row splits a table row into cells by column name. Rows that line up with the header
// are cut at its columns (empty cells stay empty); damaged rows are split at gaps, which
// works when no cell is empty; the free-text column (msgCol) absorbs any extra gaps.
func (t table) row(s, msgCol string) (map[string]string, bool) {
	s = detab(s)
	if len(t.cols) == len(t.names) {
		if cells, ok := cutColumns(s, t.cols); ok && cells[0] != "" {
			return t.named(cells), true
		}
	}
	cells := splitCells(s, -1)
	n := len(t.names)
	if len(cells) < n {
		return nil, false
	}
	if len(cells) > n {
		mi := t.index(msgCol)
		if mi < 0 {
			return nil, false
		}
		extra := len(cells) - n
		merged := append([]string{}, cells[:mi]...)
		merged = append(merged, strings.Join(cells[mi:mi+extra+1], "  "))
		cells = append(merged, cells[mi+extra+1:]...)
	}
	return t.named(cells), true
}

func (t table) index(name string) int {
	for i, n := range t.names {
		if n == name {
			return i
		}
	}
	return -1
}

func (t table) named(cells []string) map[string]string {
	m := make(map[string]string, len(cells))
	for i, c := range cells {
		if i < len(t.names) {
			m[t.names[i]] = c
		}
	}
	return m
}

// eventKinds maps the lower-case kind `kubectl get events` prints in OBJECT to the kind.
var eventKinds = map[string]string{
	"pod": "Pod", "node": "Node", "replicaset": "ReplicaSet", "deployment": "Deployment",
	"statefulset": "StatefulSet", "daemonset": "DaemonSet", "job": "Job", "cronjob": "CronJob",
	"service": "Service", "endpoints": "Endpoints", "persistentvolumeclaim": "PersistentVolumeClaim",
	"persistentvolume": "PersistentVolume", "horizontalpodautoscaler": "HorizontalPodAutoscaler",
	"namespace": "Namespace", "poddisruptionbudget": "PodDisruptionBudget",
}

// parseEventsTable reads `kubectl get events` (default, -o wide, -A). Rows give no
// times: ages are relative to when the command ran, so events keep their order only.
func parseEventsTable(lines []textLine, namespace string) ([]parsedEvent, []string) {
	t := newTable(lines[0].s)
	var out []parsedEvent
	var problems []string
	width, prev := widestLine(lines), ""
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		before := prev
		prev = l.s
		cells, ok := t.row(l.s, "MESSAGE")
		if !ok || !isEventType(cells["TYPE"]) {
			if n := len(out); n > 0 && !ok {
				out[n-1].ev.Message = joinContinuation(out[n-1].ev.Message, before, l.s, width)
				continue
			}
			problems = append(problems, fmt.Sprintf("line %d: not an event row", l.n))
			continue
		}
		ns := namespace
		if v, ok := cells["NAMESPACE"]; ok {
			ns = v
		}
		kind, name, _ := strings.Cut(cells["OBJECT"], "/")
		ev := corev1.Event{Type: cells["TYPE"], Reason: cells["REASON"], Message: cells["MESSAGE"], Count: 1}
		ev.Name = cells["NAME"]
		ev.Namespace = ns
		if k, ok := eventKinds[kind]; ok {
			kind = k
		}
		ev.InvolvedObject = corev1.ObjectReference{Kind: kind, Name: name, FieldPath: cells["SUBOBJECT"]}
		if kind != "Node" && kind != "Namespace" && kind != "PersistentVolume" {
			ev.InvolvedObject.Namespace = ns
		}
		if kind == "Pod" {
			ev.InvolvedObject.APIVersion = "v1"
		}
		if src := cells["SOURCE"]; src != "" {
			comp, host, _ := strings.Cut(src, ", ")
			ev.Source = corev1.EventSource{Component: comp, Host: host}
		}
		if n, err := strconv.ParseInt(cells["COUNT"], 10, 32); err == nil && n > 0 {
			ev.Count = int32(n)
		}
		out = append(out, parsedEvent{ev: ev, line: l.n})
	}
	return out, problems
}

// parseNodesTable reads `kubectl get nodes` (default and -o wide) into Nodes that know
// what a row shows: the name, the roles as their labels, whether Ready is True, whether
// the node is cordoned, the kubelet's version and, with -o wide, addresses and the node's
// OS, kernel and runtime. kubectl prints NotReady for a Ready condition that is False or
// Unknown (k8s.io/kubernetes pkg/printers/internalversion printNode), so a node not
// Ready gets no condition: its row's STATUS is kept in bundle.KubectlNodeStatusAnnotation.
func parseNodesTable(lines []textLine) ([]tableNode, []string) {
	t := newTable(lines[0].s)
	var out []tableNode
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "")
		if !ok || !isDNSName(cells["NAME"]) || cells["STATUS"] == "" {
			problems = append(problems, fmt.Sprintf("line %d: not a node row", l.n))
			continue
		}
		var n corev1.Node
		n.APIVersion, n.Kind = "v1", "Node"
		n.Name = strings.TrimPrefix(cells["NAME"], "node/")
		n.Annotations = map[string]string{bundle.PartialAnnotation: partialSpec + "," + partialStatus,
			bundle.KubectlNodeStatusAnnotation: cells["STATUS"]}
		for _, w := range strings.Split(cells["STATUS"], ",") {
			switch w {
			case "Ready":
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			case "SchedulingDisabled":
				n.Spec.Unschedulable = true
			}
		}
		if roles := cells["ROLES"]; roles != "" && roles != "<none>" {
			n.Labels = map[string]string{}
			for _, r := range strings.Split(roles, ",") {
				n.Labels["node-role.kubernetes.io/"+r] = ""
			}
		}
		n.Status.NodeInfo.KubeletVersion = cells["VERSION"]
		for col, typ := range map[string]corev1.NodeAddressType{"INTERNAL-IP": corev1.NodeInternalIP, "EXTERNAL-IP": corev1.NodeExternalIP} {
			if ip := cells[col]; ip != "" && ip != "<none>" {
				n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: typ, Address: ip})
			}
		}
		slices.SortFunc(n.Status.Addresses, func(a, b corev1.NodeAddress) int { return strings.Compare(string(a.Type), string(b.Type)) })
		n.Status.NodeInfo.OSImage = cells["OS-IMAGE"]
		n.Status.NodeInfo.KernelVersion = cells["KERNEL-VERSION"]
		n.Status.NodeInfo.ContainerRuntimeVersion = cells["CONTAINER-RUNTIME"]
		out = append(out, tableNode{node: n, line: l.n})
	}
	return out, problems
}

// tableNode is a node row of `kubectl get nodes`.
type tableNode struct {
	node corev1.Node
	line int
}

// tablePod is a pod row of `kubectl get pods`: it names the pod, its node and a status
// word, but not which container the status is about.
type tablePod struct {
	pod  corev1.Pod
	line int
}

// parsePodsTable reads `kubectl get pods` (default, -o wide, -A).
func parsePodsTable(lines []textLine, namespace string) ([]tablePod, []string) {
	t := newTable(lines[0].s)
	var out []tablePod
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "")
		if !ok {
			// A row whose end the copy lost (a terminal or a ticket cut it after
			// STATUS or RESTARTS) still names the pod and its state.
			cells, ok = t.rowCut(l.s, podRowKeep)
		}
		if !ok || cells["NAME"] == "" || !strings.Contains(cells["READY"], "/") {
			problems = append(problems, fmt.Sprintf("line %d: not a pod row", l.n))
			continue
		}
		var p corev1.Pod
		p.APIVersion, p.Kind = "v1", "Pod"
		p.Name = strings.TrimPrefix(cells["NAME"], "pod/")
		p.Namespace = namespace
		if v, ok := cells["NAMESPACE"]; ok {
			p.Namespace = v
		}
		if node := cells["NODE"]; node != "" && node != "<none>" {
			p.Spec.NodeName = node
		}
		if ip := cells["IP"]; ip != "" && ip != "<none>" {
			p.Status.PodIP = ip
		}
		if n := cells["NOMINATED NODE"]; n != "" && n != "<none>" {
			p.Status.NominatedNodeName = n
		}
		p.Status.Phase, p.Status.Reason = statusPhase(cells["STATUS"])
		markScheduled(&p, cells["STATUS"])
		setRowReadiness(&p, cells["READY"], cells["RESTARTS"])
		keepRow(&p, cells["READY"], cells["STATUS"], cells["RESTARTS"])
		if labels := cells["LABELS"]; labels != "" && labels != "<none>" {
			p.Labels = map[string]string{}
			for _, kv := range strings.Split(labels, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					p.Labels[k] = v
				}
			}
		}
		out = append(out, tablePod{pod: p, line: l.n})
	}
	return out, problems
}

// statusPhase maps the STATUS column to a phase where the word implies one, and keeps
// the word as the pod's status reason where it says where the pod is held: kubectl
// prints Init:1/2, ContainerCreating or Evicted for a pod past scheduling, and that
// places it in the chain (analyze reads these reasons as kubectl's). A container
// reason (CrashLoopBackOff) belongs to a container the table does not name, so it is
// kept as the pod's reason without a phase.
func statusPhase(s string) (corev1.PodPhase, string) {
	switch s {
	case "Pending", "Running", "Succeeded", "Failed", "Unknown":
		return corev1.PodPhase(s), ""
	case "Completed":
		return corev1.PodSucceeded, ""
	case "SchedulingGated":
		return corev1.PodPending, s
	case "ContainerCreating", "PodInitializing":
		return corev1.PodPending, s
	case "Evicted", "NodeAffinity", "OutOfpods", "OutOfcpu", "OutOfmemory", "OutOfephemeral-storage", "NodeShutdown", "Terminated":
		return corev1.PodFailed, s
	}
	if strings.HasPrefix(s, "Init:") {
		// Init:1/2 (init containers running), Init:CrashLoopBackOff, Init:Error: the
		// init containers' step, past scheduling.
		return corev1.PodPending, s
	}
	if s == "" || s == "<none>" {
		return "", ""
	}
	// What kubectl prints in STATUS otherwise is a reason: a container's waiting or
	// terminated reason (CrashLoopBackOff, ImagePullBackOff, OOMKilled, Error), the
	// pod's own (NodeLost), or Terminating. The phase it hides is not known.
	return "", s
}

// pastScheduling reports whether kubectl's STATUS word shows a pod bound to a node:
// everything but Pending, SchedulingGated and an empty cell. kubectl's table may not
// name the node (no -o wide), so the pod is marked scheduled without one.
func pastScheduling(status string) bool {
	switch status {
	case "", "<none>", "Pending", "SchedulingGated", "Unknown":
		return false
	}
	return true
}

// markScheduled records that kubectl showed the pod past scheduling.
func markScheduled(p *corev1.Pod, status string) {
	if p.Spec.NodeName != "" || !pastScheduling(status) {
		return
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		Message: "kubectl get pods shows " + status + ", past scheduling"})
}

// errNotARow says a table's line is not one of its rows.
var errNotARow = errors.New("not a row")

// tableObjects reads a kubectl table's rows (the header first) into objects: object
// makes one of a row's cells, or returns errNotARow; a line that is not a row, or a row
// whose object cannot be made, is a problem named by its line.
func tableObjects(lines []textLine, what string, object func(cells map[string]string) (rawObject, error)) ([]rawObject, []string) {
	t := newTable(lines[0].s)
	var out []rawObject
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "")
		o, err := rawObject{}, errNotARow
		if ok {
			o, err = object(cells)
		}
		switch {
		case errors.Is(err, errNotARow):
			problems = append(problems, fmt.Sprintf("line %d: not a %s row", l.n, what))
		case err != nil:
			problems = append(problems, fmt.Sprintf("line %d: %v", l.n, err))
		default:
			o.line = l.n
			out = append(out, o)
		}
	}
	return out, problems
}

// parseEndpointsTable reads `kubectl get endpoints` (-A too): per Service, the ready
// addresses kubectl lists ("10.1.0.5:8080,10.1.0.6:8080 + 3 more...", or <none>), as
// EndpointSlices marked partial: kubectl lists ready addresses only and cuts long lists
// ("+ 3 more..."), and the addresses it left out are not invented.
func parseEndpointsTable(lines []textLine, namespace string) ([]rawObject, []string) {
	return tableObjects(lines, "endpoints", func(cells map[string]string) (rawObject, error) {
		name := cells["NAME"]
		if !isDNSName(name) || cells["ENDPOINTS"] == "" {
			return rawObject{}, errNotARow
		}
		ns := namespace
		if v, ok := cells["NAMESPACE"]; ok && v != "" {
			ns = v
		}
		var addrs []endpointAddr
		for _, a := range strings.Split(cells["ENDPOINTS"], ",") {
			a = strings.TrimSpace(a)
			if i := strings.Index(a, " + "); i >= 0 {
				a = strings.TrimSpace(a[:i])
			}
			if a == "" || a == "<none>" {
				continue
			}
			host, port, _ := strings.Cut(a, ":")
			addrs = append(addrs, endpointAddr{ip: host, port: port, ready: true})
		}
		return endpointSliceObject(ns, name, addrs, true)
	})
}

// endpointAddr is one address of a Service's endpoints.
type endpointAddr struct {
	ip, port, portName, protocol, target string
	ready                                bool
}

// endpointsAsSlice turns a v1 Endpoints object into the EndpointSlice the mirroring
// controller would make of it: same name, the kubernetes.io/service-name label, ready
// and not-ready addresses with the subset's ports.
func endpointsAsSlice(o rawObject) (rawObject, bool) {
	var ep struct {
		Subsets []struct {
			Addresses         []endpointsAddress `json:"addresses"`
			NotReadyAddresses []endpointsAddress `json:"notReadyAddresses"`
			Ports             []struct {
				Name     string `json:"name"`
				Port     int32  `json:"port"`
				Protocol string `json:"protocol"`
			} `json:"ports"`
		} `json:"subsets"`
	}
	if json.Unmarshal(o.data, &ep) != nil {
		return o, false
	}
	var addrs []endpointAddr
	for _, ss := range ep.Subsets {
		port, portName, proto := "", "", ""
		if len(ss.Ports) > 0 {
			port, portName, proto = strconv.Itoa(int(ss.Ports[0].Port)), ss.Ports[0].Name, ss.Ports[0].Protocol
		}
		for _, a := range ss.Addresses {
			addrs = append(addrs, endpointAddr{ip: a.IP, port: port, portName: portName, protocol: proto, target: a.TargetRef.Name, ready: true})
		}
		for _, a := range ss.NotReadyAddresses {
			addrs = append(addrs, endpointAddr{ip: a.IP, port: port, portName: portName, protocol: proto, target: a.TargetRef.Name})
		}
	}
	conv, err := endpointSliceObject(o.namespace, o.name, addrs, false)
	if err != nil {
		return o, false
	}
	conv.line = o.line
	return conv, true
}

type endpointsAddress struct {
	IP        string `json:"ip"`
	TargetRef struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"targetRef"`
}

// endpointSliceObject builds the EndpointSlice of a Service's addresses, marked as
// converted from Endpoints (and partial when the source listed only some addresses).
func endpointSliceObject(ns, service string, addrs []endpointAddr, partial bool) (rawObject, error) {
	return endpointSliceNamed(ns, service, service, "v1 Endpoints "+service, addrs, partial)
}

// endpointSliceNamed builds the EndpointSlice name of a Service's addresses, its
// podflow.dev/converted-from annotation saying what it was read from.
func endpointSliceNamed(ns, service, name, from string, addrs []endpointAddr, partial bool) (rawObject, error) {
	type port struct {
		Name     string `json:"name,omitempty"`
		Port     *int32 `json:"port,omitempty"`
		Protocol string `json:"protocol,omitempty"`
	}
	type endpoint struct {
		Addresses  []string          `json:"addresses"`
		Conditions map[string]bool   `json:"conditions"`
		TargetRef  map[string]string `json:"targetRef,omitempty"`
	}
	annotations := map[string]string{"podflow.dev/converted-from": from}
	if partial {
		// kubectl get endpoints lists ready addresses only, and cuts long lists.
		annotations[bundle.PartialAnnotation] = "notReadyEndpoints"
	}
	eps := []endpoint{}
	var ports []port
	seenPort := map[string]bool{}
	for _, a := range addrs {
		e := endpoint{Addresses: []string{a.ip}, Conditions: map[string]bool{"ready": a.ready}}
		if a.target != "" {
			e.TargetRef = map[string]string{"kind": "Pod", "name": a.target, "namespace": ns}
		}
		eps = append(eps, e)
		if a.port != "" && !seenPort[a.port+a.portName] {
			seenPort[a.port+a.portName] = true
			if n, err := strconv.ParseInt(a.port, 10, 32); err == nil {
				v := int32(n)
				ports = append(ports, port{Name: a.portName, Port: &v, Protocol: a.protocol})
			}
		}
	}
	obj := map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
		"metadata": map[string]any{"name": name, "namespace": ns, "annotations": annotations,
			"labels": map[string]string{"kubernetes.io/service-name": service}},
		"endpoints": eps, "ports": ports,
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return rawObject{}, err
	}
	return rawObject{kind: "EndpointSlice", namespace: ns, name: name, data: data}, nil
}
