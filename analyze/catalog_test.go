package analyze

import (
	"path"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/catalog"
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
		{"a program's sentence that only begins like a short template", `failed to read data from plugin storage file path="/var/log/pos.json"`, "", "", "", "", ""},
		{"only generic words", `Unexpected error: failed to read data from plugin storage file: '/var/log/pos.json'`, "", "", "", "", ""},
		{"a YAML parser's error is no scheduler's lookup", `yaml: line 107: could not find expected ':'`, "", "", "", "", ""},
		{"a value the template prints is missing", `Could not find rspec-3.10.0, pry-byebug-3.9.0 in any of the sources`, "", "", "", "", ""},
		{"a path that runs into the next layer", `Unable to create /srv/app/perl5/lib/5.40.3: No such file or directory at /srv/app/perl5/lib/local/lib.pm line 721.`, "", "", "", "", ""},
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

// TestCatalogCauseKeepsInnermostValue: when the quoted layers are cut before their end,
// or the chain goes on below the innermost layer the catalog knows, the cause still
// ends with the innermost error whole: the value that failed is there.
func TestCatalogCauseKeepsInnermostValue(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"long kill chain whose CNI layer no entry reads",
			`error killing pod: failed to "KillPodSandbox" for "0c5e9a7a-1d2b-4f43-9b4e-5b0d7f3a2c11" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for pod sandbox k8s_db-0_data_0c5e9a7a-1d2b-4f43-9b4e-5b0d7f3a2c11_0(5d1e0c3b9a7f4e2d8c6b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d): network \"macvlan-conf\" requested interface name \"net1\" already assigned"`,
			`requested interface name "net1" already assigned`},
		{"one long layer cut before the value",
			`Failed to attach volume "pvc-0a1b2c3d-0000-11e7-8000-000000000001" on node "ip-10-0-1-20.ec2.internal" with: Error attaching EBS volume "vol-0123456789abcdef0" to instance "i-0fedcba9876543210": InvalidParameterValue: Value (/dev/xvdzz) for parameter device is invalid. /dev/xvdzz is not a valid EBS device name.`,
			"/dev/xvdzz is not a valid EBS device name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readChain(tc.text, "kubelet")
			if !r.known() {
				t.Fatal("not read")
			}
			if c := r.cause(); !strings.Contains(c, tc.want) {
				t.Errorf("cause %q does not end with %q", c, tc.want)
			}
		})
	}
	// A structured logger's JSON line: the message and the error it was given, never the
	// line's other fields or its punctuation.
	r0 := readChain(`{"level":"error","ts":"2026-12-05T10:00:00.000Z","caller":"ipamd/ipamd.go:1","msg":"Failed to allocate a private IP address","error":"no available IP/Prefix addresses"}`, "")
	if !r0.known() {
		t.Fatal("JSON line not read")
	}
	if c := r0.cause(); !strings.Contains(c, "no available IP/Prefix addresses") || strings.Contains(c, `","`) || strings.Contains(c, "}") {
		t.Errorf("JSON line's cause %q: want its message and error, without the JSON around them", c)
	}
	// A short chain quoted whole does not repeat its end.
	r := readChain(`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "8a7f": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`, "kubelet")
	if c := r.cause(); strings.Contains(c, "ends in") {
		t.Errorf("cause repeats what it quoted whole: %q", c)
	}
}

// TestSandboxTeardownIsTermination: the errors of stopping a pod's sandbox wrap the
// same CNI and runtime errors as creating it; the layers around them put the reading
// at termination, and a setup failure whose clean-up also failed stays at sandbox.
// The lines follow the kubelet's FailedKillPod event, containerd's and CRI-O's
// StopPodSandbox errors and the CNI library's DEL wording.
func TestSandboxTeardownIsTermination(t *testing.T) {
	cases := []struct {
		name, text string
		stage      Stage
		quoted     string
	}{
		{"kubelet's FailedKillPod around containerd's teardown",
			`error killing pod: failed to "KillPodSandbox" for "5c1d0e2a-7b7e-4a51-9d0e-3f6c2b1a9e44" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for sandbox \"4be1c0\": plugin type=\"flannel\" failed (delete): failed to find plugin \"portmap\" in path [/opt/cni/bin]"`,
			StageTermination, "KillPodSandbox"},
		{"kubelet's StopPodSandbox around CRI-O's teardown",
			`StopPodSandbox "7f3e9a" from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for pod sandbox k8s_web-1_shop_77aa_0(7f3e9a): cni config uninitialized`,
			StageTermination, "failed to destroy network for pod sandbox k8s_web-1_shop"},
		{"a ticket's sentence around the CNI library's DEL",
			`Each time the node tried to remove the pod it failed with plugin type="calico" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
			StageTermination, "(delete)"},
		{"sandbox creation",
			`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "8a7f": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
			StageSandbox, ""},
		{"creation whose clean-up failed too",
			`networkPlugin cni failed to set up pod "web-1_shop" network: error getting ClusterInformation: connection is unauthorized: Unauthorized, failed to clean up sandbox container "94c0" network for pod "web-1": networkPlugin cni failed to teardown pod "web-1_shop" network: error getting ClusterInformation: connection is unauthorized: Unauthorized`,
			StageSandbox, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := readChain(c.text, "kubelet")
			if !r.known() {
				t.Fatalf("not read: %s", c.text)
			}
			if r.stage() != c.stage {
				t.Errorf("stage %s, want %s", r.stage(), c.stage)
			}
			if c.quoted != "" && !strings.Contains(r.cause(), c.quoted) {
				t.Errorf("the cause does not quote %q: %s", c.quoted, r.cause())
			}
		})
	}
}

// A container's creation that fails inside the runtime is read at the start stage even
// though the runtime prints the same words for its sandbox's container: the catalog
// gives them no stage, the layers around them do. A sandbox's creation stays the
// sandbox's, and a name holding "probe" does not make the line a probe's.
func TestCatalogReadsContainerCreation(t *testing.T) {
	create := `Error: failed to create containerd container: cannot load seccomp profile "/var/lib/kubelet/seccomp/localhost/system-probe": open /var/lib/kubelet/seccomp/localhost/system-probe: no such file or directory`
	r := readChain(create, "kubelet")
	if !r.known() || r.stage() != StageStart {
		t.Fatalf("readChain(%q): known %v, stage %q; want a reading at start", create, r.known(), r.stage())
	}
	if c := r.cause(); !strings.Contains(c, "/var/lib/kubelet/seccomp/localhost/system-probe") {
		t.Errorf("cause %q does not quote the profile's path", c)
	}
	if st := textStage(create, StageRuntime); st != StageStart {
		t.Errorf("textStage(%q) = %s, want start", create, st)
	}
	sandbox := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd container: failed to get sandbox image "registry.k8s.io/pause:3.9": failed to pull image`
	if r := readChain(sandbox, "kubelet"); r.known() && r.stage() == StageStart {
		t.Errorf("readChain(%q) at start, want the sandbox's stage or none", sandbox)
	}
}

// An admission plugin's refusal does not say which object it refused; the API error's
// head around it does, and the quote keeps it (a JSON log's escaped quotes unescaped).
func TestCatalogQuoteKeepsTheRefusedObject(t *testing.T) {
	for _, line := range []string{
		`2024-03-19T03:14:25.943+0800	ERROR	Reconciler	deploy statefulset failed	{"name": "sr", "error": "statefulsets.apps \"starrockscluster-fe\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>"}`,
		`Error from server (Forbidden): statefulsets.apps "starrockscluster-fe" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
	} {
		r := readChain(line, "")
		if !r.known() {
			t.Fatalf("catalog does not read %q", line)
		}
		if c := r.cause(); !strings.Contains(c, `statefulsets.apps "starrockscluster-fe" is forbidden: cannot set blockOwnerDeletion`) {
			t.Errorf("cause %q does not quote the refused object", c)
		}
	}
}

// A reason word at a sentence's end keeps its full stop; its camel-case parts are still
// the words the prose names ("… will get OOMKilled." names oom and kill).
func TestProseTokensSplitAReasonBeforeAFullStop(t *testing.T) {
	got := proseTokens("the 256Mi memory limit is too low and pods will get OOMKilled.")
	for _, want := range []string{"oom", "kill"} {
		if !slices.Contains(got, want) {
			t.Errorf("proseTokens = %q, lacks %q", got, want)
		}
	}
}

// TestKlogSourceFilePicksTheEntry: a klog line names the file that printed it; among the
// entries that match its words, the one printed in that file is the reading, though
// another component prints a more specific look-alike ("error getting node %s: %w").
func TestKlogSourceFilePicksTheEntry(t *testing.T) {
	text := `Error getting node: node "ip-10-0-1-2.ec2.internal" not found`
	ms := catalog.Default().Read(text)
	if r := readMatches(text, "kubelet", "", ms); !r.known() || r.outer.Entry.Component == "kubelet" {
		t.Skipf("the words alone now read as the kubelet's (%v): the file is not needed to tell", r.known())
	}
	r := readMatches(text, "kubelet", "kubelet.go", ms)
	if !r.known() || r.outer.Entry.Component != "kubelet" || path.Base(r.outer.Entry.File) != "kubelet.go" || r.stage() != StageNode {
		t.Fatalf("read %v: want the kubelet's kubelet.go entry at the node stage", r.refs())
	}
}
