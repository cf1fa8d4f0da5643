package analyze

import "testing"

// A configuration file's setting is no trouble for the words of its key; its value
// still tells.
func TestConfigSetting(t *testing.T) {
	for s, want := range map[string]bool{
		"oom_score = -999":                         true,
		`disabled_plugins = ["restart"]`:           true,
		"  failSwapOn: false":                      true,
		"    max_container_log_line_size = 262144": true,
		"error: failed to create containerd task":  false,
		"Reason: OOMKilled":                        false,
		"msg = connection refused":                 false,
		"the kubelet failed to start":              false,
		"spec: validationFailureAction: Enforce":   true,
		"status: message: back-off failed to pull": false,
		"msg: error: image not found":              false,
		"                 node.kubernetes.io/unreachable:NoExecute op=Exists for 300s": true,
		"Tolerations:     node.kubernetes.io/not-ready:NoExecute op=Exists for 300s":   true,
		"Taints:             node.kubernetes.io/unreachable:NoExecute":                 false,
	} {
		if got := configSetting(s); got != want {
			t.Errorf("configSetting(%q) = %v, want %v", s, got, want)
		}
	}
}
