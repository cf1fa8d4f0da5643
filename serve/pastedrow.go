package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// podFromRow gives a pod imported from a `kubectl get pods` row the containers the row
// counts and statuses that kubectl's printer reads back as the row's READY, STATUS and
// RESTARTS, so kubectl get, describe and clients that read container statuses see what
// was pasted. Any other item is returned as it is.
//
// The row names no container: they are the spec's when it has as many (taken from the
// owner's template), else "unknown" ("unknown-2", ... when there are several). The ready ones run; the others carry the STATUS word when it is a
// container's (a waiting or terminated reason); the restarts go to the first one. A pod
// the row shows before its containers were created (Pending, Init:…, Evicted, ...) has
// statuses only for its ready containers, as the API server would show it.
func podFromRow(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(bundle.KubectlRowAnnotation)) {
		return raw
	}
	var p corev1.Pod
	if json.Unmarshal(raw, &p) != nil || len(p.Status.ContainerStatuses) > 0 || len(p.Status.InitContainerStatuses) > 0 {
		return raw
	}
	var row bundle.KubectlRow
	if json.Unmarshal([]byte(p.Annotations[bundle.KubectlRowAnnotation]), &row) != nil {
		return raw
	}
	if !rowContainers(&p, row) {
		return raw
	}
	out, err := json.Marshal(&p)
	if err != nil {
		return raw
	}
	return out
}

var (
	reRowReady = regexp.MustCompile(`^(\d{1,2})/(\d{1,2})$`)
	// reExitWord is kubectl's STATUS for a container terminated without a reason.
	reExitWord = regexp.MustCompile(`^(ExitCode|Signal):(-?\d{1,3})$`)
)

func rowContainers(p *corev1.Pod, row bundle.KubectlRow) bool {
	m := reRowReady.FindStringSubmatch(row.Ready)
	if m == nil {
		return false
	}
	ready, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	if total == 0 || ready > total {
		return false
	}
	restarts := 0
	if f := strings.Fields(row.Restarts); len(f) > 0 {
		restarts, _ = strconv.Atoi(f[0])
	}
	named := len(p.Spec.Containers) > 0
	if named && len(p.Spec.Containers) != total {
		return false
	}
	state, isContainers := rowContainerState(row.Status)
	for i := 0; i < total; i++ {
		name := "unknown"
		if i > 0 {
			name = fmt.Sprintf("unknown-%d", i+1)
		}
		if named {
			name = p.Spec.Containers[i].Name
		} else {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name})
		}
		st := corev1.ContainerStatus{Name: name}
		switch {
		case i >= total-ready:
			// kubectl counts a container ready when it is ready and running.
			started := true
			st.Ready, st.Started = true, &started
			st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		case isContainers:
			st.State = state
		default:
			continue
		}
		if len(p.Status.ContainerStatuses) == 0 {
			st.RestartCount = int32(restarts)
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
	}
	if restarts > 0 && len(p.Status.ContainerStatuses) == 0 {
		// Restarts with no status to carry them (a pod-level STATUS such as Evicted):
		// the first container holds them, with no state the row does not show.
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: p.Spec.Containers[0].Name, RestartCount: int32(restarts)})
	}
	return true
}

// rowContainerState is the state of a container kubectl's STATUS word is about, and
// whether the word is a container's at all (not a phase or the pod's own reason).
func rowContainerState(status string) (corev1.ContainerState, bool) {
	switch status {
	case "", "<none>", "Pending", "SchedulingGated", "Unknown", "Failed", "Succeeded", "Terminating", "NodeLost",
		"Evicted", "NodeAffinity", "OutOfpods", "OutOfcpu", "OutOfmemory", "OutOfephemeral-storage", "NodeShutdown", "Terminated":
		return corev1.ContainerState{}, false
	case "Running":
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, true
	}
	if strings.HasPrefix(status, "Init:") {
		return corev1.ContainerState{}, false
	}
	if m := reExitWord.FindStringSubmatch(status); m != nil {
		code, _ := strconv.Atoi(m[2])
		t := &corev1.ContainerStateTerminated{ExitCode: int32(code)}
		if m[1] == "Signal" {
			t.Signal, t.ExitCode = int32(code), 128+int32(code)
		}
		return corev1.ContainerState{Terminated: t}, true
	}
	switch status {
	case "Completed", "Error", "OOMKilled", "ContainerCannotRun", "DeadlineExceeded", "StartError":
		// A terminated reason; the exit code is not in the row (0 for Completed).
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: status}}, true
	}
	// A waiting reason: CrashLoopBackOff, ImagePullBackOff, ContainerCreating, ...
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: status}}, true
}
