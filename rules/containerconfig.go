package rules

import (
	"strings"

	"podflow.dev/podflow/analyze"
)

// What the config-stage rules share: the kubelet's CreateContainerConfigError refusal of a
// container, from its status or its latest Error event.

// configError is the kubelet's refusal to create a container waiting in
// CreateContainerConfigError: the status message, or the latest Error event's when the
// status has none, and that event. It reports false for a container not in that state.
func configError(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (string, *analyze.Event, bool) {
	st := c.Status
	if st == nil || st.State.Waiting == nil || st.State.Waiting.Reason != "CreateContainerConfigError" {
		return "", nil, false
	}
	msg := st.State.Waiting.Message
	event := latestContainerError(runOf(v, p, c.Name).Events, c.Name)
	if msg == "" && event != nil {
		msg = event.Message
	}
	return msg, event, true
}

// latestContainerError is the most recent kubelet "Failed" event of a container whose
// message starts with "Error: " (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// startContainer), or nil.
func latestContainerError(events []*analyze.Event, container string) *analyze.Event {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Failed" && e.Container() == container && strings.HasPrefix(e.Message, "Error: ") {
			return e
		}
	}
	return nil
}
