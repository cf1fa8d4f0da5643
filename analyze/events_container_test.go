package analyze

import "testing"

// A pasted describe or event row has no field path: the container an event is about
// comes from the kubelet's own wording, or not at all.
func TestEventContainerFromKubeletMessage(t *testing.T) {
	cases := []struct {
		fieldPath, reason, message, want string
	}{
		{"spec.containers{app}", "Killing", "Container web failed liveness probe, will be restarted", "app"},
		{"", "Killing", "Container web failed liveness probe, will be restarted", "web"},
		{"", "Killing", "Container web failed startup probe, will be restarted", "web"},
		{"", "Killing", "Init container setup failed liveness probe", "setup"},
		{"", "Killing", "Container web definition changed, will be restarted", "web"},
		{"", "Killing", "Stopping container web", "web"},
		{"", "Created", "Created container: web", "web"},
		{"", "Created", "Created container web", "web"},
		{"", "Started", "Started container sidecar-proxy", "sidecar-proxy"},
		{"", "BackOff", "Back-off restarting failed container web in pod web-0_shop(1234)", "web"},
		{"", "BackOff", "Back-off restarting failed container", ""},
		{"", "BackOff", "Back-off pulling image \"nginx:1.25\"", ""},
		{"", "Failed", "Error: ImagePullBackOff", ""},
		{"", "Unhealthy", "Liveness probe failed: Get \"http://10.1.2.3:8080/healthz\": connection refused", ""},
		// Another component's event with the same reason names no container.
		{"", "Killing", "Stopping container Web", ""},
		{"", "Scheduled", "Started container web", ""},
	}
	for _, c := range cases {
		e := &Event{FieldPath: c.fieldPath, Reason: c.reason, Message: c.message}
		if got := e.Container(); got != c.want {
			t.Errorf("%s %q (field path %q): container %q, want %q", c.reason, c.message, c.fieldPath, got, c.want)
		}
	}
}
