package importer

import (
	"encoding/json"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted/yamlbudget"
)

// segYAMLFrag is a piece of a pod's -o yaml pasted alone: its status, its container
// statuses or one container's state.
const segYAMLFrag = "kubectl get pod -o yaml fragment"

// unnamedContainer names a container whose name a fragment does not show.
const unnamedContainer = "unknown"

// reYAMLFragStart opens such a piece at the margin.
var reYAMLFragStart = regexp.MustCompile(`^ *(?:status|containerStatuses|initContainerStatuses|state|lastState):\s*$|^ *- (?:containerID|image|imageID|lastState|name|ready|restartCount|state):`)

// reYAMLStatusKeyStart opens a pod status cut to its own keys (statusOwnKeys): only at
// the start of a paragraph, since the same keys sit inside conditions and events.
var reYAMLStatusKeyStart = regexp.MustCompile(`^ *(?:phase|reason): +[A-Z][A-Za-z]+\s*$`)

// reYAMLLine continues it: indented lines, list items and keys at the margin.
var reYAMLLine = regexp.MustCompile(`^(?:\s+\S|- |[a-zA-Z][a-zA-Z0-9]*:(?:\s|$))`)

func isYAMLFragStart(lines []textLine, i int) bool {
	s := lines[i].s
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return false
	}
	switch t[0] {
	case 's', 'c', 'i', 'l', '-': // the first letters of the keys it names, or a list dash
		return reYAMLFragStart.MatchString(s)
	case 'p', 'r':
		return (i == 0 || strings.TrimSpace(lines[i-1].s) == "") && reYAMLStatusKeyStart.MatchString(s)
	}
	return false
}

// yamlFragment reads the piece into a pod: status, container statuses or one state.
func yamlFragment(lines []textLine) (corev1.Pod, bool) {
	if k := statusTail(lines); k > 0 {
		// A container's state cut from a pod's status, then the status's own keys
		// below it at their lesser indent (reason: NodeLost, message: …): each part is
		// read at its own level.
		pod, ok := yamlFragment(lines[:k])
		var st corev1.PodStatus
		var b strings.Builder
		for _, l := range lines[k:] {
			b.WriteString(detab(l.s))
			b.WriteByte('\n')
		}
		if yamlbudget.Unmarshal([]byte(b.String()), &st) == nil && (st.Reason != "" || st.Message != "" || st.Phase != "") {
			pod.Status.Reason, pod.Status.Message, pod.Status.Phase = st.Reason, st.Message, st.Phase
			pod.Status.HostIP, pod.Status.PodIP, pod.Status.StartTime, pod.Status.QOSClass = st.HostIP, st.PodIP, st.StartTime, st.QOSClass
			if len(st.Conditions) > 0 {
				pod.Status.Conditions = st.Conditions
			}
			return pod, true
		}
		if ok {
			return pod, true
		}
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(detab(l.s))
		b.WriteByte('\n')
	}
	var pod corev1.Pod
	text := b.String()
	if strings.HasPrefix(strings.TrimSpace(text), "- ") {
		var list []corev1.ContainerStatus
		if yamlbudget.Unmarshal([]byte(text), &list) != nil || len(list) == 0 {
			return pod, false
		}
		pod.Status.ContainerStatuses = list
		statusContainers(&pod)
		return pod, true
	}
	var doc struct {
		Status                *corev1.PodStatus        `json:"status"`
		ContainerStatuses     []corev1.ContainerStatus `json:"containerStatuses"`
		InitContainerStatuses []corev1.ContainerStatus `json:"initContainerStatuses"`
		State                 *corev1.ContainerState   `json:"state"`
		LastState             *corev1.ContainerState   `json:"lastState"`
		Name                  string                   `json:"name"`
		RestartCount          int32                    `json:"restartCount"`
		Phase                 corev1.PodPhase          `json:"phase"`
	}
	if yamlbudget.Unmarshal([]byte(text), &doc) != nil {
		return pod, false
	}
	if st, ok := statusOwnKeys(text); ok {
		// A pod's status cut to its own keys (reason: OutOfcpu, message: …), the part
		// of -o yaml that says why the kubelet refused or evicted it.
		pod.Status = st
		return pod, true
	}
	switch {
	case doc.Status != nil:
		pod.Status = *doc.Status
	case len(doc.ContainerStatuses) > 0 || len(doc.InitContainerStatuses) > 0:
		pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses = doc.ContainerStatuses, doc.InitContainerStatuses
	case doc.State != nil || doc.LastState != nil:
		cs := corev1.ContainerStatus{Name: doc.Name, RestartCount: doc.RestartCount}
		if cs.Name == "" {
			cs.Name = unnamedContainer
		}
		if doc.State != nil {
			cs.State = *doc.State
		}
		if doc.LastState != nil {
			cs.LastTerminationState = *doc.LastState
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	default:
		return pod, false
	}
	if pod.Status.Phase == "" {
		pod.Status.Phase = doc.Phase
	}
	statusContainers(&pod)
	return pod, true
}

// podStatusKeys are the keys of a pod's status itself (not of a container's).
var podStatusKeys = map[string]bool{"phase": true, "reason": true, "message": true, "hostIP": true, "podIP": true,
	"podIPs": true, "qosClass": true, "startTime": true, "conditions": true, "nominatedNodeName": true}

// statusOwnKeys reads a piece whose every key at its margin is one of a pod status's
// own, with a reason and a message or phase: an event's or another object's keys around them
// make it not a pod's.
func statusOwnKeys(text string) (corev1.PodStatus, bool) {
	var st corev1.PodStatus
	var keys map[string]json.RawMessage
	if yamlbudget.Unmarshal([]byte(text), &keys) != nil || len(keys) == 0 {
		return st, false
	}
	for k := range keys {
		if !podStatusKeys[k] {
			return st, false
		}
	}
	if yamlbudget.Unmarshal([]byte(text), &st) != nil || st.Reason == "" || st.Message == "" && st.Phase == "" {
		return corev1.PodStatus{}, false
	}
	return st, true
}

// statusTail is where a fragment that starts deeper than it ends goes on with a pod
// status's own keys at its least indent, 0 when it does not.
func statusTail(lines []textLine) int {
	if len(lines) < 2 {
		return 0
	}
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l.s) != "" && (least < 0 || indentOf(detab(l.s)) < least) {
			least = indentOf(detab(l.s))
		}
	}
	if indentOf(detab(lines[0].s)) <= least {
		return 0
	}
	for i, l := range lines {
		t := detab(l.s)
		if strings.TrimSpace(t) == "" || indentOf(t) != least {
			continue
		}
		key, _, _ := strings.Cut(strings.TrimSpace(t), ":")
		if podStatusKeys[key] {
			return i
		}
		return 0
	}
	return 0
}

// statusContainers gives the pod a container for every status the fragment names: a
// rule reads a container's status through the container. Only the name is known; the
// pod stays marked as not showing its spec. A status whose name the fragment does not
// show stays without one, as before: analysis names its container from its messages.
func statusContainers(pod *corev1.Pod) {
	for _, cs := range pod.Status.InitContainerStatuses {
		if cs.Name != "" && cs.Name != unnamedContainer {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: cs.Name})
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != "" && cs.Name != unnamedContainer {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: cs.Name})
		}
	}
}

// yamlFrag reads a -o yaml fragment; its pod is decided at the end of the file.
func (li *looseImport) yamlFrag(ctx *fileCtx, b segmentBlock, cmd string) bool {
	if o, ok := workloadStatus(ctx.name, b.lines, cmd); ok {
		return li.addObject(ctx.name, o)
	}
	pod, ok := yamlFragment(b.lines)
	if !ok {
		return false
	}
	ns := commandNamespace(cmd)
	ctx.pending = append(ctx.pending, pendingFrag{d: &describedPod{pod: pod, line: b.lines[0].n}, pod: commandPod(cmd), ns: ns, nsKnown: ns != "", fragment: true})
	return true
}

// workloadKindFields tell a workload's status from a pod's: fields and condition types
// only that kind's status has, most telling kind first.
// workloadKind is a workload kind and the fields of its status only its status has.
type workloadKind struct {
	kind, apiVersion string
	fields           []string
	conditions       []string
}

var workloadKindFields = []workloadKind{
	{"Job", "batch/v1", []string{"failed", "succeeded", "active", "completionTime", "uncountedTerminatedPods", "terminating"},
		[]string{"Failed", "Complete", "FailureTarget", "SuccessCriteriaMet", "Suspended"}},
	{"DaemonSet", "apps/v1", []string{"currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled", "numberReady", "numberUnavailable"}, nil},
	{"StatefulSet", "apps/v1", []string{"currentRevision", "updateRevision", "currentReplicas"}, nil},
	{"Deployment", "apps/v1", []string{"updatedReplicas", "unavailableReplicas"}, []string{"Progressing"}},
	{"ReplicaSet", "apps/v1", []string{"fullyLabeledReplicas", "replicas", "readyReplicas", "availableReplicas"}, []string{"ReplicaFailure"}},
}

// workloadStatus reads a pasted status block of a Job, DaemonSet, StatefulSet,
// Deployment or ReplicaSet (their conditions carry the controller's refusals and
// failures) into a partial object of that kind, named by the command before it or
// after the file.
func workloadStatus(file string, lines []textLine, cmd string) (rawObject, bool) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(detab(l.s))
		b.WriteByte('\n')
	}
	var doc map[string]any
	if yamlbudget.Unmarshal([]byte(b.String()), &doc) != nil {
		return rawObject{}, false
	}
	st, ok := doc["status"].(map[string]any)
	if !ok {
		return rawObject{}, false
	}
	if _, ok := st["containerStatuses"]; ok {
		return rawObject{}, false
	}
	if _, ok := st["phase"]; ok {
		return rawObject{}, false
	}
	types := map[string]bool{}
	if conds, ok := st["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				if t, ok := m["type"].(string); ok {
					types[t] = true
				}
			}
		}
	}
	for _, k := range workloadKindFields {
		hit := false
		for _, f := range k.fields {
			if _, ok := st[f]; ok {
				hit = true
			}
		}
		for _, c := range k.conditions {
			hit = hit || types[c]
		}
		if !hit {
			continue
		}
		name := reCmdWorkload.FindStringSubmatch(cmd)
		obj := map[string]any{"apiVersion": k.apiVersion, "kind": k.kind, "status": st}
		meta := map[string]any{"annotations": map[string]string{bundle.PartialAnnotation: "name,namespace,spec"}}
		o := rawObject{kind: k.kind, namespace: nsOr(commandNamespace(cmd)), name: placeholderPod(file), line: lines[0].n}
		if name != nil {
			o.name = name[1]
			meta["annotations"] = map[string]string{bundle.PartialAnnotation: "spec"}
		}
		meta["name"], meta["namespace"] = o.name, o.namespace
		obj["metadata"] = meta
		data, err := json.Marshal(obj)
		if err != nil {
			return rawObject{}, false
		}
		o.data = data
		return o, true
	}
	return rawObject{}, false
}

// reCmdWorkload names the object of `kubectl get job NAME -o yaml` and the like.
var reCmdWorkload = regexp.MustCompile(`\bget\s+(?:jobs?(?:\.batch)?|ds|daemonsets?(?:\.apps)?|sts|statefulsets?(?:\.apps)?|deploy|deployments?(?:\.apps)?|rs|replicasets?(?:\.apps)?)(?:\s+|/)([a-z0-9][-a-z0-9.]*)`)
