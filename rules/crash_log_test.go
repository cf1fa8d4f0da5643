package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// A crash-looping pod known from `kubectl get pods` rows, whose previous log a
// distribution's kubectl printed (`microk8s kubectl -n NS logs --previous POD`), is
// diagnosed from that log: a line the catalog reads as a failure its component prints
// is why the container exits, at that component's stage, rather than a bare
// CrashLoopBackOff no rule knows.
func TestACrashLoopIsReadFromItsLog(t *testing.T) {
	paste := "microk8s kubectl -n dns get pods\n" +
		"NAME                       READY   STATUS             RESTARTS   AGE\n" +
		"resolver-5b8d7c9f4-q2x7w   0/1     CrashLoopBackOff   6          9m\n" +
		"\n" +
		"microk8s kubectl -n dns logs --previous resolver-5b8d7c9f4-q2x7w\n" +
		"plugin/forward: no nameservers found\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	if len(rs) != 1 || rs[0].Stage != analyze.StageService || !strings.Contains(rs[0].Cause, "no nameservers found") ||
		!strings.Contains(rs[0].Cause, "dns/resolver-5b8d7c9f4-q2x7w") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want one root at the service stage about pod dns/resolver-5b8d7c9f4-q2x7w, from its log")
	}
}

// The image a pod known only from its events ran is named from the command that
// created it, and an architecture word inside that image's name is not the node's.
func TestImageOfAPodWithoutItsSpec(t *testing.T) {
	files := map[string]string{
		"run.txt": "$ kubectl run web --image=registry.example.com/team/web-amd64:2.1 --port=8080\n",
		"describe.txt": "$ kubectl describe pod web\n" +
			"Events:\n" +
			"  Type     Reason     Age                From               Message\n" +
			"  ----     ------     ----               ----               -------\n" +
			"  Normal   Scheduled  2m                 default-scheduler  Successfully assigned default/web to pi-3\n" +
			"  Normal   Pulled     29s (x4 over 74s)  kubelet, pi-3      Container image \"registry.example.com/team/web-amd64:2.1\" already present on machine\n" +
			"  Warning  BackOff    3s (x8 over 71s)   kubelet, pi-3      Back-off restarting failed container\n",
		"logs.txt": "$ kubectl logs web\nstandard_init_linux.go:211: exec user process caused \"exec format error\"\n",
	}
	rs := catalogRoots(t, files)
	if len(rs) != 1 || rs[0].Stage != analyze.StageStart || !strings.Contains(rs[0].Cause, "registry.example.com/team/web-amd64:2.1") ||
		strings.Contains(rs[0].Cause, "(amd64)") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want one root at the start stage naming the image and no architecture read from its name")
	}
}
