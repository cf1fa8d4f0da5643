package serve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"podflow.dev/podflow/untrusted"
)

// column is one column of a resource's table: priority 1 columns show with -o wide.
type column struct {
	name, typ string
	priority  int32
}

// printer makes the table kubectl get prints for one resource: its columns after NAME
// and the cells of one object for them.
type printer struct {
	columns []column
	cells   func(ix *index, o *object) []any
	// nameLast puts NAME last, shown with -o wide only, as the API server's event
	// printer does.
	nameLast bool
}

// table is the meta.k8s.io/v1 Table of objects, with NAME first and the columns of
// the resource's printer, or NAME and CREATED AT for a resource without one (as the API
// server's default table). Every cell that
// came from the bundle is made inert for a terminal.
func (s *Server) table(res *resource, objs []*object, includeObject, cont string) *metav1.Table {
	p, ok := printers[res.list.Resource]
	if !ok {
		p, ok = apiPrinters[res.list.Resource]
	}
	if !ok {
		p = defaultPrinter
	}
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: "1", Continue: cont},
		Rows:     []metav1.TableRow{},
	}
	name := metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name",
		Description: "Name must be unique within a namespace."}
	if !p.nameLast {
		t.ColumnDefinitions = append(t.ColumnDefinitions, name)
	}
	for _, c := range p.columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c.name, Type: c.typ, Priority: c.priority})
	}
	if p.nameLast {
		name.Priority = 1
		t.ColumnDefinitions = append(t.ColumnDefinitions, name)
	}
	for _, o := range objs {
		cells := append([]any{o.name}, p.cells(s.ix, o)...)
		if p.nameLast {
			cells = append(p.cells(s.ix, o), o.name)
		}
		for i, c := range cells {
			if str, ok := c.(string); ok {
				cells[i] = untrusted.Text(str)
			}
		}
		row := metav1.TableRow{Cells: cells}
		var embed any
		switch includeObject {
		case "None":
		case "Object":
			embed = o.item
		default:
			embed = partial(o)
		}
		if embed != nil {
			if raw, err := json.Marshal(embed); err == nil {
				row.Object = runtime.RawExtension{Raw: raw}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// age is how long ago t was, as kubectl prints it.
func (ix *index) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(ix.now().Sub(t))
}

func (ix *index) ageOf(t metav1.Time) string { return ix.age(t.Time) }

// typed decodes an object into its API type for the columns that need its structure.
func typed[T any](o *object) *T {
	v := new(T)
	raw, err := json.Marshal(o.item)
	if err == nil {
		// A field of the wrong shape leaves the rest decoded; the cells say what is known.
		_ = json.Unmarshal(raw, v)
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

var printers = map[string]printer{
	"pods": {
		columns: []column{{"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0}, {"Age", "string", 0},
			{"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1}, {"Readiness Gates", "string", 1}},
		cells: func(ix *index, o *object) []any {
			p := typed[corev1.Pod](o)
			ready, restarts := 0, 0
			for _, c := range p.Status.ContainerStatuses {
				if c.Ready {
					ready++
				}
				restarts += int(c.RestartCount)
			}
			gates := "<none>"
			if n := len(p.Spec.ReadinessGates); n > 0 {
				met := 0
				for _, g := range p.Spec.ReadinessGates {
					for _, c := range p.Status.Conditions {
						if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
							met++
						}
					}
				}
				gates = fmt.Sprintf("%d/%d", met, n)
			}
			return []any{fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)), podStatus(p), fmt.Sprint(restarts),
				ix.ageOf(p.CreationTimestamp), orNone(p.Status.PodIP), orNone(p.Spec.NodeName),
				orNone(p.Status.NominatedNodeName), gates}
		},
	},
	"nodes": {
		columns: []column{{"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0}, {"Version", "string", 0},
			{"Internal-IP", "string", 1}, {"External-IP", "string", 1}, {"OS-Image", "string", 1},
			{"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}},
		cells: func(ix *index, o *object) []any {
			n := typed[corev1.Node](o)
			status := "Unknown"
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					switch c.Status {
					case corev1.ConditionTrue:
						status = "Ready"
					case corev1.ConditionFalse:
						status = "NotReady"
					}
				}
			}
			if n.Spec.Unschedulable {
				status += ",SchedulingDisabled"
			}
			var roles []string
			for k := range n.Labels {
				if role, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && role != "" {
					roles = append(roles, role)
				}
			}
			sort.Strings(roles)
			addr := func(t corev1.NodeAddressType) string {
				for _, a := range n.Status.Addresses {
					if a.Type == t {
						return a.Address
					}
				}
				return "<none>"
			}
			return []any{status, orNone(strings.Join(roles, ",")), ix.ageOf(n.CreationTimestamp), n.Status.NodeInfo.KubeletVersion,
				addr(corev1.NodeInternalIP), addr(corev1.NodeExternalIP), orNone(n.Status.NodeInfo.OSImage),
				orNone(n.Status.NodeInfo.KernelVersion), orNone(n.Status.NodeInfo.ContainerRuntimeVersion)}
		},
	},
	"events": {
		columns: []column{{"Last Seen", "string", 0}, {"Type", "string", 0}, {"Reason", "string", 0}, {"Object", "string", 0},
			{"Subobject", "string", 1}, {"Source", "string", 1}, {"Message", "string", 0}, {"First Seen", "string", 1},
			{"Count", "string", 1}},
		nameLast: true,
		cells: func(ix *index, o *object) []any {
			e := typed[corev1.Event](o)
			last := e.LastTimestamp.Time
			if e.Series != nil && !e.Series.LastObservedTime.IsZero() {
				last = e.Series.LastObservedTime.Time
			}
			if last.IsZero() {
				last = e.EventTime.Time
			}
			first := e.FirstTimestamp.Time
			if first.IsZero() {
				first = e.EventTime.Time
			}
			count := e.Count
			if e.Series != nil {
				count = e.Series.Count
			}
			source := e.Source.Component
			if source == "" {
				source = e.ReportingController
			}
			if e.Source.Host != "" {
				source += ", " + e.Source.Host
			}
			obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
			return []any{ix.age(last), e.Type, e.Reason, obj, e.InvolvedObject.FieldPath, source,
				strings.TrimSpace(e.Message), ix.age(first), fmt.Sprint(count)}
		},
	},
	"namespaces": {
		columns: []column{{"Status", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			n := typed[corev1.Namespace](o)
			return []any{string(n.Status.Phase), ix.ageOf(n.CreationTimestamp)}
		},
	},
	"deployments": {
		columns: []column{{"Ready", "string", 0}, {"Up-to-date", "string", 0}, {"Available", "string", 0}, {"Age", "string", 0},
			{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			d := typed[appsv1.Deployment](o)
			names, images := containerColumns(d.Spec.Template.Spec.Containers)
			return []any{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)), fmt.Sprint(d.Status.UpdatedReplicas),
				fmt.Sprint(d.Status.AvailableReplicas), ix.ageOf(d.CreationTimestamp), names, images, selector(d.Spec.Selector)}
		},
	},
	"statefulsets": {
		columns: []column{{"Ready", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1}, {"Images", "string", 1}},
		cells: func(ix *index, o *object) []any {
			s := typed[appsv1.StatefulSet](o)
			names, images := containerColumns(s.Spec.Template.Spec.Containers)
			return []any{fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)), ix.ageOf(s.CreationTimestamp), names, images}
		},
	},
	"services": {
		columns: []column{{"Type", "string", 0}, {"Cluster-IP", "string", 0}, {"External-IP", "string", 0}, {"Port(s)", "string", 0},
			{"Age", "string", 0}, {"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			s := typed[corev1.Service](o)
			var ports []string
			for _, p := range s.Spec.Ports {
				port := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
				if p.NodePort != 0 {
					port = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
				}
				ports = append(ports, port)
			}
			ext := strings.Join(s.Spec.ExternalIPs, ",")
			for _, in := range s.Status.LoadBalancer.Ingress {
				ext = strings.Trim(ext+","+in.IP+in.Hostname, ",")
			}
			var sel []string
			for k, v := range s.Spec.Selector {
				sel = append(sel, k+"="+v)
			}
			sort.Strings(sel)
			return []any{string(s.Spec.Type), orNone(s.Spec.ClusterIP), orNone(ext), orNone(strings.Join(ports, ",")),
				ix.ageOf(s.CreationTimestamp), orNone(strings.Join(sel, ","))}
		},
	},
}

func accessMode(m corev1.PersistentVolumeAccessMode) string {
	switch m {
	case corev1.ReadWriteOnce:
		return "RWO"
	case corev1.ReadOnlyMany:
		return "ROX"
	case corev1.ReadWriteMany:
		return "RWX"
	case corev1.ReadWriteOncePod:
		return "RWOP"
	}
	return string(m)
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func containerColumns(cs []corev1.Container) (string, string) {
	var names, images []string
	for _, c := range cs {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func selector(s *metav1.LabelSelector) string {
	if s == nil {
		return "<none>"
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<error>"
	}
	return orNone(sel.String())
}

// podStatus is the STATUS column of kubectl get pods: the pod's reason, else that of
// its first waiting or failed init container (Init:...), else that of its containers,
// and Terminating for a pod being deleted.
func podStatus(p *corev1.Pod) string {
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	initializing := false
	for i, c := range p.Status.InitContainerStatuses {
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case c.State.Terminated != nil:
			if c.State.Terminated.Reason != "" {
				reason = "Init:" + c.State.Terminated.Reason
			} else if c.State.Terminated.Signal != 0 {
				reason = fmt.Sprintf("Init:Signal:%d", c.State.Terminated.Signal)
			} else {
				reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing {
		running := false
		for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := p.Status.ContainerStatuses[i]
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil && c.State.Terminated.Reason != "":
				reason = c.State.Terminated.Reason
			case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
			case c.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
			case c.Ready && c.State.Running != nil:
				running = true
			}
		}
		if reason == "Completed" && running {
			reason = "Running"
		}
	}
	if p.DeletionTimestamp != nil {
		if p.Status.Reason == "NodeLost" {
			return "Unknown"
		}
		return "Terminating"
	}
	return reason
}
