package analyze

import "strings"

// What the config-stage rules read: the kubelet's CreateContainerConfigError refusal of
// a container, from its status or its latest Error event.

// containerEvents is the container's events from its run.
func (v *View) containerEvents(p *Pod, container string) []*Event {
	r, _ := v.ContainerRun(p, container)
	return r.Events()
}

// ConfigError is the kubelet's refusal to create a container waiting in
// CreateContainerConfigError: the status message, or the latest Error event's when the
// status has none, and that event. It reports false for a container not in that state.
func (v *View) ConfigError(p *Pod, c ContainerInfo) (string, *Event, bool) {
	st := c.Status
	if st == nil || st.State.Waiting == nil || st.State.Waiting.Reason != "CreateContainerConfigError" {
		return "", nil, false
	}
	msg := st.State.Waiting.Message
	event := LatestContainerError(v.containerEvents(p, c.Name), c.Name)
	if msg == "" && event != nil {
		msg = event.Message
	}
	return msg, event, true
}

// isFailedEvent tells the events LatestContainerError reads.
func isFailedEvent(e *Event) bool { return e.Reason == "Failed" }

// LatestContainerError is the most recent kubelet "Failed" event of a container whose
// message starts with "Error: " (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// startContainer), or nil.
func LatestContainerError(events []*Event, container string) *Event {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Reason == "Failed" && e.Container() == container && strings.HasPrefix(e.Message, "Error: ") {
			return e
		}
	}
	return nil
}
