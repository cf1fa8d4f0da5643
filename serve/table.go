package serve

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
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
			st := podState(p)
			restarts := strconv.Itoa(st.restarts)
			if st.restarts != 0 && !st.lastRestart.IsZero() {
				restarts = fmt.Sprintf("%d (%s ago)", st.restarts, ix.age(st.lastRestart))
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
			return []any{fmt.Sprintf("%d/%d", st.ready, st.total), st.reason, restarts,
				ix.ageOf(p.CreationTimestamp), orNone(p.Status.PodIP), orNone(p.Spec.NodeName),
				orNone(p.Status.NominatedNodeName), gates}
		},
	},
	"nodes": {
		columns: []column{{"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0}, {"Version", "string", 0},
			{"Internal-IP", "string", 1}, {"External-IP", "string", 1}, {"OS-Image", "string", 1},
			{"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}},
		// As the API server's printNode (pkg/printers/internalversion/printers.go): a
		// Ready condition other than True is NotReady, no Ready condition is Unknown; an
		// empty node-info field is <unknown>; the kernel carries the architecture.
		cells: func(ix *index, o *object) []any {
			n := typed[corev1.Node](o)
			status := "Unknown"
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					status = "NotReady"
					if c.Status == corev1.ConditionTrue {
						status = "Ready"
					}
				}
			}
			if n.Spec.Unschedulable {
				status += ",SchedulingDisabled"
			}
			roles := map[string]bool{}
			for k, v := range n.Labels {
				if role, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && role != "" {
					roles[role] = true
				} else if k == "kubernetes.io/role" && v != "" {
					roles[v] = true
				}
			}
			addr := func(t corev1.NodeAddressType) string {
				for _, a := range n.Status.Addresses {
					if a.Type == t {
						return a.Address
					}
				}
				return "<none>"
			}
			orUnknown := func(s string) string {
				if s == "" {
					return "<unknown>"
				}
				return s
			}
			info := n.Status.NodeInfo
			kernel := orUnknown(info.KernelVersion)
			if info.Architecture != "" {
				kernel += " (" + info.Architecture + ")"
			}
			return []any{status, orNone(strings.Join(slices.Sorted(maps.Keys(roles)), ",")), ix.ageOf(n.CreationTimestamp), info.KubeletVersion,
				addr(corev1.NodeInternalIP), addr(corev1.NodeExternalIP), orUnknown(info.OSImage),
				kernel, orUnknown(info.ContainerRuntimeVersion)}
		},
	},
	"events": {
		columns: []column{{"Last Seen", "string", 0}, {"Type", "string", 0}, {"Reason", "string", 0}, {"Object", "string", 0},
			{"Subobject", "string", 1}, {"Source", "string", 1}, {"Message", "string", 0}, {"First Seen", "string", 1},
			{"Count", "string", 1}},
		nameLast: true,
		cells: func(ix *index, o *object) []any {
			// As the API server's printEvent: LAST SEEN falls back on FIRST SEEN, a
			// series counts its own, and a singleton of the events API counts 1.
			e := typed[corev1.Event](o)
			first := e.FirstTimestamp.Time
			if first.IsZero() {
				first = e.EventTime.Time
			}
			last := e.LastTimestamp.Time
			if last.IsZero() {
				last = first
			}
			count := e.Count
			if e.Series != nil {
				last, count = e.Series.LastObservedTime.Time, e.Series.Count
			} else if count == 0 {
				count = 1
			}
			source := firstNonEmpty(e.Source.Component, e.ReportingController)
			if host := firstNonEmpty(e.Source.Host, e.ReportingInstance); host != "" {
				source += ", " + host
			}
			obj := strings.ToLower(e.InvolvedObject.Kind)
			if e.InvolvedObject.Name != "" {
				obj += "/" + e.InvolvedObject.Name
			}
			return []any{ix.age(last), e.Type, e.Reason, obj, e.InvolvedObject.FieldPath, source,
				strings.TrimSpace(e.Message), ix.age(first), int64(count)}
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
			// UP-TO-DATE and AVAILABLE are declared strings and printed as integers.
			return []any{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)), int64(d.Status.UpdatedReplicas),
				int64(d.Status.AvailableReplicas), ix.ageOf(d.CreationTimestamp), names, images, selector(d.Spec.Selector)}
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

// podRow is what the API server's pod printer (Kubernetes pkg/printers/internalversion,
// printPod) derives from a pod's status: READY's counts, STATUS, and RESTARTS with the
// time of the last one.
type podRow struct {
	ready, total, restarts int
	reason                 string
	lastRestart            time.Time
}

func podState(p *corev1.Pod) podRow {
	r := podRow{total: len(p.Spec.Containers), reason: string(p.Status.Phase)}
	if p.Status.Reason != "" {
		r.reason = p.Status.Reason
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			r.reason = corev1.PodReasonSchedulingGated
		}
	}
	restartable := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			restartable[c.Name] = true
			r.total++
		}
	}
	lastTerminated := func(c corev1.ContainerStatus, last *time.Time) {
		if t := c.LastTerminationState.Terminated; t != nil && last.Before(t.FinishedAt.Time) {
			*last = t.FinishedAt.Time
		}
	}
	var sidecarRestarts int
	var sidecarLast time.Time
	initializing := false
	for i, c := range p.Status.InitContainerStatuses {
		r.restarts += int(c.RestartCount)
		lastTerminated(c, &r.lastRestart)
		if restartable[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			lastTerminated(c, &sidecarLast)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case restartable[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				r.ready++
			}
			continue
		case c.State.Terminated != nil:
			switch {
			case c.State.Terminated.Reason != "":
				r.reason = "Init:" + c.State.Terminated.Reason
			case c.State.Terminated.Signal != 0:
				r.reason = fmt.Sprintf("Init:Signal:%d", c.State.Terminated.Signal)
			default:
				r.reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			r.reason = "Init:" + c.State.Waiting.Reason
		default:
			r.reason = fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || podCondition(p, corev1.PodInitialized) {
		r.restarts, r.lastRestart = sidecarRestarts, sidecarLast
		running := false
		errorReason := ""
		for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := p.Status.ContainerStatuses[i]
			r.restarts += int(c.RestartCount)
			lastTerminated(c, &r.lastRestart)
			switch t := c.State.Terminated; {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				r.reason = c.State.Waiting.Reason
			case t != nil:
				switch {
				case t.Reason != "":
					r.reason = t.Reason
				case t.Signal != 0:
					r.reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					r.reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if t.ExitCode != 0 {
					errorReason = r.reason
				}
			case c.Ready && c.State.Running != nil:
				running = true
				r.ready++
			}
		}
		// Back to Running when a container still runs, as the printer does.
		if r.reason == "Completed" {
			switch {
			case running && podCondition(p, corev1.PodReady):
				r.reason = "Running"
			case errorReason != "":
				r.reason = errorReason
			case running:
				r.reason = "NotReady"
			}
		}
	}
	switch {
	case p.DeletionTimestamp != nil && p.Status.Reason == "NodeLost":
		r.reason = "Unknown"
	case p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed:
		r.reason = "Terminating"
	}
	return r
}

// podCondition reports whether the pod's condition of type t is True.
func podCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
