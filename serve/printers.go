package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The printers below follow the API server's table printers (Kubernetes
// pkg/printers/internalversion): the same columns, in the same order, with the same
// types, and the same cells. The server prints the wide (priority 1) cells too; kubectl
// shows them with -o wide.

// defaultPrinter is the API server's table for a resource without a printer (Roles,
// ClusterRoles, LimitRanges): the name and the creation time.
var defaultPrinter = printer{
	columns: []column{{"Created At", "date", 0}},
	cells: func(_ *index, o *object) []any {
		if o.created.IsZero() {
			return []any{nil}
		}
		return []any{o.created.UTC().Format(time.RFC3339)}
	},
}

var apiPrinters = map[string]printer{
	"replicasets": {
		columns: []column{{"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0}, {"Age", "string", 0},
			{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			r := typed[appsv1.ReplicaSet](o)
			names, images := containerColumns(r.Spec.Template.Spec.Containers)
			return []any{int64(replicas(r.Spec.Replicas)), int64(r.Status.Replicas), int64(r.Status.ReadyReplicas),
				ix.ageOf(r.CreationTimestamp), names, images, selector(r.Spec.Selector)}
		},
	},
	"daemonsets": {
		columns: []column{{"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0}, {"Up-to-date", "integer", 0},
			{"Available", "integer", 0}, {"Node Selector", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1},
			{"Images", "string", 1}, {"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			d := typed[appsv1.DaemonSet](o)
			names, images := containerColumns(d.Spec.Template.Spec.Containers)
			return []any{int64(d.Status.DesiredNumberScheduled), int64(d.Status.CurrentNumberScheduled), int64(d.Status.NumberReady),
				int64(d.Status.UpdatedNumberScheduled), int64(d.Status.NumberAvailable),
				orNone(labels.FormatLabels(d.Spec.Template.Spec.NodeSelector)), ix.ageOf(d.CreationTimestamp), names, images,
				selector(d.Spec.Selector)}
		},
	},
	"jobs": {
		columns: []column{{"Status", "string", 0}, {"Completions", "string", 0}, {"Duration", "string", 0}, {"Age", "string", 0},
			{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			j := typed[batchv1.Job](o)
			var completions string
			switch {
			case j.Spec.Completions != nil:
				completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
			case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
				completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
			default:
				completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
			}
			var took string
			switch {
			case j.Status.StartTime == nil:
			case j.Status.CompletionTime == nil:
				took = duration.HumanDuration(ix.now().Sub(j.Status.StartTime.Time))
			default:
				took = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
			}
			names, images := containerColumns(j.Spec.Template.Spec.Containers)
			return []any{jobStatus(j), completions, took, ix.ageOf(j.CreationTimestamp), names, images, selector(j.Spec.Selector)}
		},
	},
	"cronjobs": {
		columns: []column{{"Schedule", "string", 0}, {"Timezone", "string", 0}, {"Suspend", "boolean", 0}, {"Active", "integer", 0},
			{"Last Schedule", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1}, {"Images", "string", 1},
			{"Selector", "string", 1}},
		cells: func(ix *index, o *object) []any {
			c := typed[batchv1.CronJob](o)
			last := "<none>"
			if c.Status.LastScheduleTime != nil {
				last = ix.ageOf(*c.Status.LastScheduleTime)
			}
			tz := "<none>"
			if c.Spec.TimeZone != nil {
				tz = *c.Spec.TimeZone
			}
			suspend := "<unset>"
			if c.Spec.Suspend != nil {
				suspend = "False"
				if *c.Spec.Suspend {
					suspend = "True"
				}
			}
			names, images := containerColumns(c.Spec.JobTemplate.Spec.Template.Spec.Containers)
			return []any{c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, ix.ageOf(c.CreationTimestamp),
				names, images, selector(c.Spec.JobTemplate.Spec.Selector)}
		},
	},
	"persistentvolumeclaims": {
		columns: []column{{"Status", "string", 0}, {"Volume", "string", 0}, {"Capacity", "string", 0}, {"Access Modes", "string", 0},
			{"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0}, {"Age", "string", 0}, {"VolumeMode", "string", 1}},
		cells: func(ix *index, o *object) []any {
			c := typed[corev1.PersistentVolumeClaim](o)
			phase := string(c.Status.Phase)
			if c.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			capacity, modes := "", ""
			if c.Spec.VolumeName != "" {
				modes = accessModes(c.Status.AccessModes)
				if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
					capacity = q.String()
				} else {
					capacity = "0"
				}
			}
			class := ""
			if c.Spec.StorageClassName != nil {
				class = *c.Spec.StorageClassName
			} else if v, ok := c.Annotations[corev1.BetaStorageClassAnnotation]; ok {
				class = v
			}
			return []any{phase, c.Spec.VolumeName, capacity, modes, class, unset(c.Spec.VolumeAttributesClassName),
				ix.ageOf(c.CreationTimestamp), volumeMode(c.Spec.VolumeMode)}
		},
	},
	"persistentvolumes": {
		columns: []column{{"Capacity", "string", 0}, {"Access Modes", "string", 0}, {"Reclaim Policy", "string", 0},
			{"Status", "string", 0}, {"Claim", "string", 0}, {"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0},
			{"Reason", "string", 0}, {"Age", "string", 0}, {"VolumeMode", "string", 1}},
		cells: func(ix *index, o *object) []any {
			v := typed[corev1.PersistentVolume](o)
			claim := ""
			if v.Spec.ClaimRef != nil {
				claim = v.Spec.ClaimRef.Namespace + "/" + v.Spec.ClaimRef.Name
			}
			size := "0"
			if q, ok := v.Spec.Capacity[corev1.ResourceStorage]; ok {
				size = q.String()
			}
			phase := string(v.Status.Phase)
			if v.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			class := v.Spec.StorageClassName
			if c, ok := v.Annotations[corev1.BetaStorageClassAnnotation]; ok {
				class = c
			}
			return []any{size, accessModes(v.Spec.AccessModes), string(v.Spec.PersistentVolumeReclaimPolicy), phase, claim,
				class, unset(v.Spec.VolumeAttributesClassName), v.Status.Reason, ix.ageOf(v.CreationTimestamp),
				volumeMode(v.Spec.VolumeMode)}
		},
	},
	"storageclasses": {
		columns: []column{{"Provisioner", "string", 0}, {"ReclaimPolicy", "string", 0}, {"VolumeBindingMode", "string", 0},
			{"AllowVolumeExpansion", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[storagev1.StorageClass](o)
			reclaim := string(corev1.PersistentVolumeReclaimDelete)
			if c.ReclaimPolicy != nil {
				reclaim = string(*c.ReclaimPolicy)
			}
			binding := string(storagev1.VolumeBindingImmediate)
			if c.VolumeBindingMode != nil {
				binding = string(*c.VolumeBindingMode)
			}
			expand := c.AllowVolumeExpansion != nil && *c.AllowVolumeExpansion
			return []any{c.Provisioner, reclaim, binding, expand, ix.ageOf(c.CreationTimestamp)}
		},
	},
	"csidrivers": {
		columns: []column{{"AttachRequired", "boolean", 0}, {"PodInfoOnMount", "boolean", 0}, {"StorageCapacity", "boolean", 0},
			{"TokenRequests", "string", 0}, {"RequiresRepublish", "boolean", 0}, {"Modes", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			d := typed[storagev1.CSIDriver](o)
			tokens := "<unset>"
			if d.Spec.TokenRequests != nil {
				var aud []string
				for _, t := range d.Spec.TokenRequests {
					aud = append(aud, t.Audience)
				}
				tokens = strings.Join(aud, ",")
			}
			var modes []string
			for _, m := range d.Spec.VolumeLifecycleModes {
				modes = append(modes, string(m))
			}
			return []any{d.Spec.AttachRequired == nil || *d.Spec.AttachRequired, isTrue(d.Spec.PodInfoOnMount),
				isTrue(d.Spec.StorageCapacity), tokens, isTrue(d.Spec.RequiresRepublish), orNone(strings.Join(modes, ",")),
				ix.ageOf(d.CreationTimestamp)}
		},
	},
	"priorityclasses": {
		columns: []column{{"Value", "integer", 0}, {"Global-Default", "boolean", 0}, {"Age", "string", 0}, {"PreemptionPolicy", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[schedulingv1.PriorityClass](o)
			policy := ""
			if c.PreemptionPolicy != nil {
				policy = string(*c.PreemptionPolicy)
			}
			return []any{int64(c.Value), c.GlobalDefault, ix.ageOf(c.CreationTimestamp), policy}
		},
	},
	"runtimeclasses": {
		columns: []column{{"Handler", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[nodev1.RuntimeClass](o)
			return []any{c.Handler, ix.ageOf(c.CreationTimestamp)}
		},
	},
	"validatingwebhookconfigurations": {
		columns: []column{{"Webhooks", "integer", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[admissionregistrationv1.ValidatingWebhookConfiguration](o)
			return []any{int64(len(c.Webhooks)), ix.ageOf(c.CreationTimestamp)}
		},
	},
	"mutatingwebhookconfigurations": {
		columns: []column{{"Webhooks", "integer", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[admissionregistrationv1.MutatingWebhookConfiguration](o)
			return []any{int64(len(c.Webhooks)), ix.ageOf(c.CreationTimestamp)}
		},
	},
	"leases": {
		columns: []column{{"Holder", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			l := typed[coordinationv1.Lease](o)
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return []any{holder, ix.ageOf(l.CreationTimestamp)}
		},
	},
	"configmaps": {
		columns: []column{{"Data", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			c := typed[corev1.ConfigMap](o)
			return []any{int64(configMapKeys(c)), ix.ageOf(c.CreationTimestamp)}
		},
	},
	"secrets": {
		columns: []column{{"Type", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			s := typed[corev1.Secret](o)
			return []any{string(s.Type), int64(configMapKeys(&corev1.ConfigMap{ObjectMeta: s.ObjectMeta, BinaryData: s.Data})),
				ix.ageOf(s.CreationTimestamp)}
		},
	},
	"serviceaccounts": {
		columns: []column{{"Age", "string", 0}},
		cells:   func(ix *index, o *object) []any { return []any{ix.age(o.created)} },
	},
	"resourcequotas": {
		columns: []column{{"Request", "string", 0}, {"Limit", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			q := typed[corev1.ResourceQuota](o)
			var names []string
			for n := range q.Status.Hard {
				names = append(names, string(n))
			}
			sort.Strings(names)
			var req, lim []string
			for _, n := range names {
				used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
				cell := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
				if head, _, ok := strings.Cut(n, "."); ok && head == "limits" {
					lim = append(lim, cell)
				} else {
					req = append(req, cell)
				}
			}
			return []any{strings.Join(req, ", "), strings.Join(lim, ", "), ix.ageOf(q.CreationTimestamp)}
		},
	},
	"poddisruptionbudgets": {
		columns: []column{{"Min Available", "string", 0}, {"Max Unavailable", "string", 0}, {"Allowed Disruptions", "integer", 0},
			{"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			p := typed[policyv1.PodDisruptionBudget](o)
			minA, maxU := "N/A", "N/A"
			if p.Spec.MinAvailable != nil {
				minA = p.Spec.MinAvailable.String()
			}
			if p.Spec.MaxUnavailable != nil {
				maxU = p.Spec.MaxUnavailable.String()
			}
			return []any{minA, maxU, int64(p.Status.DisruptionsAllowed), ix.ageOf(p.CreationTimestamp)}
		},
	},
	"networkpolicies": {
		columns: []column{{"Pod-Selector", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			n := typed[networkingv1.NetworkPolicy](o)
			return []any{metav1.FormatLabelSelector(&n.Spec.PodSelector), ix.ageOf(n.CreationTimestamp)}
		},
	},
	"ingresses": {
		columns: []column{{"Class", "string", 0}, {"Hosts", "string", 0}, {"Address", "string", 0}, {"Ports", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			in := typed[networkingv1.Ingress](o)
			class := "<none>"
			if in.Spec.IngressClassName != nil {
				class = *in.Spec.IngressClassName
			}
			var hosts []string
			more := false
			for _, r := range in.Spec.Rules {
				if len(hosts) == 3 {
					more = true
				}
				if !more && r.Host != "" {
					hosts = append(hosts, r.Host)
				}
			}
			h := "*"
			if len(hosts) > 0 {
				h = strings.Join(hosts, ",")
				if more {
					h = fmt.Sprintf("%s + %d more...", h, len(in.Spec.Rules)-3)
				}
			}
			addrs := map[string]bool{}
			for _, lb := range in.Status.LoadBalancer.Ingress {
				if lb.IP != "" {
					addrs[lb.IP] = true
				} else if lb.Hostname != "" {
					addrs[lb.Hostname] = true
				}
			}
			var addr []string
			for a := range addrs {
				addr = append(addr, a)
			}
			sort.Strings(addr)
			ports := "80"
			if len(in.Spec.TLS) != 0 {
				ports = "80, 443"
			}
			return []any{class, h, strings.Join(addr, ","), ports, ix.ageOf(in.CreationTimestamp)}
		},
	},
	"horizontalpodautoscalers": {
		columns: []column{{"Reference", "string", 0}, {"Targets", "string", 0}, {"MinPods", "string", 0}, {"MaxPods", "string", 0},
			{"Replicas", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			h := typed[autoscalingv2.HorizontalPodAutoscaler](o)
			minPods := "<unset>"
			if h.Spec.MinReplicas != nil {
				minPods = fmt.Sprint(*h.Spec.MinReplicas)
			}
			return []any{h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name, hpaMetrics(h.Spec.Metrics, h.Status.CurrentMetrics),
				minPods, int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), ix.ageOf(h.CreationTimestamp)}
		},
	},
	"rolebindings": {
		columns: []column{{"Role", "string", 0}, {"Age", "string", 0}, {"Users", "string", 1}, {"Groups", "string", 1},
			{"ServiceAccounts", "string", 1}},
		cells: func(ix *index, o *object) []any {
			b := typed[rbacv1.RoleBinding](o)
			users, groups, sas := subjects(b.Subjects)
			return []any{b.RoleRef.Kind + "/" + b.RoleRef.Name, ix.ageOf(b.CreationTimestamp), users, groups, sas}
		},
	},
	"clusterrolebindings": {
		columns: []column{{"Role", "string", 0}, {"Age", "string", 0}, {"Users", "string", 1}, {"Groups", "string", 1},
			{"ServiceAccounts", "string", 1}},
		cells: func(ix *index, o *object) []any {
			b := typed[rbacv1.ClusterRoleBinding](o)
			users, groups, sas := subjects(b.Subjects)
			return []any{b.RoleRef.Kind + "/" + b.RoleRef.Name, ix.ageOf(b.CreationTimestamp), users, groups, sas}
		},
	},
	"endpointslices": {
		columns: []column{{"AddressType", "string", 0}, {"Ports", "string", 0}, {"Endpoints", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			s := typed[discoveryv1.EndpointSlice](o)
			var ports, addrs []string
			for _, p := range s.Ports {
				switch {
				case p.Port != nil:
					ports = append(ports, strconv.Itoa(int(*p.Port)))
				case p.Name != nil:
					ports = append(ports, *p.Name)
				default:
					ports = append(ports, "*")
				}
			}
			for _, e := range s.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
			return []any{string(s.AddressType), listWithMore(ports), listWithMore(addrs), ix.ageOf(s.CreationTimestamp)}
		},
	},
	"endpoints": {
		columns: []column{{"Endpoints", "string", 0}, {"Age", "string", 0}},
		cells: func(ix *index, o *object) []any {
			e := typed[corev1.Endpoints](o) //nolint:staticcheck // v1 Endpoints are served for the clients that still read them
			return []any{formatEndpoints(e), ix.ageOf(e.CreationTimestamp)}
		},
	},
}

func jobStatus(j *batchv1.Job) string {
	has := func(t batchv1.JobConditionType) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}
	switch {
	case has(batchv1.JobComplete):
		return "Complete"
	case has(batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case has(batchv1.JobSuspended):
		return "Suspended"
	case has(batchv1.JobFailureTarget):
		return "FailureTarget"
	case has(batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	// The API server lists each mode once, in this order.
	var out []string
	for _, want := range []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod} {
		for _, m := range modes {
			if m == want {
				out = append(out, accessMode(m))
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func unset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

// valueSizesAnnotation is where a collected ConfigMap or Secret keeps the sizes of the
// values the collection dropped, by key.
const valueSizesAnnotation = "podflow.dev/value-sizes"

func quantity(q *apiresource.Quantity) string {
	if q == nil {
		return "<nil>"
	}
	return q.String()
}

func isTrue(b *bool) bool { return b != nil && *b }

// configMapKeys counts a ConfigMap's keys. A collected ConfigMap has its values dropped
// and their sizes recorded in an annotation; its keys are counted from there.
func configMapKeys(c *corev1.ConfigMap) int {
	n := len(c.Data) + len(c.BinaryData)
	if n == 0 {
		if sizes, ok := c.Annotations[valueSizesAnnotation]; ok {
			var m map[string]any
			if json.Unmarshal([]byte(sizes), &m) == nil {
				n = len(m)
			}
		}
	}
	return n
}

// listWithMore joins up to three items, then says how many more there are.
func listWithMore(items []string) string {
	if len(items) > 3 {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:3], ","), len(items)-3)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

//nolint:staticcheck // v1 Endpoints are served for the clients that still read them
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < 3 {
					list = append(list, a.IP)
				}
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < 3 {
					list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
				}
			}
		}
	}
	if count > 3 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), count-3)
	}
	return strings.Join(list, ",")
}

func subjects(subs []rbacv1.Subject) (string, string, string) {
	var users, groups, sas []string
	for _, s := range subs {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			sas = append(sas, ns+"/"+s.Name)
		}
	}
	return strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")
}

// hpaMetrics is the TARGETS column: each metric's current value over its target, two
// at most.
func hpaMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, hpaMetric(spec, st))
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

func hpaMetric(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch {
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		cur := unknown
		if spec.External.Target.AverageValue != nil {
			if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
				cur = st.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", cur, spec.External.Target.AverageValue.String())
		}
		if st != nil && st.External != nil && st.External.Current.Value != nil {
			cur = st.External.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", cur, quantity(spec.External.Target.Value))
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		cur := unknown
		if st != nil && st.Pods != nil && st.Pods.Current.AverageValue != nil {
			cur = st.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", cur, quantity(spec.Pods.Target.AverageValue))
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		cur := unknown
		if spec.Object.Target.AverageValue != nil {
			if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
				cur = st.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", cur, spec.Object.Target.AverageValue.String())
		}
		if st != nil && st.Object != nil && st.Object.Current.Value != nil {
			cur = st.Object.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", cur, quantity(spec.Object.Target.Value))
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		return resourceMetric(string(spec.Resource.Name), spec.Resource.Target, resourceCurrent(st, false))
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		return resourceMetric(string(spec.ContainerResource.Name), spec.ContainerResource.Target, resourceCurrent(st, true))
	}
	return "<unknown type>"
}

func resourceCurrent(st *autoscalingv2.MetricStatus, container bool) *autoscalingv2.MetricValueStatus {
	switch {
	case st == nil:
	case container && st.ContainerResource != nil:
		return &st.ContainerResource.Current
	case !container && st.Resource != nil:
		return &st.Resource.Current
	}
	return nil
}

func resourceMetric(name string, target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if cur != nil && cur.AverageValue != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, current, target.AverageValue.String())
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	t := "<auto>"
	if target.AverageUtilization != nil {
		t = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, current, t)
}
