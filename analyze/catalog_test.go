package analyze

import (
	"strings"
	"testing"
)

// TestReadChain: the outermost known layer gives the stage, the innermost the cause,
// equally specific entries go to the component the evidence comes from or the one still
// printing it, and text no component prints is not read.
func TestReadChain(t *testing.T) {
	cases := []struct {
		name, text, hint string
		stage            Stage
		outer, inner     string // components
		innerWords       string
	}{
		{"sandbox chain down to calico",
			`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "8a7f": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
			"kubelet", StageSandbox, "kubelet", "calico", "connection is unauthorized"},
		{"kubelet admission refusal, no hint", "Predicate NodeAffinity failed", "", StageNode, "kubelet", "kubelet", "Predicate NodeAffinity failed"},
		{"flannel lease", `Error registering network: failed to acquire lease: node "w1" pod cidr not assigned`, "", StageSandbox, "flannel", "flannel", "pod cidr not assigned"},
		{"not printed by any component", "frobnicator quux exploded while zorbing", "", "", "", "", ""},
		{"kubectl's words around an admission refusal", `Error from server (Forbidden): error when creating "pod.yaml": pods "web" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`,
			"", StageAdmission, "kube-apiserver", "kube-apiserver", "exceeded quota"},
		{"curated: the kernel's OOM killer", `kernel: Memory cgroup out of memory: Killed process 4242 (java) total-vm:4045820kB, anon-rss:1046400kB`,
			"", StageRuntime, "linux", "linux", "Killed process 4242"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := readChain(tc.text, tc.hint)
			if tc.stage == "" {
				if r.known() {
					t.Fatalf("read as %s by %s", r.stage(), r.outer.Entry.ID)
				}
				return
			}
			if !r.known() {
				t.Fatal("not read")
			}
			if r.stage() != tc.stage || r.outer.Entry.Component != tc.outer || r.inner.Entry.Component != tc.inner {
				t.Errorf("stage %s, outer %s (%s), inner %s (%s); want %s, %s, %s", r.stage(), r.outer.Entry.Component, r.outer.Entry.Template,
					r.inner.Entry.Component, r.inner.Entry.Template, tc.stage, tc.outer, tc.inner)
			}
			if !strings.Contains(r.layerText(r.inner), tc.innerWords) || !strings.Contains(r.cause(), tc.innerWords) {
				t.Errorf("cause %q does not carry %q", r.cause(), tc.innerWords)
			}
			for _, ref := range r.refs() {
				if ref.PrintedBy == "" || ref.Releases == "" {
					t.Errorf("citation without where or when: %+v", ref)
				}
			}
		})
	}
}

func TestSemverLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"v1.14.10", "v1.37.2", true}, {"v1.37.2", "v1.14.10", false}, {"v1.9.0", "v1.10.0", true}, {"v2.0.0-rc.1", "v2.0.0", false}} {
		if got := semverLess(c.a, c.b); got != c.want {
			t.Errorf("semverLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
