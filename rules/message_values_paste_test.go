package rules

import (
	"strings"
	"testing"
)

// A message a ticket wraps over lines is read whole: the values on the line before
// the part a signature knows, and the rest of a value a line cut, are in the cause.
func TestAWrappedMessageIsReadWholeWithItsValues(t *testing.T) {
	t.Run("the image on the line above", func(t *testing.T) {
		rs := catalogRoots(t, map[string]string{"error.txt": "Failed to pull image \"registry.example.com/team/worker:2.4.0\": \n  no match for platform in manifest: not found\n"})
		wantOneRoot(t, rs, "image-pull-platform-missing", "registry.example.com/team/worker:2.4.0")
	})
	t.Run("the image quoted beside the catalog's wording", func(t *testing.T) {
		rs := catalogRoots(t, map[string]string{"ticket.txt": "The pods stay in ImagePullBackOff with `failed to pull and unpack image \"ghcr.io/example/report-api:jaeger\": no match for platform in manifest: not found` on the arm64 nodes.\n"})
		wantOneRoot(t, rs, "image-pull-platform-missing", "ghcr.io/example/report-api:jaeger")
	})
	t.Run("a folded YAML message", func(t *testing.T) {
		const status = `- type: NamespaceDeletionDiscoveryFailure
  status: 'True'
  reason: DiscoveryFailed
  message: >-
    Discovery failed for some groups, 1 failing: unable to retrieve the
    complete list of server APIs: metrics.example.io/v1beta2: stale
    GroupVersion discovery: metrics.example.io/v1beta2
`
		rs := catalogRoots(t, map[string]string{"ns.txt": status})
		wantOneRoot(t, rs, "termination-namespace-discovery-failed", "metrics.example.io/v1beta2")
	})
	t.Run("a line that ends with a comma", func(t *testing.T) {
		const text = "All 3 pods stay in CreateContainerConfigError:\n\n```\nError: container has runAsNonRoot and image has non-numeric user (flight),\ncannot verify user is non-root\n```\n"
		rs := catalogRoots(t, map[string]string{"message.txt": text})
		wantOneRoot(t, rs, "config-run-as-non-root", "non-numeric user (flight)")
	})
	t.Run("a code span over two lines", func(t *testing.T) {
		const text = "The ReplicaSet hangs on `Error creating: pods \"db-5b7c9d\" is forbidden: unable to validate against\n" +
			"any security context constraint: [fsGroup: Invalid value: []int64{2000}: 2000 is not an allowed group]` and creates nothing.\n"
		rs := catalogRoots(t, map[string]string{"ticket.txt": text})
		wantOneRoot(t, rs, "admission-scc-denied", "2000 is not an allowed group")
	})
}

// The scheduler lists every affinity reason of the nodes it ruled out; the cause says
// each, the reason that names whose rule it is above all.
func TestEveryAffinityReasonIsSaid(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"ticket.txt": "The upgraded pods never start; the UI says \"0/4 nodes are available: 4 node(s) didn't match pod affinity/anti-affinity, 4 node(s) didn't satisfy existing pods anti-affinity rules.\"\n"})
	wantOneRoot(t, rs, "scheduling-affinity-unsatisfiable", "didn't match pod affinity/anti-affinity", "didn't satisfy existing pods anti-affinity rules")
}

// Values the failing line does not hold but the evidence does: the container a start
// error names before the runtime's words, the repository a ticket names at two tags,
// the port and flag of a program that checks its ports before it listens.
func TestTheCauseTakesTheValuesAroundTheLine(t *testing.T) {
	t.Run("container", func(t *testing.T) {
		rs := catalogRoots(t, map[string]string{"events.txt": "Error: failed to start container \"report-worker\": Error response from daemon: failed to create shim: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/worker\": stat /worker: no such file or directory: unknown\n"})
		wantOneRoot(t, rs, "start-command-not-found", "container report-worker's command /worker")
	})
	t.Run("one repository at two tags", func(t *testing.T) {
		const text = "The arm64 image of example/report-ui:main does not start:\n\nexec /srv/ui: exec format error\n\nexample/report-ui:v2.0.1 fails the same way.\n"
		rs := catalogRoots(t, map[string]string{"ticket.txt": text})
		wantOneRoot(t, rs, "start-exec-format-error", "example/report-ui")
	})
	t.Run("a port checked before listening", func(t *testing.T) {
		const log = "I0301 10:00:01.000000       7 flags.go:198] Watching for Ingress class: nginx\nF0301 10:00:01.100000       7 main.go:64] port 8443 is already in use. Please check the flag --https-port\n"
		rs := catalogRoots(t, map[string]string{"container.log": log})
		wantOneRoot(t, rs, "runtime-address-in-use", "port 8443", "--https-port")
	})
	// A sentence about a port in use is not the program's refusal.
	for _, f := range catalogRoots(t, map[string]string{"ticket.txt": "The port 80 is already in use by the ingress on this node, so we moved the app to 8080 and it works.\n"}) {
		if f.Rule == "runtime-address-in-use" && !strings.Contains(f.Cause, "ticket") {
			t.Errorf("a reporter's sentence read as the program's refusal: %s", f.Cause)
		}
	}
}

// A node component's own call refused by the API server, wrapped in the step it was
// taking (a CNI plugin's pod lookup under "Failed to create pod sandbox"), is that
// step's failure: the sandbox, not a client's refused request.
func TestARefusalInsideANodeStepIsThatStep(t *testing.T) {
	const row = `5s          Warning   FailedCreatePodSandBox   pod/api-7f9c6d5b8-q2w4e    Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "5d1c0a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b": plugin type="multus" name="multus-cni-network" failed (add): Multus: [shop/api-7f9c6d5b8-q2w4e/0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f]: error getting pod: Unauthorized
`
	rs := catalogRoots(t, map[string]string{"events.txt": row})
	wantOneRoot(t, rs, "sandbox-create-failed", "multus", "Unauthorized")
}

// The API server's own words for a value of the wrong type (when the client did not
// check): the decoder's, in both the json-iterator and the encoding/json forms, are the
// schema type mismatch, with the field and the value around it.
func TestTheAPIServersDecodeErrorIsATypeMismatch(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"kubectl.txt": `$ kubectl apply -f web.yaml
Error from server (BadRequest): error when creating "web.yaml": Deployment in version "v1beta1" cannot be handled as a Deployment: v1beta1.Deployment.Spec: v1beta1.DeploymentSpec.Template: v1.PodTemplateSpec.Spec: v1.PodSpec.Containers: []v1.Container: v1.Container.Env: []v1.EnvVar: v1.EnvVar.Value: ReadString: expects " or n, but found 8, error found in #10 byte of ...|,"value":8080}],"ima|..., bigger context ...|{"name":"HTTP_PORT","value":8080}],"image":"example/web:1.0","im|...
`})
	wantOneRoot(t, rs, "request-schema-type-mismatch", "v1.EnvVar.Value", `"HTTP_PORT","value":8080`)
	rs = catalogRoots(t, map[string]string{"kubectl.txt": "Error from server (BadRequest): error when creating \"api.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string\n"})
	wantOneRoot(t, rs, "request-schema-type-mismatch", "ObjectMeta.metadata.annotations", "type bool where the schema wants type string")
}

// kubectl's port lookup names the pod it resolved a Service to; the Service is the one
// the pasted command forwarded.
func TestANamedPortRefusalNamesTheForwardedService(t *testing.T) {
	const paste = "$ kubectl -n shop port-forward svc/orders-metrics 8443:8443\nerror: Pod 'orders-7c9d8f6b5-x2k4p' does not have a named port 'https'\n"
	rs := catalogRoots(t, map[string]string{"kubectl.txt": paste})
	wantOneRoot(t, rs, "service-target-port-mismatch", "orders-metrics", "https")
}

// The container a start error's line above names, and the container a pasted
// `kubectl logs POD -c NAME` names, are the container the cause speaks of.
func TestTheCauseNamesTheContainer(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"ticket.txt": "The pod crash-loops. When I check the logs I have something like that:\nkubectl logs fortune -c html-writer\n/bin/sh: 1: /bin/writer.sh: Permission denied\n"})
	wantOneRoot(t, rs, "start-permission-denied", "container html-writer's command /bin/writer.sh")
	// A terminal cut the row at its width, inside a word.
	rs = catalogRoots(t, map[string]string{"events.txt": "  Warning  Failed                 1m (x5 over 2m)  kubelet, minikube  Error: failed to start container \"orders\": Error response from daemon: OCI runtime create failed: container_linux.go:348: starting containe\nr process caused \"exec: \\\"-port=80\\\": executable file not found in $PATH\": unknown\n"})
	wantOneRoot(t, rs, "start-command-not-found", "container orders's command -port=80")
}

// kube-router's own words for a node without a pod CIDR, beside the kubeadm command
// that set the pod network: the cause names the node and the range.
func TestANodeWithoutAPodCIDRNamesTheRange(t *testing.T) {
	files := map[string]string{
		"ticket.txt":    "kubeadm init ran with:\n`kubeadm init --pod-network-cidr=10.32.0.0/24`\nThen the second node joined and kube-router fails there.\n",
		"container.log": "Failed to create network services controller: Failed to get pod CIDR details from Node.spec: node.Spec.PodCIDR not set for node: worker-3\n",
	}
	wantOneRoot(t, catalogRoots(t, files), "sandbox-node-pod-cidr-not-assigned", "worker-3", "--pod-network-cidr=10.32.0.0/24")

	// The controller manager's node IPAM out of CIDRs in a range its flag sets too small.
	files = map[string]string{
		"flags.txt":              "    - --allocate-node-cidrs=true\n    - --cluster-cidr=10.20.0.0/24\n",
		"controller-manager.log": "E0223 09:50:35.810656       1 controller_utils.go:267] Error while processing Node Add/Delete: failed to allocate cidr: CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range\n",
	}
	wantOneRoot(t, catalogRoots(t, files), "sandbox-node-pod-cidr-not-assigned", "no remaining CIDRs", "--cluster-cidr=10.20.0.0/24")
}

// A client CA path said alone (a ticket's first line), and an event row whose node the
// paste does not show: the cause has the file, and no empty node name.
func TestValuesSaidAloneAndValuesMissing(t *testing.T) {
	wantOneRoot(t, catalogRoots(t, map[string]string{"ticket.txt": "**Problem**\nunable to load client CA file /etc/kubernetes/pki/ca.crt\n**Environment**\nCentOS 7.6\n"}),
		"node-kubelet-client-ca-missing", "/etc/kubernetes/pki/ca.crt")
	rs := catalogRoots(t, map[string]string{"events.txt": `Warning  FailedCreatePodSandBox  4m39s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "d615cc04143d0a1e4be8aa76e4214bc7add843b4e6c4813d6dbfee223e1c29d6": failed to allocate for range 0: no IP addresses available in range set: 10.42.2.1-10.42.2.254
`})
	wantOneRoot(t, rs, "sandbox-ip-exhausted", "no IP addresses available in range set 10.42.2.1-10.42.2.254")
	if strings.Contains(rs[0].Cause, "node  ") {
		t.Errorf("an empty node name: %s", rs[0].Cause)
	}
}

// The scheduler's volume node affinity conflict names no volume; the one the evidence
// holds is the one.
func TestAVolumeAffinityConflictNamesTheVolume(t *testing.T) {
	const paste = "I get: 0/1 nodes are available: 1 node(s) had volume node affinity conflict.\n\n" +
		"kubectl get pv reports-pv\nNAME         CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS   CLAIM                  STORAGECLASS    REASON   AGE\n" +
		"reports-pv   10Gi       RWO            Retain           Bound    shop/reports-claim     local-storage            25m\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"kubectl.txt": paste}), "volume-node-affinity-conflict", "PersistentVolume reports-pv")
}

// kubectl's own refusal of a kind the API server does not serve stays the client's
// request, though CNI agents vendor the same client words.
func TestAClientRefusalWithoutANodeStepStaysARequest(t *testing.T) {
	const paste = "error: resource mapping not found for name: \"main\" namespace: \"\" from \"STDIN\": no matches for kind \"Storefront\" in version \"shop.example.com/v1\"\nensure CRDs are installed first\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"kubectl.txt": paste}), "request-kind-not-found", "Storefront")
}

// Nodes an inter-pod affinity rules out and a node that has no room left: the shortage
// holds the pod, as it does beside a node selector.
func TestAShortageBesideAffinityIsTheShortage(t *testing.T) {
	const describe = "Name:         web-6d6784c5f-qqz4w\nNamespace:    shop\nStatus:       Pending\n" +
		"Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n" +
		"  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 1 Too many pods, 2 node(s) didn't match pod affinity rules.\n"
	rs := catalogRoots(t, map[string]string{"describe.txt": describe})
	wantOneRoot(t, rs, "scheduling-insufficient-resources", "Too many pods")
}
