package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// util-linux before 2.30 writes its mount error over four lines, and an event of the
// 1.3 era carries them as they are under its row: the cause quotes the whole error on
// one line, with the helper it names, and names the volume where the message does.
func TestAMountErrorItsProgramWrapped(t *testing.T) {
	const rows = "Events:\n" +
		"  FirstSeen\tLastSeen\tCount\tFrom\t\t\t\tSubobjectPath\tType\t\tReason\t\tMessage\n" +
		"  ---------\t--------\t-----\t----\t\t\t\t-------------\t--------\t------\t\t-------\n" +
		"  20s\t\t2s\t\t2\t{kubelet 10.1.2.12}\t\t\tWarning\t\tFailedMount\tUnable to mount volumes for pod \"wiki-x1y2z_default(0a1b2c3d-4ea6-11e6-8652-b827ebb55e21)\": Mount failed: exit status 32\n" +
		"Mounting arguments: 10.1.2.11:/srv/wiki /var/lib/kubelet/pods/0a1b2c3d-4ea6-11e6-8652-b827ebb55e21/volumes/kubernetes.io~nfs/pages nfs []\n" +
		"Output: mount: wrong fs type, bad option, bad superblock on 10.1.2.11:/srv/wiki,\n" +
		"       missing codepage or helper program, or other error\n" +
		"       (for several filesystems (e.g. nfs, cifs) you might\n" +
		"       need a /sbin/mount.<type> helper program)\n"
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantOneRoot(t, rs, "volume-nfs-mount-failed", "bad superblock on 10.1.2.11:/srv/wiki, missing codepage or helper program, or other error (for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program)", "no /sbin/mount.nfs helper")
	if len(rs) == 1 && strings.Contains(rs[0].Cause, "\n") {
		t.Errorf("cause %q spans lines", rs[0].Cause)
	}

	const named = "  Warning  FailedMount  30s (x8 over 90s)  kubelet  MountVolume.SetUp failed for volume \"shared-root\" : mount failed: exit status 32\n" +
		"Mounting command: mount\n" +
		"Mounting arguments: -t nfs 10.1.2.11:/export /var/lib/kubelet/pods/0a1b/volumes/kubernetes.io~nfs/shared-root\n" +
		"Output: mount: /var/lib/kubelet/pods/0a1b/volumes/kubernetes.io~nfs/shared-root: bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program.\n"
	rs = catalogRoots(t, map[string]string{"events.txt": named})
	wantOneRoot(t, rs, "volume-nfs-mount-failed", "(volume shared-root)", "no /sbin/mount.nfs helper")
}

// A kubelet error that quotes its pod as NAME_NAMESPACE(UID), pasted with that quote
// broken onto its own line, still names the pod and its container.
func TestAKubeletErrorsPodQuoteOnItsOwnLine(t *testing.T) {
	paste := "The pod does not start:\n\n```\n" +
		"Error: container has runAsNonRoot and image has non-numeric user (www), cannot verify user is non-root\n" +
		"(pod: \"portal-6d8f9c7b6-x2x9q_portal(4ee7c357-9d03-4069-a8ad-31908855abd1)\", container: portal-ui)\n" +
		"```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "config-run-as-non-root", "non-numeric user (www)", "portal-6d8f9c7b6-x2x9q", "container: portal-ui")
}

// Before 1.18 the scheduler names no taint key; a node manifest pasted beside its event
// (kubectl get node -o yaml | grep taints -A 3) names it, and the cause names it too.
func TestATaintKeyFromAPastedNodeManifest(t *testing.T) {
	paste := "Events:\n" +
		"  Type     Reason            Age                    From               Message\n" +
		"  ----     ------            ----                   ----               -------\n" +
		"  Warning  FailedScheduling  90s (x20 over 3m)  default-scheduler  0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate.\n" +
		"\n" +
		"kubectl get node -o yaml | grep taints -A 3\n\n" +
		"```\n" +
		"    taints:\n" +
		"    - effect: NoSchedule\n" +
		"      key: node.cloudprovider.kubernetes.io/uninitialized\n" +
		"      value: \"true\"\n" +
		"```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "scheduling-untolerated-taint", "taint node.cloudprovider.kubernetes.io/uninitialized")

	// A "key:" line with no taint's effect beside it is no taint.
	other := strings.Replace(paste, "    - effect: NoSchedule\n", "    - name: other\n", 1)
	rs = catalogRoots(t, map[string]string{"ticket.txt": other})
	wantRootWithout(t, rs, "node.cloudprovider.kubernetes.io/uninitialized", "cause %q names a key no taint has")

	// A taint written whole, as a node's describe shows it or kubectl taint sets it.
	events := paste[:strings.Index(paste, "kubectl get node")]
	for _, shown := range []string{"```\nTaints: node_purpose=infrastructure:NoSchedule\n```\n", "I ran `kubectl taint nodes --all node_purpose=infrastructure:NoSchedule` before the install.\n"} {
		rs = catalogRoots(t, map[string]string{"ticket.txt": "Every node is tainted:\n\n" + shown + "\n" + events})
		wantOneRoot(t, rs, "scheduling-untolerated-taint", "node_purpose=infrastructure:NoSchedule")
	}
}

// A scheduler's unnamed taint pasted beside a node's evictions for disk: the node's
// pressure put the taint there (node.kubernetes.io/disk-pressure), so the node's
// finding is the root and the refusal its consequence, as it is for a pod.
func TestAnUnnamedTaintYieldsToTheNodesPressure(t *testing.T) {
	paste := "Pods fail in CI:\n\n```\n" +
		"Message: The node was low on resource: ephemeral-storage\n" +
		"Warning  FailedScheduling  0/1 nodes are available: 1 node(s) had untolerated taint(s)\n" +
		"```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "node-pod-evicted", "ephemeral-storage")
}

// A Service without endpoints whose selector the ticket lists in its text, beside the
// pods with their labels (--show-labels): the cause names the label no pod carries.
func TestASelectorTheTicketListsAgainstThePodsLabels(t *testing.T) {
	files := map[string]string{
		"ticket.txt": "The service has no endpoints. But the service shop has selector includes:\n\n" +
			"    app.kubernetes.io/component: api\n    app.kubernetes.io/name: shop\n",
		"endpoints.txt": "# kubectl get endpoints shop\nNAME   ENDPOINTS   AGE\nshop   <none>      3m13s\n",
		"pods.txt":      "# kubectl get po --show-labels | grep shop\nshop-api-75769fb64-vr97f    1/1     Running   0          2m32s   app.kubernetes.io/name=shop,pod-template-hash=75769fb64\n",
	}
	rs := catalogRoots(t, files)
	wantOneRoot(t, rs, "service-selector-matches-nothing", "app.kubernetes.io/component: api, which no pod in the evidence carries (pod shop-api-75769fb64-vr97f has its other labels)")
	wantRootWithout(t, rs, "app.kubernetes.io/name: shop", "cause %q names a label the pod carries")
}

// runc before 1.1 found the program and could not execute it: its loader or its #!
// interpreter is missing, not the program; a name set off with its kind in one pair of
// backticks ("`api-server pod`") names the subject.
func TestAProgramWhoseInterpreterIsMissing(t *testing.T) {
	paste := "I built the image myself and now the `api-server pod` crashes, the log shows " +
		"`standard_init_linux.go:211: exec user process caused \"no such file or directory\"`\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "start-interpreter-missing", `exec user process caused "no such file or directory"`, "dynamic loader", "pod api-server")
}

// An eviction names the resource; the node's pressure condition the evidence shows
// beside it (its event, or the kubelet's refusal of a pod) is named too, and a
// NodeHasNoDiskPressure event names none.
func TestAnEvictionNamesTheNodesPressure(t *testing.T) {
	describe := "Events:\n" +
		"  Type     Reason                Age    From               Message\n" +
		"  ----     ------                ----   ----               -------\n" +
		"  Warning  EvictionThresholdMet  4m32s  kubelet, worker-2  Attempting to reclaim ephemeral-storage\n" +
		"  Normal   NodeHasDiskPressure   4m23s  kubelet, worker-2  Node worker-2 status is now: NodeHasDiskPressure\n"
	rs := catalogRoots(t, map[string]string{"describe-node.txt": describe})
	wantOneRoot(t, rs, "node-pod-evicted", "(NodeHasDiskPressure)", "ephemeral-storage")

	relieved := strings.Replace(describe, "NodeHasDiskPressure   4m23s  kubelet, worker-2  Node worker-2 status is now: NodeHasDiskPressure", "NodeHasNoDiskPressure 4m23s  kubelet, worker-2  Node worker-2 status is now: NodeHasNoDiskPressure", 1)
	rs = catalogRoots(t, map[string]string{"describe-node.txt": relieved})
	wantRootWithout(t, rs, "Pressure)", "cause %q names a pressure the node is relieved of", "ephemeral-storage")
}

// A command line written as one string is one argument to the runtime, which looks
// for a file of that whole name: the cause says so.
func TestACommandLineInOneString(t *testing.T) {
	row := `  Warning  Failed  12s (x3 over 40s)  kubelet  Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/bin/sh -c /start.sh": stat /bin/sh -c /start.sh: no such file or directory: unknown` + "\n"
	rs := catalogRoots(t, map[string]string{"events.txt": row})
	wantOneRoot(t, rs, "start-command-not-found", "“/bin/sh -c /start.sh” is one argument holding spaces", "[sh, -c")
	// A path without spaces is a file that is not there, no more.
	rs = catalogRoots(t, map[string]string{"events.txt": strings.ReplaceAll(row, "/bin/sh -c /start.sh", "/start.sh")})
	wantRootWithout(t, rs, "holding spaces", "cause %q speaks of spaces the command does not hold", "/start.sh does not exist")
}

// k9s draws its describe view in a box and wraps a long event message at a space onto
// the box's next line: the message reads whole again, its words apart.
func TestAnEventRowAK9sBoxWrapped(t *testing.T) {
	box := "│   Warning  InspectFailed  31m (x165 over 66m)  kubelet  Failed to inspect image \"\": rpc error: code = Unknown desc = short name mode is enforcing, but image name examplecorp/api-server:v2.3.0 returns  │\n" +
		"│ ambiguous list                                                                                                                                                                                          │\n"
	rs := catalogRoots(t, map[string]string{"events.txt": box})
	wantOneRoot(t, rs, "image-pull-short-name-unresolved", "examplecorp/api-server:v2.3.0 returns ambiguous list")
}

// The scheduler before 1.10 logs the pod it could not place and, on the next line of
// the same message, why: the two read as one, and the cause names the pod.
func TestTheOldSchedulersLogNamesThePod(t *testing.T) {
	log := "I0505 16:58:14.191626    2809 replication_controller.go:322] Observed updated replication controller web-1.\n" +
		"E0505 16:58:14.797428    2809 factory.go:583] Error scheduling shop web-1-pt7z6: pod (web-1-pt7z6) failed to fit in any node\n" +
		"fit failure summary on nodes : Insufficient memory (2); retrying\n" +
		"I0505 16:58:15.264982    2809 operation_executor.go:917] MountVolume.SetUp succeeded for volume \"token\"\n"
	rs := catalogRoots(t, map[string]string{"master.log": log})
	wantOneRoot(t, rs, "scheduling-insufficient-resources", "Insufficient memory (2)", "shop/web-1-pt7z6")
}

// A claim that stays unbound waits for its StorageClass's provisioner: the one the
// StorageClasses pasted beside the scheduler's message name is named; two are not.
func TestAnUnboundClaimNamesTheProvisioner(t *testing.T) {
	msg := "  Warning  FailedScheduling  17m  default-scheduler  0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.\n"
	sc := "kind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata:\n  name: fast\nprovisioner: example.io/old-provisioner\n"
	rs := catalogRoots(t, map[string]string{"events.txt": msg, "storageclass.yaml": sc})
	wantOneRoot(t, rs, "volume-pvc-unbound", "provisions with example.io/old-provisioner")

	two := sc + "---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata:\n  name: slow\nprovisioner: ebs.csi.aws.com\n"
	rs = catalogRoots(t, map[string]string{"events.txt": msg, "storageclass.yaml": two})
	wantRootWithout(t, rs, "provisions with", "cause %q names one of two provisioners", "is not bound")
}

// wantRootWithout fails t unless the first root's cause holds every text of present
// and not absent; why says what holding it would mean, with %q for the cause.
func wantRootWithout(t *testing.T, rs []*analyze.Finding, absent, why string, present ...string) {
	t.Helper()
	if c := rootCauseHas(t, rs, present...); strings.Contains(c, absent) {
		t.Errorf(why, c)
	}
}

// A Go program's panic says what it was doing by the line it logged right before (here
// in zap's console format, its message alone); a panic at the top of its log has none.
func TestAPanicNamesWhatTheProgramLoggedBefore(t *testing.T) {
	log := "2022-09-09T16:22:38.874Z\tINFO\tcontrollers/tls.go:39\tEnsuring the certificate is configured\t{\"Cluster\": \"db\"}\n" +
		"panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n" +
		"\tpanic: runtime error: invalid memory address or nil pointer dereference\n" +
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x13d202e]\n"
	rs := catalogRoots(t, map[string]string{"logs.txt": log})
	wantOneRoot(t, rs, "runtime-go-panic", "right after it logged “Ensuring the certificate is configured”")

	rs = catalogRoots(t, map[string]string{"logs.txt": log[strings.Index(log, "panic:"):]})
	wantRootWithout(t, rs, "right after it logged", "cause %q names a line before the log's first")
}

// The scheduler's host port refusal names no port; the manifest pasted beside it does,
// and so does its rolling update's surge, which starts the new pod beside the old one
// that holds the port. Several ports are all named; a surge of zero is not.
func TestAHostPortRefusalNamesThePortsAndTheSurge(t *testing.T) {
	paste := "After the patch the new controller pod stays Pending:\n\n```\n" +
		"spec:\n  strategy:\n    rollingUpdate:\n      maxSurge: 1\n  template:\n    spec:\n      containers:\n" +
		"        - name: controller\n          ports:\n            - containerPort: 5432\n              hostPort: 5432\n" +
		"```\n\n```\nEvents:\n" +
		"  Type     Reason            Age   From               Message\n" +
		"  ----     ------            ----  ----               -------\n" +
		"  Warning  FailedScheduling  31s   default-scheduler  0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "scheduling-host-port-conflict", "host port (hostPort: 5432)", "that maxSurge: 1 starts the new pod beside")

	two := strings.ReplaceAll(paste, "maxSurge: 1", "maxSurge: 0")
	two = strings.Replace(two, "              hostPort: 5432\n", "              hostPort: 5432\n            - containerPort: 80\n              hostPort: 80\n", 1)
	rs = catalogRoots(t, map[string]string{"ticket.txt": two})
	wantOneRoot(t, rs, "scheduling-host-port-conflict")
	wantRootWithout(t, rs, "maxSurge", "a surge of zero is named: %q", "(hostPort: 5432, hostPort: 80)")
}

// etcd's NOSPACE alarm names no size; the quota flag the ticket sets does, and the flag
// named alone beside it is the same setting.
func TestAnEtcdSpaceAlarmNamesTheQuotaTheTicketSets(t *testing.T) {
	paste := "I lowered `--quota-backend-bytes` in the etcd manifest to speed this up: `--quota-backend-bytes=402653184`.\n\n" +
		"After a while the loop prints: `error: Scaling the resource failed with: etcdserver: mvcc: database space exceeded; Current resource version 6060`\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "request-etcd-space-exceeded", "space quota (--quota-backend-bytes=402653184)")

	rs = catalogRoots(t, map[string]string{"ticket.txt": strings.ReplaceAll(paste, "=402653184", "")})
	wantOneRoot(t, rs, "request-etcd-space-exceeded", "space quota (--quota-backend-bytes)")
}

// A Secret an install step was to create, in a namespace that did not exist yet when
// it ran: the pod's refusal names the Secret, the step's own refusal the namespace.
func TestAMissingSecretBesideTheNamespaceItsStepMissed(t *testing.T) {
	files := map[string]string{
		"deploy.log": "Generating Kiali Credentials\nError from server (NotFound): namespaces \"istio-system\" not found\n",
		"events.txt": "Events:\nType     Reason  Age                     From                     Message\n----     ------  ----                    ----                     -------\n" +
			"Warning  Failed  7m28s (x3267 over 11h)  kubelet, docker-desktop  Error: secret \"kiali\" not found\n",
	}
	rs := catalogRoots(t, files)
	wantOneRoot(t, rs, "config-secret-key-missing", `secret "kiali" not found`, "namespace istio-system did not exist")

	delete(files, "deploy.log")
	rs = catalogRoots(t, files)
	wantRootWithout(t, rs, "did not exist", "cause %q names a namespace no evidence shows missing", `secret "kiali" not found`)
}

// A board's kernel build starts with a letter ("5.15.32-v7l+"), and modprobe names its
// release in the module path: a module or platform cause names the kernel; an image's
// build that only looks like one ("3.4.5-alpine") is no kernel.
func TestAKernelBuildOfABoardIsNamed(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"modprobe.txt": "modprobe: FATAL: Module rbd not found in directory /lib/modules/4.4.126-rockchip-ayufan-239\n"})
	wantOneRoot(t, rs, "volume-csi-modprobe-failed", "module rbd", "(kernel 4.4.126-rockchip-ayufan-239)")

	nodes := "NAME          STATUS   ROLES                  AGE   VERSION        INTERNAL-IP      EXTERNAL-IP   OS-IMAGE                           KERNEL-VERSION   CONTAINER-RUNTIME\n" +
		"raspberrypi   Ready    control-plane,master   94m   v1.22.7+k3s1      <none>        Raspbian GNU/Linux 11 (bullseye)   5.15.32-v7l+     containerd://1.5.9-k3s1\n"
	pull := "Failed to pull image \"quay.io/cilium/operator-generic:v1.11.3\": rpc error: code = NotFound desc = failed to pull and unpack image \"quay.io/cilium/operator-generic:v1.11.3\": no match for platform in manifest: not found\n"
	rs = catalogRoots(t, map[string]string{"ticket.txt": pull + "\n" + nodes})
	wantOneRoot(t, rs, "image-pull-platform-missing", "(the node's kernel is 5.15.32-v7l+)")

	rs = catalogRoots(t, map[string]string{"ticket.txt": pull + "\nThe sidecar runs `3.4.5-alpine`.\n"})
	wantRootWithout(t, rs, "kernel", "an image's build is named as a kernel: %q", "no match for platform")
}

// A missing ConfigMap must exist in the pod's namespace: the cause names it when the
// evidence does (the kubelet's quote of the pod as NAME_NAMESPACE(UID) in a 1.3 event),
// never the namespace an import guessed.
func TestAMissingConfigMapNamesThePodsNamespace(t *testing.T) {
	rows := "Events:\n" +
		"  FirstSeen     LastSeen        Count   From                    SubobjectPath   Type            Reason          Message\n" +
		"  ---------     --------        -----   ----                    -------------   --------        ------          -------\n" +
		"  18m           18m             1       {default-scheduler }                    Normal          Scheduled       Successfully assigned init-mdavi to 10.3.9.6\n" +
		"  18m           8s              90      {kubelet 10.3.9.6}                      Warning         FailedMount     Unable to mount volumes for pod \"init-mdavi_openstack-system(0731e1f9-44d2-11e6-85f6-f8bc1206b7d0)\": configmaps \"init-scripts\" not found\n"
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantOneRoot(t, rs, "volume-configmap-missing", "cannot mount it: the pod's namespace is openstack-system")

	guessed := "  Warning  FailedMount  2m    kubelet  MountVolume.SetUp failed for volume \"cfg\" : configmap \"app-config\" not found\n"
	rs = catalogRoots(t, map[string]string{"events.txt": guessed})
	wantRootWithout(t, rs, "namespace default", "a guessed namespace is stated: %q", "does not exist in the pod's namespace, so")
}

// A Gatekeeper before 3.4 names no constraint in its denial; the constraint the ticket
// pastes beside it does, and so does a Kyverno policy. A constraint the denial already
// names is not named twice.
func TestAWebhookDenialNamesThePastedPolicy(t *testing.T) {
	row := "  Warning  FailedCreate  18s (x23 over 4m)  statefulset-controller  create Pod gk-1 in StatefulSet gk failed error: admission webhook \"validation.gatekeeper.sh\" denied the request: you must provide labels: {\"gatekeeper\"}\n"
	constraint := "apiVersion: constraints.gatekeeper.sh/v1alpha1\nkind: K8sRequiredLabels\nmetadata:\n  name: pod-must-have-gk\nspec:\n  parameters:\n    labels: [\"gatekeeper\"]\n"
	rs := catalogRoots(t, map[string]string{"constraint.yaml": constraint, "events.txt": row})
	wantOneRoot(t, rs, "admission-webhook-denied", "constraint K8sRequiredLabels pod-must-have-gk")

	policy := "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: require-labels\nspec:\n  validationFailureAction: Enforce\n"
	rs = catalogRoots(t, map[string]string{"policy.yaml": policy, "events.txt": row})
	wantOneRoot(t, rs, "admission-webhook-denied", "policy ClusterPolicy require-labels")

	named := strings.Replace(row, "denied the request: you", "denied the request: [pod-must-have-gk] you", 1)
	rs = catalogRoots(t, map[string]string{"constraint.yaml": constraint, "events.txt": named})
	wantRootWithout(t, rs, "constraint K8sRequiredLabels", "a constraint the denial names is named again: %q", "[pod-must-have-gk]")
}

// A ticket that names its pod only as a sentence's subject ("argocd-server pod is
// crashing") and pastes a probe's message: the cause names that pod. A compound word
// before "pod" names none, and a paste that shows its pods leaves them to say it.
func TestAPodNamedAsTheSentencesSubject(t *testing.T) {
	paste := "argocd-server pod is crashing and restarting the container. Error shown in events is below\n" +
		"`Liveness probe failed: Get \"http://10.0.0.7:8080/healthz?full=true\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`\n"
	rs := catalogRoots(t, map[string]string{"ticket.md": paste})
	wantOneRoot(t, rs, "probe-liveness-restarts", "Client.Timeout exceeded", "pod argocd-server")

	rs = catalogRoots(t, map[string]string{"ticket.md": strings.Replace(paste, "argocd-server pod is", "The multi-container pod is", 1)})
	wantRootWithout(t, rs, "multi-container", "a compound word is named as a pod: %q", "Client.Timeout exceeded")

	// The pods a sentence counts are named too.
	counted := strings.Replace(paste, "argocd-server pod is crashing", "After the upgrade I have 3 argocd-server pods and two are crashing", 1)
	rs = catalogRoots(t, map[string]string{"ticket.md": counted})
	wantOneRoot(t, rs, "probe-liveness-restarts", "Client.Timeout exceeded", "pod argocd-server")
}

// The autoscaler's refusal names no autoscaler; its event rows do, and the cause names
// it ({object}, the line's object).
func TestAnAutoscalerEventNamesItsAutoscaler(t *testing.T) {
	rows := "> k get events\n" +
		"0s          Warning   FailedGetResourceMetric        horizontalpodautoscaler/podinfo-primary   missing request for cpu\n"
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantOneRoot(t, rs, "controller-hpa-missing-request", "the HorizontalPodAutoscaler podinfo-primary reports missing request for cpu")
}

// A controller's pod refused at admission has no name yet, only its generateName
// ("pods \"web-5d8f9c7b6-\" is forbidden", or with the "..." a ticket puts after it):
// the cause names whose pods they are.
func TestARefusedPodsGenerateNameSaysWhose(t *testing.T) {
	for _, refused := range []string{`openshift-gitops-dex-server-...`, `openshift-gitops-dex-server-`} {
		line := `Error creating: pods "` + refused + `" is forbidden: failed quota: openshift-gitops-compute-resources: must specify cpu,limits.cpu,limits.memory,memory` + "\n"
		rs := catalogRoots(t, map[string]string{"events.txt": line})
		wantOneRoot(t, rs, "admission-quota-resources-required", "(pods openshift-gitops-dex-server-…)")
	}
}

// A quota refusal pasted without its ResourceQuota: the cause reads the numbers from the
// refusal and quotes its own words after them, as a ticket does.
func TestAQuotaRefusalQuotesItsNumbers(t *testing.T) {
	row := "26m        26m         1         web-544d45c8d5   ReplicaSet               Warning   FailedCreate        replicaset-controller   " +
		"Error creating: pods web-544d45c8d5-q5mll is forbidden: exceeded quota: namespace-quota, requested: requests.cpu=20m, used: requests.cpu=40m, limited: requests.cpu=50m\n"
	rs := catalogRoots(t, map[string]string{"events.txt": row})
	wantOneRoot(t, rs, "admission-quota-exceeded", "40m of its 50m requests.cpu", "used: requests.cpu=40m, limited: requests.cpu=50m")
}

// A Pending pod known from a get row and its events asks for what the requests block the
// ticket pastes says; without one, no request is said, never a zero the evidence lacks.
func TestInsufficientResourcesNamesThePastedRequests(t *testing.T) {
	paste := "Scaling to 4 nodes, the newest pod is stuck:\n\n```\ndb-3                         0/1     Pending   0          4m15s\n```\n\nand shows:\n\n```\nEvents:\n" +
		"  Type     Reason            Age                  From               Message\n" +
		"  ----     ------            ----                 ----               -------\n" +
		"  Warning  FailedScheduling  65s (x6 over 5m19s)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory.\n```\n"
	block := "\nThe default resources:\n\n```\n  resources:\n    requests:\n      cpu: \"2\"\n      memory: \"8Gi\"\n    limits:\n      cpu: \"2\"\n      memory: \"8Gi\"\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste + block})
	wantOneRoot(t, rs, "scheduling-insufficient-resources", "its requests (cpu 2, memory 8Gi)")

	rs = catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantOneRoot(t, rs, "scheduling-insufficient-resources", "no node has room for the pod")
	wantRootWithout(t, rs, "cpu 0", "cause %q names a request the evidence does not show", "Insufficient cpu")
}

// A crash-looping container whose log the evidence lacks is said with what it was told
// to run: its arguments are the first suspect (an address without its port).
func TestACrashWithoutItsLogNamesTheArguments(t *testing.T) {
	describe := "Name:\t\tdash-1964089633-n5g21\nNamespace:\tkube-system\nStatus:\t\tRunning\nContainers:\n  dash:\n" +
		"    Image:\t\texample/dashboard:v1.5.1\n    Args:\n      --apiserver-host=http://10.254.0.1\n" +
		"    State:\t\tWaiting\n      Reason:\t\tCrashLoopBackOff\n    Last State:\t\tTerminated\n      Reason:\t\tError\n      Exit Code:\t1\n" +
		"    Ready:\t\tFalse\n    Restart Count:\t6\n"
	rs := catalogRoots(t, map[string]string{"describe.txt": describe})
	wantOneRoot(t, rs, "runtime-crash-exit", `it runs with args "--apiserver-host=http://10.254.0.1"`)
}

// A panic pasted in a ticket under the reporter's sentence, its lines read as one
// paragraph: what the program logged before it is the text before "panic:", never the
// sentence above the paste.
func TestAPanicInATicketNamesTheLineBeforeNotTheSentence(t *testing.T) {
	ticket := "After the helm installation the pods are not coming up and go into CrashLoopBackOff with the below error.\n" +
		"`2024/07/09 08:02:50 [agent] [inet] Cannot attach tracepoint: neither debugfs nor tracefs are mounted\n" +
		"panic: runtime error: invalid memory address or nil pointer dereference\n" +
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1f5280f]`\n"
	rs := catalogRoots(t, map[string]string{"message.txt": ticket})
	wantRootWithout(t, rs, "helm installation", "cause %q names the reporter's sentence as the program's line", "neither debugfs nor tracefs are mounted")
}

// A describe cut after an init container's "Reason: Error", before its exit code and
// the app containers: the init container fails (it does not exit 0), and no count or
// list the evidence lacks is said.
func TestAnInitFailureCutBeforeItsExitCode(t *testing.T) {
	describe := "Name:         web-fd797d47-rgk49\nNamespace:    default\nStatus:       Running\n" +
		"Init Containers:\n  proxy-init:\n    Image:         example/proxy:1.4.2\n" +
		"    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n"
	rs := catalogRoots(t, map[string]string{"describe.txt": describe})
	wantOneRoot(t, rs, "start-init-container-failed", "init container proxy-init exits with an error", "cut before its exit code")
	wantRootWithout(t, rs, "0 restart", "cause %q counts restarts the evidence does not show", "waits in CrashLoopBackOff")
}

// A describe excerpt cut below its container's header: the container the ticket's
// sentence names in a code span is said, marked as the text's word, not the output's.
func TestAnUnnamedContainerTakesTheNameTheTicketGives(t *testing.T) {
	ticket := "Our workers crash from out-of-memory in the `wait-ready` init-container, in an infinite back-off loop.\n\n```\n" +
		"    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Ready:          False\n    Restart Count:  4\n" +
		"    Limits:\n      cpu:     200m\n      memory:  256Mi\n```\n"
	rs := catalogRoots(t, map[string]string{"message.txt": ticket})
	wantOneRoot(t, rs, "runtime-oom-killed", "the ticket's text names wait-ready", "256Mi")
}

// A deploy tool's log that ends with Helm's refusal: its last words are a refused
// request, and no container stopped for them.
func TestARefusedUpgradeAtALogsEndIsNoCrash(t *testing.T) {
	ticket := "Output of `helm version`:\n```\nClient: &version.Version{SemVer:\"v2.12.3\"}\nServer: &version.Version{SemVer:\"v2.13.1\"}\n```\n\n" +
		"If I've got a DaemonSet that uses a particular PriorityClass, then Helm install/upgrade fails with:\n```\n" +
		"2019/06/19 07:36:50 Command returned with exit code: . And error message: Error: UPGRADE FAILED: no PriorityClass with the name \"node-critical-logs\" found\n```\n"
	for _, r := range catalogRoots(t, map[string]string{"message.txt": ticket}) {
		if r.Rule == "runtime-crash-exit" {
			t.Errorf("root %s: a refused upgrade read as a container's crash: %s", r.Rule, r.Cause)
		}
	}
}

// A platform the ticket sets its own against ("Unlike Fargate, …") is not its setting.
func TestAPlatformSetApartIsNoSetting(t *testing.T) {
	const ticket = "Our cluster runs on GKE. Unlike Fargate, the nodes are ours to see.\n\n```\n" +
		`Error from server (Forbidden): pods is forbidden: User "dev@example.com" cannot list resource "pods" in API group "" in the namespace "shop"` + "\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": ticket})
	wantRootWithout(t, rs, "Fargate", "the setting names the platform the ticket sets apart: %s", "GKE")
}

// The kubelet's time-out waiting for a pod's volumes follows from the attach failure
// the pod's events give: the cause names it.
func TestAMountTimeoutNamesTheAttachFailure(t *testing.T) {
	const events = "Events:\n" +
		"  Type     Reason              Age   From                     Message\n" +
		"  ----     ------              ----  ----                     -------\n" +
		"  Warning  FailedAttachVolume  4m    attachdetach-controller  AttachVolume.Attach failed for volume \"pvc-1f2e\" : attachment timeout for volume vol-0a1b2c3d4e5f60718\n" +
		"  Warning  FailedMount         2m    kubelet                  Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data kube-api-access-x1y2z]: timed out waiting for the condition\n"
	rootCauseHas(t, catalogRoots(t, map[string]string{"describe.txt": events}), "attachment timeout for volume vol-0a1b2c3d4e5f60718")
}

// An HTML page a reporter fetched with curl inside a failing container: its markup
// ("<title>403 Forbidden</title>") is what the server sent, never the error the
// container stops at.
func TestAPagesMarkupIsNoErrorLine(t *testing.T) {
	const ticket = "Since the upgrade the container fails to start and keeps restarting.\n\n```\n" +
		"$ kubectl exec -it web-6d9f8-x2x4q -- curl localhost\n<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>403 Forbidden</title>\n</head><body>\n<h1>Forbidden</h1>\n</body></html>\n```\n"
	for _, f := range catalogRoots(t, map[string]string{"ticket.txt": ticket}) {
		if strings.Contains(f.Cause, "<title>") || strings.Contains(f.Cause, "<h1>") {
			t.Errorf("a page's markup read as trouble: %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
	}
}
