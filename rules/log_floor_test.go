package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// A pasted container log whose line has no level but is a failure its component prints
// (CoreDNS's forward plugin at start: plugin/forward/setup.go "no nameservers found",
// logged as "plugin/forward: %s") is trouble the catalog reads when nothing else in the
// evidence shows trouble; an application's own lines without a level, however many, are
// not, and beside a finding such a line is no root of its own.
func TestALogLineTheCatalogReadsIsTrouble(t *testing.T) {
	coredns := "plugin/forward: no nameservers found\n"
	rs := catalogRoots(t, map[string]string{"coredns.log": coredns})
	if len(rs) != 1 || rs[0].Stage != analyze.StageService {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want one root at the service stage")
	}
	app := "10.0.0.7 - - [06/Dec/2026:04:00:01 +0000] \"GET /healthz HTTP/1.1\" 200 2 \"-\" \"kube-probe/1.30\"\n" +
		"listening on :8080, forwarding to the backend pool\n"
	if rs := catalogRoots(t, map[string]string{"app.log": app}); len(rs) != 0 {
		t.Errorf("an application's plain lines made %d roots: %s", len(rs), rs[0].Cause)
	}
	events := "Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": events, "coredns.log": coredns}),
		"scheduling-insufficient-resources", "Insufficient cpu")
}
