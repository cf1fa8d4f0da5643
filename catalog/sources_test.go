package catalog

import (
	"regexp"
	"strings"
	"testing"
)

var verb = regexp.MustCompile(`%[-+# 0-9.*\[\]]*[a-zA-Z%]`)

// firstOf is the first match of a component in Read's answer for msg.
func firstOf(c *Catalog, msg, component string) *Match {
	for _, m := range c.Read(msg) {
		if m.Entry.Component == component {
			return &m
		}
	}
	return nil
}

// componentStage is a component whose entry must read a line, and the stage it gives.
type componentStage struct{ component, stage string }

// wantReadings checks that each line is read by an entry of each wanted component, at
// the wanted stage.
func wantReadings(t *testing.T, c *Catalog, msg string, want []componentStage) {
	t.Helper()
	for _, w := range want {
		m := firstOf(c, msg, w.component)
		if m == nil {
			t.Errorf("%q: no %s entry (read: %v)", msg, w.component, components(c.Read(msg)))
			continue
		}
		if m.Entry.Stage != w.stage {
			t.Errorf("%q: %s entry %s (%q) has stage %q, want %q (read: %v)", msg, w.component, m.Entry.ID, m.Entry.Template, m.Entry.Stage, w.stage, components(c.Read(msg)))
		}
	}
}

// TestAddedComponents reads one real line of each component added to the generator's
// pins and the curated table, and checks the component, and the stage where the entry
// names one.
func TestAddedComponents(t *testing.T) {
	c := Default()
	cases := []struct{ msg, component, stage string }{
		{`error: You must be logged in to the server (Unauthorized)`, "kubectl", "request"},
		{`The connection to the server localhost:8080 was refused - did you specify the right host or port?`, "kubectl", "request"},
		{`Unable to connect to the server: x509: certificate has expired or is not yet valid`, "kubectl", "request"},
		{`error: deployment "web" exceeded its progress deadline`, "kubectl", "controller"},
		// the kubelet cannot read its own Node object: the node's trouble
		{`E0912 22:47:27.562891    1849 kubelet.go:2451] "Error getting node" err="node \"ip-10-50-182-117.ec2.internal\" not found"`, "kubelet", "node"},
		// klog cannot create its log file: the process exits
		{`log: exiting because of error: log: cannot create log: open /tmp/coredns.ERROR: no such file or directory`, "klog", "runtime"},
		// calico-node's own start refuses and exits: its container's run
		{`Calico node 'k8s2master1' is already using the IPv4 address 172.18.0.1.`, "calico", "runtime"},
		{`error: exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"`, "client-go", "request"},
		{`Error from server: rpc error: code = 14 desc = etcdserver: request timed out`, "etcd", "request"},
		{`Error: etcdserver: mvcc: database space exceeded`, "etcd", "request"},
		{`Error creating: pods "web-1" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`, "pod-security-admission", "admission"},
		{`Warning  FailedScheduling  karpenter: Failed to schedule pod, incompatible requirements, key karpenter.sh/nodepool, does not have known values`, "karpenter", "scheduling"},
		{`E0912 21:15:18.306924 5 factory.go:583] Error scheduling default web-1: pod (web-1) failed to fit in any node`, "kube-scheduler", "scheduling"},
		{`2018/09/06 13:02:45 [FATAL] plugin/loop: Seen "HINFO IN 205042106.562065606." more than twice, loop detected`, "coredns", "service"},
		{`panic: runtime error: invalid memory address or nil pointer dereference`, "go", ""},
		// the namespace controller and client-go's discovery: a group that fails discovery
		// keeps a namespace Terminating
		{`E0803 10:51:55.509313    1878 namespace_controller.go:162] deletion of namespace helm-ns-413 failed: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request`, "kube-controller-manager", "termination"},
		{`NamespaceDeletionDiscoveryFailure  True  DiscoveryFailed  Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: custom.metrics.k8s.io/v1beta1: the server is currently unable to handle the request`, "kube-controller-manager", "termination"},
		{`error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request`, "client-go", "termination"},
		// the HPA's conditions, quota's evaluators, RBAC's refusal in 1.7-1.13 wording
		{`AbleToScale  False  FailedGetScale  the HPA controller was unable to get the target's current scale: deployments/scale.apps "web" not found`, "kube-controller-manager", "controller"},
		{`failed quota: compute: must specify limits.cpu,limits.memory`, "kube-apiserver", "admission"},
		{`User "system:serviceaccount:default:default" cannot list pods at the cluster scope`, "kube-apiserver", "request"},
		{`create Pod web-0 in StatefulSet web failed error: pods "web-0" is forbidden: error looking up service account default/web: serviceaccount "web" not found`, "kube-controller-manager", "admission"},
		// runc's rc era, the registry's error codes, CoreDNS's plugin errors
		{`container_linux.go:349: starting container process caused "exec: \"/app\": permission denied": unknown`, "runc", "start"},
		{`standard_init_linux.go:228: exec user process caused: exec format error`, "runc", "start"},
		{`Error response from daemon: manifest for nginx:9.9 not found: manifest unknown: manifest unknown`, "distribution", "image"},
		{`Error response from daemon: manifest unknown`, "distribution", "image"},
		{`Message: failing or missing response from https://10.96.10.86:443/apis/metrics.k8s.io/v1beta1: Get "https://10.96.10.86:443/apis/metrics.k8s.io/v1beta1": dial tcp 10.96.10.86:443: connect: connection refused`, "kube-apiserver", "termination"},
		{`plugin/forward: no nameservers found`, "coredns", "service"},
		// the node IPAM: a node without a pod CIDR gets no pod network
		{`failed to allocate cidr: CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range`, "kube-controller-manager", "sandbox"},
		// Docker Engine's daemon stopping a container whose process SIGKILL does not end
		{`Nov 30 14:54:10 kube-master-3 dockerd[1359]: time="2021-11-30T14:54:10.854068719+03:00" level=info msg="Container 7873876b3310 failed to exit within 10 seconds of kill - trying direct SIGKILL"`, "docker", "termination"},
		{`level=warning msg="Container failed to exit within 10s of kill - trying direct SIGKILL" container=0f1e error="context deadline exceeded"`, "docker", "termination"},
		// curated: printed by programs that are not Go modules, or not served
		{`Apr 05 05:33:40 master systemd[1]: Unit kubelet.service entered failed state.`, "systemd", "node"},
		{`Jan 18 17:33:58 aura systemd[1]: kubelet.service: Failed with result 'exit-code'.`, "systemd", "node"},
		{`kernel: Memory cgroup out of memory: Killed process 4242 (java) total-vm:4045820kB, anon-rss:1046400kB`, "linux", "runtime"},
		{`kernel: traps: nginx[24701] general protection fault ip:7f03278adc59 sp:7ffcdba0aa10 error:0 in ld-musl-x86_64.so.1[7f032789f000+48000]`, "linux", "runtime"},
		{`Output: mount.nfs: access denied by server while mounting 10.0.0.2:/export`, "nfs-utils", "volume"},
		{`Error creating: pods "x-" is forbidden: unable to validate against any security context constraint: [provider "anyuid": Forbidden: not usable by user or serviceaccount]`, "openshift-scc", "admission"},
	}
	for _, tc := range cases {
		m := firstOf(c, tc.msg, tc.component)
		if m == nil {
			t.Errorf("%q: no %s entry (read: %v)", tc.msg, tc.component, components(c.Read(tc.msg)))
			continue
		}
		if tc.stage != "" && m.Entry.Stage != tc.stage {
			t.Errorf("%q: %s entry %s has stage %q, want %q", tc.msg, tc.component, m.Entry.ID, m.Entry.Stage, tc.stage)
		}
	}
}

func components(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Entry.Component+":"+m.Entry.Stage+":"+m.Entry.Template)
	}
	return out
}

// TestKubectlWrapperNamesNoStage: kubectl prints any API error inside "Error from server
// (…): …"; those words name no stage, so the admission plugin's refusal inside still gives
// the stage.
func TestKubectlWrapperNamesNoStage(t *testing.T) {
	c := Default()
	msg := `Error from server (Forbidden): error when creating "pod.yaml": pods "web" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`
	var staged []string
	for _, m := range c.Read(msg) {
		if m.Entry.Component == "kubectl" && m.Entry.Stage != "" {
			t.Errorf("kubectl entry %s (%q) names stage %q", m.Entry.ID, m.Entry.Template, m.Entry.Stage)
		}
		if m.Entry.Stage != "" {
			staged = append(staged, m.Entry.Stage)
		}
	}
	if len(staged) == 0 || staged[0] != "admission" {
		t.Errorf("outermost staged layer of %q: %v, want admission first", msg, staged)
	}
}

// TestCuratedEntries: curated entries say so, cite a file, and carry no release range.
func TestCuratedEntries(t *testing.T) {
	n := 0
	for _, e := range Default().Entries() {
		if e.Source == "" {
			if e.First == "curated" {
				t.Errorf("%s: release curated without source curated", e.ID)
			}
			continue
		}
		n++
		if e.Source != "curated" || e.First != "curated" || e.Last != "curated" || e.File == "" || e.Module == "" || e.Line != 0 {
			t.Errorf("%s: curated entry not marked as such: %+v", e.ID, e)
		}
	}
	if n == 0 {
		t.Fatal("no curated entries")
	}
}

// TestNoCommonWordTemplates: no component but the Go standard library has an entry made
// only of words every program uses and at most one verb; those recognize noise.
func TestNoCommonWordTemplates(t *testing.T) {
	for _, e := range Default().Entries() {
		if e.Component == "go" || e.Kind == "reason" || !e.Plain && len(verb.FindAllString(strings.ReplaceAll(e.Template, "%%", ""), -1)) > 1 {
			continue // several verbs give common words a structure of their own
		}
		lit := strings.ToLower(e.Template)
		if !e.Plain {
			lit = verb.ReplaceAllString(lit, " ")
		}
		ws := strings.FieldsFunc(lit, func(r rune) bool { return r < 'a' || r > 'z' })
		if len(ws) == 0 || len(ws) > 3 {
			continue
		}
		common := true
		for _, w := range ws {
			if !map[string]bool{"not": true, "is": true, "supported": true, "allowed": true, "error": true, "failed": true, "invalid": true, "found": true, "denied": true, "validation": true, "headers": true, "response": true, "request": true}[w] {
				common = false
			}
		}
		if common {
			t.Errorf("%s: template %q is only common words", e.ID, e.Template)
		}
	}
}
