package analyze

import "testing"

func TestKubeletAnswersAreNotTheAppsLog(t *testing.T) {
	for text, usable := range map[string]bool{
		"unable to retrieve container logs for containerd://3f2a":                                                              false,
		`Error from server (BadRequest): container "app" in pod "web-1" is waiting to start: ContainerCreating`:                false,
		`failed to try resolving symlinks in path "/var/log/pods/shop_web-1_0c6d/app/3.log": lstat: no such file or directory`: false,
		`previous terminated container "app" in pod "web-1" not found`:                                                         false,
		"2026-11-29T10:00:00Z unable to retrieve container logs for containerd://3f2a":                                         false,
		"": false,
		"fatal: relation \"orders\" does not exist": true,
		"Error: connect ECONNREFUSED 10.0.0.5:5432": true,
	} {
		if got := usableLogText(text); got != usable {
			t.Errorf("usableLogText(%q) = %t, want %t", text, got, usable)
		}
	}
}
