package rules

import (
	"strings"
	"testing"
)

// An admission refusal names the pod it refused (k8s.io/apimachinery NewForbidden:
// `pods "NAME" is forbidden: ...`); with no pod object in the evidence, the cause says
// which pod. A controller's refused pod has only its generateName prefix, which names
// no pod.
func TestAnAdmissionRefusalNamesThePod(t *testing.T) {
	named := `Error from server (Forbidden): error when creating "job.yaml": pods "batch-runner" is forbidden: failed quota: compute: must specify limits.memory`
	wantOneRoot(t, catalogRoots(t, map[string]string{"ticket.txt": named + "\n"}), "admission-quota-resources-required", "batch-runner", "must specify limits.memory")
	prefix := `Error creating: pods "web-5d8f9c7b6-" is forbidden: failed quota: compute: must specify limits.memory`
	for _, f := range catalogRoots(t, map[string]string{"ticket.txt": prefix + "\n"}) {
		if strings.Contains(f.Cause, "(pod web-5d8f9c7b6-") {
			t.Errorf("a generateName prefix named as a pod: %s", f.Cause)
		}
	}
}

// GKE's IAM authorizer adds the permissions that would allow a request RBAC refused; the
// cause names them.
func TestAForbiddenClusterScopeNamesGKEPermissions(t *testing.T) {
	line := `Error: INSTALLATION FAILED: clusterroles.rbac.authorization.k8s.io is forbidden: User "ops@example.com" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope: requires one of ["container.clusterRoles.create"] permission(s).`
	wantOneRoot(t, catalogRoots(t, map[string]string{"helm.txt": line + "\n"}), "request-forbidden-cluster-scope", `no IAM role grants "container.clusterRoles.create"`)
}

// An identity refused at the cluster scope and in a namespace lacks a ClusterRole binding:
// that refusal is the finding, whichever line comes first and in either wording, since
// the one grant answers both.
func TestAClusterScopeRefusalOutranksANamespacedOne(t *testing.T) {
	cluster := `User "system:serviceaccount:mesh:operator" cannot list resource "meshes" in API group "mesh.example.com" at the cluster scope`
	namespaced := `pods is forbidden: User "system:serviceaccount:mesh:operator" cannot deletecollection resource "pods" in API group "" in the namespace "mesh-system"`
	for _, paste := range []string{cluster + "\n" + namespaced + "\n", namespaced + "\n" + cluster + "\n"} {
		wantOneRoot(t, catalogRoots(t, map[string]string{"message.txt": paste}), "request-forbidden-cluster-scope", "list meshes at the cluster scope")
	}
	old := `Error from server (Forbidden): error when creating "agent.yaml": User "system:serviceaccount:agents:default" cannot create customresourcedefinitions.apiextensions.k8s.io at the cluster scope. (post customresourcedefinitions.apiextensions.k8s.io)` + "\n" +
		`Error from server (Forbidden): error when creating "agent.yaml": User "system:serviceaccount:agents:default" cannot create daemonsets.apps in the namespace "agents". (post daemonsets.apps)` + "\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"apply.txt": old}), "request-forbidden-cluster-scope", "system:serviceaccount:agents:default", "customresourcedefinitions.apiextensions.k8s.io")
}

// The API server adds its authorizer's reason to a refusal ("RBAC: clusterrole … not
// found": a binding names a role that does not exist): the finding says it. Each other
// permission the same identity was refused is said with the first, since the fix grants
// them all.
func TestARefusalSaysTheAuthorizersReasonAndEveryPermission(t *testing.T) {
	log := `E0127 06:01:02.785927       1 reflector.go:156] Failed to list *v1.Deployment: deployments.apps is forbidden: User "system:serviceaccount:obs:exporter" cannot list resource "deployments" in API group "apps" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "exporter" not found` + "\n" +
		`E0127 06:01:02.785985       1 reflector.go:156] Failed to list *v1.Node: nodes is forbidden: User "system:serviceaccount:obs:exporter" cannot list resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "exporter" not found` + "\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"logs.txt": log}), "request-forbidden-cluster-scope",
		`the authorizer's own reason: RBAC: clusterrole.rbac.authorization.k8s.io "exporter" not found`, "list deployments", "list nodes")
}

// The GKE console says each of the scheduler's reasons on a line of its own, without
// the node counts ("Cannot schedule pods: Insufficient cpu."): the finding reads them,
// and names every resource no node has free, since the fix answers them all.
func TestTheConsolesUnschedulableLines(t *testing.T) {
	paste := "PodUnschedulable\nCannot schedule pods: Insufficient cpu.\nPodUnschedulable\nCannot schedule pods: Insufficient memory.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"console.txt": paste}), "scheduling-insufficient-resources", "Insufficient cpu", "Insufficient memory")
	paste = "Cannot schedule pods: node(s) didn't satisfy existing pods anti-affinity rules.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"console.txt": paste}), "scheduling-affinity-unsatisfiable", "didn't satisfy existing pods anti-affinity rules")
}

// A service account refused in a program's own log is the program's request; when the
// evidence shows its pod dying (a ticket that says the pods crash-loop, a restarting
// container) the chain broke at runtime, under the rule that reads the refusal. The
// same log with nothing dying stays at request, as does a person's kubectl output.
func TestARefusalAProgramDiesOfIsRuntime(t *testing.T) {
	log := `E0307 19:47:48.587114       1 reflector.go:147] pkg/mod/k8s.io/client-go@v0.28.4/tools/cache/reflector.go:229: Failed to watch *v1.Widget: failed to list *v1.Widget: widgets.example.com is forbidden: User "system:serviceaccount:agents:node-agent" cannot list resource "widgets" in API group "example.com" at the cluster scope` + "\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		stage string
	}{
		{"log alone", map[string]string{"agent.log": log}, "request"},
		{"ticket says crash-looping", map[string]string{"agent.log": log, "message.txt": "The node-agent pods are crashlooping since the upgrade, logs below.\n"}, "runtime"},
		{"ticket says the daemon fails", map[string]string{"agent.log": log, "message.txt": "Applying the new manifest causes the agent-node to fail with the following errors:\n"}, "runtime"},
		{"restarting row", map[string]string{"agent.log": log, "pods.txt": "NAME               READY   STATUS             RESTARTS   AGE\nnode-agent-x7k2p   0/1     CrashLoopBackOff   6          9m\n"}, "runtime"},
		{"a person's kubectl", map[string]string{"kubectl.txt": `Error from server (Forbidden): widgets.example.com is forbidden: User "jane@example.com" cannot list resource "widgets" in API group "example.com" at the cluster scope` + "\n", "message.txt": "The pods are crashlooping.\n"}, "request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range catalogRoots(t, c.files) {
				if f.Rule == "request-forbidden-cluster-scope" {
					got = append(got, string(f.Stage))
				}
			}
			if len(got) != 1 || got[0] != c.stage {
				t.Fatalf("request-forbidden-cluster-scope roots at %v, want one at %s", got, c.stage)
			}
		})
	}
}

// A program's structured log line refused with 401 (a CNI daemon's datastore client)
// beside its crash-looping pods is that program's runtime failure; kubectl's own 401 is
// a person's request whatever the pods do.
func TestAnUnauthorizedProgramThatDiesIsRuntime(t *testing.T) {
	rows := "NAMESPACE     NAME              READY   STATUS             RESTARTS   AGE\nkube-system   net-agent-x7k2p   0/1     CrashLoopBackOff   41         3h\n"
	for _, c := range []struct {
		name, line, stage string
	}{
		{"program", `2024-03-01 10:00:00.000 [ERROR][1] agent/startup.go 88: Connection to the datastore is unauthorized error=connection is unauthorized: Unauthorized`, "runtime"},
		{"kubectl", `error: You must be logged in to the server (Unauthorized)`, "request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range catalogRoots(t, map[string]string{"pods.txt": rows, "message.txt": c.line + "\n"}) {
				if f.Rule == "request-unauthorized" {
					got = append(got, string(f.Stage))
				}
			}
			if len(got) != 1 || got[0] != c.stage {
				t.Fatalf("request-unauthorized roots at %v, want one at %s", got, c.stage)
			}
		})
	}
}

// A webhook call answered with an HTTP status in place of the webhook's answer (net/http
// reports a proxy's refused CONNECT as the URL and the status text) is a proxy's: the
// cause says the API server's NO_PROXY lacks the Service. A timeout says nothing of it.
func TestAWebhookCallAProxyAnsweredNamesTheProxy(t *testing.T) {
	proxied := `Error from server (InternalError): error when creating "ing.yaml": Internal error occurred: failed calling webhook "validate.example.io": Post https://example-admission.example.svc:443/validate?timeout=30s: Gateway Timeout`
	wantOneRoot(t, catalogRoots(t, map[string]string{"kubectl.txt": proxied + "\n"}), "admission-webhook-unreachable", `"Gateway Timeout" is an HTTP proxy's answer`, "NO_PROXY")
	timedOut := `Error from server (InternalError): error when creating "ing.yaml": Internal error occurred: failed calling webhook "validate.example.io": Post "https://example-admission.example.svc:443/validate?timeout=30s": context deadline exceeded`
	for _, f := range catalogRoots(t, map[string]string{"kubectl.txt": timedOut + "\n"}) {
		if strings.Contains(f.Cause, "proxy") {
			t.Errorf("a timed-out call blamed on a proxy: %s", f.Cause)
		}
	}
}

// A hostPath check that fails on a directory of the kubelet's default root says the
// node's kubelet keeps its root elsewhere; another path's failure does not.
func TestAKubeletDirectoryTheNodeLacksNamesTheKubeletRoot(t *testing.T) {
	line := `Warning  FailedMount  12s (x7 over 44s)  kubelet  MountVolume.SetUp failed for volume "registration-dir" : hostPath type check failed: /var/lib/kubelet/plugins_registry/ is not a directory`
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": line + "\n"}), "volume-hostpath-type-mismatch", "the kubelet's default root /var/lib/kubelet", "/var/lib/k0s/kubelet")
	other := `Warning  FailedMount  12s (x7 over 44s)  kubelet  MountVolume.SetUp failed for volume "certs" : hostPath type check failed: /etc/app/certs is not a directory`
	for _, f := range catalogRoots(t, map[string]string{"events.txt": other + "\n"}) {
		if strings.Contains(f.Cause, "kubelet's default root") {
			t.Errorf("a path outside the kubelet's root blamed on it: %s", f.Cause)
		}
	}
}
