package rules

import (
	"strings"
	"testing"
)

// The kernel's OOM kill (mm/oom_kill.c "Memory cgroup out of memory: Killed process
// %d (%s)") does not print the limit the container was held to; a ticket's pasted
// manifest does. The cause names the one memory limit the evidence shows, and none when
// it shows two.
func TestAKernelOOMKillNamesTheLimitTheManifestShows(t *testing.T) {
	kern := "Mar 22 15:00:03 node-3 kernel: Memory cgroup out of memory: Killed process 4711 (java) total-vm:2007864kB, anon-rss:518828kB\n"
	manifest := "resources:\n  limits:\n    cpu: 500m\n    memory: 768Mi\n  requests:\n    memory: 256Mi\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"kern.log": kern, "deployment.yaml.txt": manifest}), "runtime-oom-killed", "(768Mi)")
	two := manifest + "---\nresources:\n  limits:\n    memory: 1Gi\n"
	for _, f := range catalogRoots(t, map[string]string{"kern.log": kern, "deployment.yaml.txt": two}) {
		if strings.Contains(f.Cause, "(768Mi)") || strings.Contains(f.Cause, "(1Gi)") {
			t.Errorf("two limits, one named: %s", f.Cause)
		}
	}
}
