package rules

import (
	"strings"
	"testing"
)

// The kubelet's refusal of a non-numeric user names the user; the Dockerfile pasted with
// it says where the image sets it, and the cause names that instruction.
func TestANonNumericUserNamesTheDockerfilesUser(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"error.txt":  "Error: container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root\n",
		"Dockerfile": "FROM python:3.12-slim\nRUN useradd app\nUSER app\nCMD [\"python\", \"main.py\"]\n",
	})
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	if c := rs[0].Cause; !strings.Contains(c, "USER app") {
		t.Errorf("root cause lacks the Dockerfile's USER app: %s", c)
	}
}

// DiskPressure names no filesystem; the df pasted with it shows which one is near full,
// and the eviction's cause names the fullest at 80 % or more.
func TestADiskPressureEvictionNamesTheFullestFilesystem(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "pods are getting evicted with an event `The node had condition: [DiskPressure].`\n\n" +
			"Filesystem      Size  Used Avail Use% Mounted on\n" +
			"tmpfs           3.2G  2.7G  505M  85% /run\n" +
			"/dev/nvme0n1p2  938G  310G  581G  35% /\n" +
			"tmpfs            16G     0   16G   0% /dev/shm\n",
	})
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	found := false
	for _, r := range rs {
		if r.Rule == "node-pod-evicted" {
			found = true
			if !strings.Contains(r.Cause, "tmpfs on /run at 85% use") {
				t.Errorf("eviction cause lacks the fullest filesystem: %s", r.Cause)
			}
		}
	}
	if !found {
		t.Errorf("no node-pod-evicted root among %d", len(rs))
	}
}

// An OOMKilled container of a describe excerpt cut before its Limits names the memory
// limit the rest of the ticket shows (its chart's values), not "not known".
func TestAnOOMKillWithoutItsSpecNamesTheLimitTheTicketShows(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"describe.txt": "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n" +
			"      Started:      Mon, 19 Sep 2022 14:51:49 +0200\n      Finished:     Mon, 19 Sep 2022 14:52:03 +0200\n",
		"values.txt": "Our values for the operator:\n\nresources:\n  limits:\n    cpu: 200m\n    memory: 200Mi\n",
	})
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	if c := rs[0].Cause; rs[0].Rule != "runtime-oom-killed" || !strings.Contains(c, "200Mi") {
		t.Errorf("root %s does not name the limit 200Mi: %s", rs[0].Rule, c)
	}
}

// Elasticsearch's bootstrap check names the node's limit; the sysctl refusal printed
// before it says why the init container meant to raise it did not, and a quote cut after
// "at least" still reads. Without the refusal the cause does not claim one.
func TestAKernelLimitNamesTheRefusedSysctl(t *testing.T) {
	paste := "After the upgrade the pod fails with\n```\n" +
		"bootstrap check failure [1] of [1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least...\n\n" +
		"sysctl: permission denied on key \"vm.max_map_count\", ignoring\n```\n" +
		// the manifest's initContainers key says the pod has one, not that it fails
		"example\n```\n          initContainers:\n            - command:\n                - sh\n                - -c\n                - sysctl -w vm.max_map_count=262144\n              name: sysctl\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "runtime-crash-exit", "vm.max_map_count at 65530", "sysctl refused to set vm.max_map_count")

	rs = catalogRoots(t, map[string]string{"ticket.txt": strings.Replace(paste, "sysctl: permission denied on key \"vm.max_map_count\", ignoring\n", "", 1)})
	wantRootWithout(t, rs, "sysctl refused", "cause %q claims a refusal the evidence lacks", "vm.max_map_count at 65530")
}
