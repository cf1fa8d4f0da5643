package importer

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// segYAMLFrag is a piece of a pod's -o yaml pasted alone: its status, its container
// statuses or one container's state.
const segYAMLFrag = "kubectl get pod -o yaml fragment"

// reYAMLFragStart opens such a piece at the margin.
var reYAMLFragStart = regexp.MustCompile(`^(?:status|containerStatuses|initContainerStatuses|state|lastState):\s*$|^- (?:containerID|image|imageID|lastState|name|ready|restartCount|state):`)

// reYAMLLine continues it: indented lines, list items and keys at the margin.
var reYAMLLine = regexp.MustCompile(`^(?:\s+\S|- |[a-zA-Z][a-zA-Z0-9]*:(?:\s|$))`)

func isYAMLFragStart(s string) bool { return reYAMLFragStart.MatchString(s) }

// yamlFragment reads the piece into a pod: status, container statuses or one state.
func yamlFragment(lines []textLine) (corev1.Pod, bool) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(detab(l.s))
		b.WriteByte('\n')
	}
	var pod corev1.Pod
	text := b.String()
	if strings.HasPrefix(strings.TrimSpace(text), "- ") {
		var list []corev1.ContainerStatus
		if yaml.Unmarshal([]byte(text), &list) != nil || len(list) == 0 {
			return pod, false
		}
		pod.Status.ContainerStatuses = list
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
	if yaml.Unmarshal([]byte(text), &doc) != nil {
		return pod, false
	}
	switch {
	case doc.Status != nil:
		pod.Status = *doc.Status
	case len(doc.ContainerStatuses) > 0 || len(doc.InitContainerStatuses) > 0:
		pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses = doc.ContainerStatuses, doc.InitContainerStatuses
	case doc.State != nil || doc.LastState != nil:
		cs := corev1.ContainerStatus{Name: doc.Name, RestartCount: doc.RestartCount}
		if cs.Name == "" {
			cs.Name = "unknown"
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
	return pod, true
}

// yamlFrag reads a -o yaml fragment; its pod is decided at the end of the file.
func (li *looseImport) yamlFrag(ctx *fileCtx, b segmentBlock, cmd string) bool {
	pod, ok := yamlFragment(b.lines)
	if !ok {
		return false
	}
	ns := commandNamespace(cmd)
	ctx.pending = append(ctx.pending, pendingFrag{d: &describedPod{pod: pod, line: b.lines[0].n}, pod: commandPod(cmd), ns: ns, nsKnown: ns != "", fragment: true})
	return true
}
