package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"podflow.dev/podflow/analyze"
)

// SchedulingInsufficientResources finds pending pods that no node has room for.
var SchedulingInsufficientResources = &analyze.Rule{
	ID:       "scheduling-insufficient-resources",
	Stage:    analyze.StageScheduling,
	Title:    "no node has enough free resources for the pod's requests",
	Doc:      schedulingInsufficientResourcesDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingInsufficientResources,
}

const schedulingInsufficientResourcesDoc = `The scheduler found no node with enough unreserved capacity for the pod. A node
fits when its allocatable amount of each resource, minus the requests of the pods
already bound to it, covers the pod's requests; the scheduler's message counts the
nodes that failed each check: "0/3 nodes are available: 3 Insufficient cpu." The
resources are cpu, memory, ephemeral-storage (local disk for emptyDir, logs and the
container's writable layer: "Insufficient ephemeral-storage") and extended resources
such as nvidia.com/gpu. A node also holds at most allocatable.pods pods (the kubelet's
maxPods, 110 by default, often lower on cloud nodes where each pod takes an address
from the node's network interfaces): when that many are bound the scheduler says
"Too many pods", whatever the requests. podflow shows, per node, allocatable against
the requests of the pods bound to it (or the count of bound pods).

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
    kubectl describe node NODE        # "Allocated resources" shows requests against allocatable
    kubectl get events -n NAMESPACE --field-selector reason=FailedScheduling

## Fix

Lower the pod's requests to what it needs, free capacity (scale down or move other
workloads, remove finished pods that still hold requests), or add nodes. Requests, not
actual use, are what the scheduler counts. For ephemeral-storage, lower the request or
give the nodes larger disks. For "Too many pods", delete finished pods (completed Jobs
keep theirs), spread the pods over more nodes, or raise the kubelet's maxPods where the
node's network allows it.
`

// insufficientResource maps a fit reason to the resource it lacks: "Insufficient cpu" →
// cpu, "Too many pods" → pods.
func insufficientResource(reason string) (corev1.ResourceName, bool) {
	_, r, _ := strings.Cut(reason, " ")
	if r == "Too many pods" {
		return corev1.ResourcePods, true
	}
	if name, ok := strings.CutPrefix(r, "Insufficient "); ok {
		return corev1.ResourceName(name), true
	}
	return "", false
}

func schedulingInsufficientResources(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	var nodeUse map[string]corev1.ResourceList
	// rooms holds nodeRoom's answer per request (roomKey), and grouped the groups that
	// already cite theirs: a group's findings become one whose evidence is cited once
	// (analyze.Finding.GroupKey), and a request no node has room for is refused by
	// every node of a big cluster, so each pod citing them all again held hundreds of
	// the same lines until the findings were merged (at 80k pods, about 40 MB).
	rooms := map[string]nodeRoomAnswer{}
	grouped := map[string]bool{}
	for _, u := range v.UnscheduledPods() {
		p, pod := u.Subject.Pod, u.Subject.Pod.Obj
		total, reasons := u.Nodes, u.Reasons
		var lacking []corev1.ResourceName
		var lackReasons []string
		for _, r := range reasons {
			if name, ok := insufficientResource(r); ok {
				lacking = append(lacking, name)
				lackReasons = append(lackReasons, r)
			}
		}
		if len(lacking) == 0 {
			continue
		}
		if nodeUse == nil {
			nodeUse = boundRequests(v)
		}
		requests := analyze.PodRequests(pod)
		specKnown := len(pod.Spec.Containers) > 0
		if !specKnown {
			// A pod known from a get row and its events: what it asks for is the
			// requests block the ticket pastes, if any; never a zero it does not show.
			requests = v.PastedRequests()
		}
		var asked []string
		for _, name := range lacking {
			if name == corev1.ResourcePods {
				continue
			}
			q := analyze.Quantity(requests, name)
			if !specKnown && q.IsZero() {
				continue
			}
			asked = append(asked, fmt.Sprintf("%s %s", name, q.String()))
		}
		evidence := u.SchedulerEvidence()
		evidence = append(evidence, requestEvidence(p, lacking)...)
		key := roomKey(requests, lacking)
		room, ok := rooms[key]
		if !ok {
			room.text, room.evidence = nodeRoom(v, nodeUse, requests, lacking)
			rooms[key] = room
		}
		nodeText := room.text
		subjects, group := v.PodAndWorkload(p)
		groupKey := group + "\x00" + strings.Join(asked, ",") + "\x00" + strings.Join(lackReasons, ",")
		// The same group asks the same of the same nodes: its first finding cites them.
		if !grouped[groupKey] {
			evidence = append(evidence, room.evidence...)
			grouped[groupKey] = true
		}
		request := "the pod"
		if len(asked) > 0 {
			request = "its requests (" + strings.Join(asked, ", ") + ")"
		}
		cause := fmt.Sprintf("no node has room for %s: 0/%s nodes are available: %s", request,
			total, strings.Join(lackReasons, ", "))
		if nodeText != "" {
			cause += "; " + nodeText
		}
		out = append(out, analyze.Finding{
			Subjects:    subjects,
			Cause:       cause,
			Evidence:    evidence,
			Remediation: insufficientRemediation(group, lacking),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}'", pod.Namespace, pod.Name),
				"kubectl describe nodes | grep -A 8 'Allocated resources'",
			},
			GroupKey: groupKey,
		})
	}
	return out
}

func requestEvidence(p *analyze.Pod, lacking []corev1.ResourceName) []analyze.Evidence {
	var out []analyze.Evidence
	for _, c := range analyze.Containers(p) {
		var parts []string
		for _, name := range lacking {
			if q, ok := c.Spec.Resources.Requests[name]; ok {
				parts = append(parts, fmt.Sprintf("%s: %s", name, q.String()))
			}
		}
		if len(parts) > 0 {
			out = append(out, c.SpecLoc().At("resources", "requests").Evidence(
				fmt.Sprintf("container %s requests %s", c.Name, strings.Join(parts, ", ")), p.Obj.CreationTimestamp.Time))
		}
	}
	return out
}

// boundRequests sums, per node, the requests of the pods bound to it that still hold
// them (pods that finished release their requests). One pass over all pods, each
// pod's requests read into one reused list.
func boundRequests(v *analyze.View) map[string]corev1.ResourceList {
	use := map[string]corev1.ResourceList{}
	requests := corev1.ResourceList{}
	one := resource.MustParse("1")
	for _, p := range v.Pods() {
		pod := p.Obj
		if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		list := use[pod.Spec.NodeName]
		if list == nil {
			list = corev1.ResourceList{}
			use[pod.Spec.NodeName] = list
		}
		analyze.PodRequestsInto(requests, pod)
		for name, q := range requests {
			cur := list[name]
			cur.Add(q)
			list[name] = cur
		}
		pods := list[corev1.ResourcePods]
		pods.Add(one)
		list[corev1.ResourcePods] = pods
	}
	return use
}

// nodeRoomAnswer is what nodeRoom says of one request.
type nodeRoomAnswer struct {
	text     string
	evidence []analyze.Evidence
}

// roomKey is what nodeRoom reads of a pod's requests: the amount of each lacking
// resource, in order.
func roomKey(requests corev1.ResourceList, lacking []corev1.ResourceName) string {
	var b strings.Builder
	for _, name := range lacking {
		q := analyze.Quantity(requests, name)
		b.WriteString(string(name) + "\x00" + q.String() + "\x00")
	}
	return b.String()
}

// nodeRoom describes, for up to three nodes, allocatable against requested for each
// lacking resource, and cites each node's allocatable.
func nodeRoom(v *analyze.View, use map[string]corev1.ResourceList, requests corev1.ResourceList, lacking []corev1.ResourceName) (string, []analyze.Evidence) {
	nodes := v.Nodes()
	var texts []string
	var evidence []analyze.Evidence
	sorted := append([]*analyze.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Obj.Name < sorted[j].Obj.Name })
	for _, n := range sorted {
		var parts []string
		for _, name := range lacking {
			alloc := analyze.Quantity(n.Obj.Status.Allocatable, name)
			used := analyze.Quantity(use[n.Obj.Name], name)
			free := alloc.DeepCopy()
			free.Sub(used)
			need := analyze.Quantity(requests, name)
			if name == corev1.ResourcePods {
				need = resource.MustParse("1")
			}
			if free.Cmp(need) >= 0 {
				continue
			}
			if name == corev1.ResourcePods {
				parts = append(parts, fmt.Sprintf("pods allocatable %s, %s bound, free %s", alloc.String(), used.String(), free.String()))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s allocatable %s, requested %s, free %s", name, readable(name, alloc), readable(name, used), readable(name, free)))
		}
		if len(parts) == 0 {
			continue
		}
		line := "node " + n.Obj.Name + ": " + strings.Join(parts, "; ")
		evidence = append(evidence, n.Loc.At("status", "allocatable").Evidence(line, v.CollectedAt()))
		if len(texts) < 3 {
			texts = append(texts, line)
		}
	}
	if extra := len(evidence) - len(texts); extra > 0 {
		texts = append(texts, fmt.Sprintf("and %d more node(s)", extra))
	}
	return strings.Join(texts, "; "), evidence
}

// insufficientRemediation says what frees room for the lacking resources: the pod count
// is not a request to lower.
func insufficientRemediation(group string, lacking []corev1.ResourceName) string {
	if len(lacking) == 1 && lacking[0] == corev1.ResourcePods {
		return fmt.Sprintf("The nodes hold as many pods as their allocatable pods allows: delete finished pods, spread %s over more nodes, "+
			"or raise the kubelet's maxPods where the node's network allows it.", group)
	}
	return fmt.Sprintf("Lower the requests of %s to what it needs, free capacity on a node, or add nodes; "+
		"the scheduler counts requests, not actual use.", group)
}

// readable renders byte quantities the kubelet reports as plain numbers
// ("19316009748") in binary units ("17.99Gi"), keeping the exact value when it is
// already written with a suffix. Other resources keep their canonical form.
func readable(name corev1.ResourceName, q resource.Quantity) string {
	s := q.String()
	if name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
		return s
	}
	if strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0 && q.Value() >= 1<<20 {
		b := float64(q.Value())
		for _, u := range []struct {
			suffix string
			size   float64
		}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}} {
			if b >= u.size {
				return strconv.FormatFloat(b/u.size, 'f', 2, 64) + u.suffix
			}
		}
	}
	return s
}
