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

// A pod whose command ends by itself, pasted as its manifest (without a namespace) and
// its get row: under restartPolicy Always the kubelet restarts it into CrashLoopBackOff
// though nothing failed. The finding names the command; a base image run without one
// runs its shell, which ends at once; a command that keeps running, or a pod whose
// restartPolicy lets it end, is no such finding.
func TestACommandThatEndsIsRestartedUnderAlways(t *testing.T) {
	manifest := func(extra string) string {
		return "```bash\n$ cat testpod.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod-ubuntu\nspec:\n" + extra +
			"  containers:\n  - name: container-ubuntu\n    image: ubuntu:20.04\n    command: [\"/bin/sleep\", \"30s\"]\n\n" +
			"$ kubectl get pods test-pod-ubuntu\nNAME              READY   STATUS             RESTARTS         AGE\n" +
			"test-pod-ubuntu   0/1     CrashLoopBackOff   10 (2m15s ago)   34m\n```\n"
	}
	rs := catalogRoots(t, map[string]string{"ticket.md": manifest("")})
	wantOneRoot(t, rs, "runtime-crash-exit", "command /bin/sleep 30s ends by itself", "restartPolicy Always", "10 restart(s)")

	bare := strings.Replace(manifest(""), "    command: [\"/bin/sleep\", \"30s\"]\n", "", 1)
	rs = catalogRoots(t, map[string]string{"ticket.md": bare})
	wantOneRoot(t, rs, "runtime-crash-exit", "(none: ubuntu:20.04 runs its shell)")

	long := strings.Replace(manifest(""), `"30s"`, `"infinity"`, 1)
	rs = catalogRoots(t, map[string]string{"ticket.md": long})
	wantRootWithout(t, rs, "ends by itself", "a command that keeps running is said to end: %q")

	rs = catalogRoots(t, map[string]string{"ticket.md": manifest("  restartPolicy: OnFailure\n")})
	wantRootWithout(t, rs, "ends by itself", "a pod that may end is said to be restarted: %q")

	describe := "Name:         toolbox-7d9f8c6b5-x2x9q\nNamespace:    default\nStatus:       Running\nContainers:\n  toolbox:\n" +
		"    Image:          busybox:1.36\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n" +
		"    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0\n    Ready:          False\n    Restart Count:  7\n"
	rs = catalogRoots(t, map[string]string{"describe.txt": describe})
	wantOneRoot(t, rs, "runtime-crash-exit", "container toolbox exits with code 0 (Completed)", "7 restart(s)")
}

// A ticket that says its pod crash-loops and pastes only the error its log shows: the
// container exits at that error, which no rule knows, rather than whatever failure the
// sentence's words share most with ("invalid character" with an invalid object). The
// reporter's other sentences are not read as the log. Without the sentence that says it
// crash-loops, the error stays trouble no rule explains.
func TestAPastedLogErrorOfACrashLoopingPod(t *testing.T) {
	paste := "k8s helm chart installation fails with latest version with default configuration\n\n" +
		"## Current Behavior\nminio pod crashloops with error message:\n```\n" +
		"ERROR Unable to initialize config system: invalid character '@' looking for beginning of value\n```\n\n" +
		"## Context\nUnable to deploy latest version of minio\n"
	rs := catalogRoots(t, map[string]string{"ticket.md": paste})
	wantOneRoot(t, rs, "runtime-crash-exit", "crash-loops", "“ERROR Unable to initialize config system: invalid character '@' looking for beginning of value”")

	rs = catalogRoots(t, map[string]string{"ticket.md": strings.Replace(paste, "minio pod crashloops with error message:", "The pod prints:", 1)})
	for _, f := range rs {
		if f.Rule == "runtime-crash-exit" {
			t.Errorf("a log error without a crash said is read as one: %s", f.Cause)
		}
	}
}

// A pod a get row shows in CrashLoopBackOff, with no exit code or reason, and the error
// its program logged pasted beside it (a logfmt line at level=error): the container
// exits at that error. A line at level=info that counts failures is no error of its own.
func TestACrashLoopingRowAndItsProgramsErrorLine(t *testing.T) {
	paste := "POD Crashing:  Back-off restarting failed container\n\n" +
		"Error: \"level=error ts=2019-05-17T12:36:27.607054242Z caller=main.go:46 msg=\"error loading config\" filename=/etc/loki/loki.yaml err=\"parsing time \\\"0\\\" as \\\"2006-01-02\\\"\"\n\n" +
		"kubectl get pods -n prometheus\n" +
		"NAME                                             READY   STATUS             RESTARTS   AGE\n" +
		"loki-7479978bcb-ffxc9                            0/1     CrashLoopBackOff   9          23m\n" +
		"loki-promtail-2q972                              1/1     Running            0          1h\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantFirstRoot(t, rs, "runtime", "runtime-crash-exit", "/etc/loki/loki.yaml", "parsing time")

	info := "```\ntime=\"2024-04-13T07:38:47Z\" level=info msg=\"Endpoints restored\" failed=4 restored=23 subsys=daemon\n```\n"
	for _, f := range catalogRoots(t, map[string]string{"logs.txt": info}) {
		if strings.Contains(f.Cause, "Endpoints restored") {
			t.Errorf("an info line is read as trouble: %s", f.Cause)
		}
	}
}

// A ticket whose body quotes a program's error chain, the chain saying the program
// gave up starting, beside the program's log at info level: the error is why its
// container exits, and the quiet log's counts ("failed=4") are neither trouble nor a
// reason to read the body as a description of another stage's failure.
func TestAStartErrorChainIsWhyTheContainerExits(t *testing.T) {
	body := "### What happened?\n\nAfter upgrading the agent from 2.4.1 to 2.4.2 the pod started failing with error:\n\n" +
		"```\nfailed to start: agent creation failed: error while initializing agent: failed while preparing routes: listing routing rules: address family not supported by protocol\n```\n\n" +
		"### Kernel Version\n\n6.1.82-custom\n"
	log := "```\ntime=\"2024-04-13T07:38:47Z\" level=info msg=\"Endpoints restored\" failed=4 restored=23 subsys=agent\n" +
		"time=\"2024-04-13T07:38:47Z\" level=info msg=\"Addressing information:\" subsys=agent\n```\n"
	rs := catalogRoots(t, map[string]string{"message.txt": body, "logs.txt": log})
	wantOneRoot(t, rs, "runtime-crash-exit", "gives up as it starts", "listing routing rules: address family not supported by protocol")

	// A chain that does not say the program gave up starting is not read as its exit.
	other := strings.Replace(body, "failed to start: agent creation failed", "error syncing routes: route lookup failed", 1)
	rs = catalogRoots(t, map[string]string{"message.txt": other, "logs.txt": log})
	wantRootWithout(t, rs, "gives up as it starts", "a chain that does not say the program gave up starting is read as its exit: %q")
	if len(rs) == 0 || rs[0].Stage == analyze.StageVolume {
		t.Fatalf("want the quoted chain's trouble, not a description read from the body's words: %s %s: %s", rs[0].Stage, rs[0].Rule, rs[0].Cause)
	}
}

// A CSI node plugin that cannot create a volume's mount path on a read-only root mounts
// another kubelet directory than the node's kubelet uses: the finding names the path,
// and the kubelet directory the ticket's install command set, which the reader checks
// against what the chart reads. A reporter's sentence naming the same error with its
// FailedMount is the mount's, not a container's write.
func TestAKubeletDirectoryTheNodePluginDoesNotMount(t *testing.T) {
	ticket := "Pods with a claim of the NFS class fail to start due to FailedMount with error `mkdir /var/lib/k0s: read-only file system`\n\n" +
		"```\nMountVolume.SetUp failed for volume \"pvc-1d2c\" : rpc error: code = Internal desc = mkdir /var/lib/k0s: read-only file system\n```\n\n" +
		"```sh\nhelm upgrade --install -n kube-system csi-driver-nfs csi-driver-nfs/csi-driver-nfs --set node.kubeletPath=\"/var/lib/k0s/kubelet\"\n```\n"
	rs := catalogRoots(t, map[string]string{"message.txt": ticket})
	wantOneRoot(t, rs, "volume-csi-kubelet-dir-mismatch", "mkdir /var/lib/k0s: read-only file system", "the install set node.kubeletPath=/var/lib/k0s/kubelet")
	// Without the mount's own message, the reporter's sentence is still no container's write.
	rs = catalogRoots(t, map[string]string{"message.txt": strings.SplitN(ticket, "\n", 2)[0] + "\n"})
	wantRootWithout(t, rs, "readOnlyRootFilesystem is set", "a FailedMount named in prose is read as a container's write: %q")
}

// A CSI driver not registered on a node, beside `kubectl get daemonsets` rows where its
// node plugin is on fewer nodes than another DaemonSet: the finding says so, the nodes it
// leaves out being where the driver is missing. With its plugin on every node, or with
// no plugin to tell, nothing is added.
func TestANodePluginOnFewerNodes(t *testing.T) {
	msg := "Pods with tolerations stay ContainerCreating:\n\nMountVolume.MountDevice failed for volume \"pvc-9\" : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name fsx.csi.aws.com not found in the list of registered CSI drivers\n"
	rows := func(plugin string) string {
		return "```\nNAME           DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR            AGE\n" +
			"kube-proxy     9         9         9       9            9           <none>                   300d\n" +
			plugin + "\n```\n"
	}
	short := "fsx-csi-node   6         6         6       6            6           kubernetes.io/os=linux   2h"
	rs := catalogRoots(t, map[string]string{"message.txt": msg, "daemonsets.txt": rows(short)})
	wantOneRoot(t, rs, "volume-csi-driver-missing", "DaemonSet fsx-csi-node is on 6 nodes, kube-proxy on 9")
	whole := "fsx-csi-node   9         9         9       9            9           kubernetes.io/os=linux   2h"
	rs = catalogRoots(t, map[string]string{"message.txt": msg, "daemonsets.txt": rows(whole)})
	wantRootWithout(t, rs, "does not run on every node", "a node plugin on every node is said to miss some: %q")
}

// A paste cut at a terminal's width, the cuts inside words, is read as the message it
// was: the lines of the widest length continue on the next without a space.
func TestAMessageCutAtTheTerminalWidth(t *testing.T) {
	msg := `Error from server (Forbidden): error when creating "deploy.yaml": deployments.apps is forbidden: User "system:serviceaccount:ci:deployer-bot" cannot create resource "deployments" in API group "apps" in the namespace "payments-production"`
	const width = 80
	var cut []string
	for len(msg) > width {
		cut = append(cut, msg[:width])
		msg = msg[width:]
	}
	cut = append(cut, msg)
	rs := catalogRoots(t, map[string]string{"apply.txt": strings.Join(cut, "\n") + "\n"})
	wantOneRoot(t, rs, "request-forbidden", "system:serviceaccount:ci:deployer-bot", "payments-production")
}

// The kubelet's pod worker quotes the environment's error once more ("… with
// CreateContainerConfigError: \"secret \\\"x\\\" not found\""): the finding reads it, and
// says the message as the kubelet wrote it, without the escapes of the quoting.
func TestAPodWorkerQuotedConfigError(t *testing.T) {
	line := `E0301 10:00:00.000000    1234 pod_workers.go:191] Error syncing pod 5f1d, skipping: failed to "StartContainer" for "api" with CreateContainerConfigError: "secret \"orders-db-credentials\" not found"` + "\n"
	rs := catalogRoots(t, map[string]string{"kubelet.log": line})
	wantOneRoot(t, rs, "config-secret-key-missing", `environment: secret "orders-db-credentials" not found`)
}

// A message a reporter broke before its quoted value ("failed calling webhook" /
// "\"policy.example.com\": … context deadline exceeded") is read whole.
func TestAMessageBrokenBeforeItsQuotedValue(t *testing.T) {
	paste := "The release was stuck mid-upgrade, with its ReplicaSet emitting:\n\n```\nFailedCreate: Internal error occurred: failed calling webhook\n\"validate.policy.example.com\": ... context deadline exceeded\n```\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"message.txt": paste}), "admission-webhook-unreachable", "validate.policy.example.com")
}

// A pasted status without its spec names the image its container ran: the finding about
// a command the image lacks says which image.
func TestAStatusWithoutItsSpecNamesTheImage(t *testing.T) {
	status := "```\n  - containerID: docker://93d0bf9569b0\n    image: registry.example.com/team/api:v2.3.0\n    lastState:\n      terminated:\n        exitCode: 127\n" +
		"        message: |\n          oci runtime error: container_linux.go:247: starting container process caused \"exec: \\\"/api-server\\\": stat /api-server: no such file or directory\"\n" +
		"        reason: ContainerCannotRun\n```\n"
	rs := catalogRoots(t, map[string]string{"pod-status.txt": status})
	wantOneRoot(t, rs, "start-command-not-found", "/api-server", "registry.example.com/team/api:v2.3.0")
}

// The runtime's refusal of an environment variable names none; the one the evidence sets
// from a Secret, or on a command line the ticket runs by hand, is the one to look at.
func TestAnInvalidEnvironmentNamesTheVariableTheTicketSets(t *testing.T) {
	files := map[string]string{
		"error.txt":   "Error: failed to create containerd task: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: setenv: invalid argument: unknown\n",
		"message.txt": "It runs fine by hand:\n\n```\nAPP_SIGNING_KEY=\"q3CkwAehNdhRebMgPC6p\" ./server --port 8080\n```\n",
	}
	wantOneRoot(t, catalogRoots(t, files), "start-env-invalid", "setenv: invalid argument", "is APP_SIGNING_KEY")
}

// The kubelet's "failed to prepare subPath" names the volumeMount and the container; of a
// reporter's quote of it and the event row about the pod, the event row's reading is
// the finding.
func TestASubPathTheKubeletCannotPrepare(t *testing.T) {
	files := map[string]string{
		"events.txt":  "Warning  Failed  41s  kubelet, node-7  Error: failed to prepare subPath for volumeMount \"proxy-conf\" of container \"envoy\"\n",
		"message.txt": "container start failed: CreateContainerConfigError: failed to prepare subPath for volumeMount \"conf\" of container \"test\"\n",
	}
	rs := catalogRoots(t, files)
	if len(rs) == 0 || rs[0].Rule != "config-subpath-prepare-failed" || !strings.Contains(rs[0].Cause, "proxy-conf") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want the event row's subPath finding first")
	}
}

// A program's exception pasted alone, at the end of its traceback, is the program's:
// the trouble is at the runtime stage, not at the node a bare pasted line defaults to,
// and a sentence's "amount" holds no volume mount.
func TestAPastedExceptionIsTheProgramsNotTheNodes(t *testing.T) {
	paste := "Deploying it works for some amount of time and then always fails with this error.\n" +
		"```\n" +
		"  File \"/srv/app/config.py\", line 176, in get_env_port\n" +
		"    raise ValueError(\n" +
		"ValueError: Invalid value for environment variable APP_PORT: tcp://10.0.0.12:6006. Value must be an integer.\n" +
		"```\n"
	rs := catalogRoots(t, map[string]string{"message.txt": paste})
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	for _, f := range rs {
		if f.Stage != analyze.StageRuntime {
			for _, g := range rs {
				t.Logf("root %s %s: %s", g.Stage, g.Rule, g.Cause)
			}
			t.Fatalf("a root at %s, want every root at the runtime stage", f.Stage)
		}
	}
}

// A C++ program's glog line at its error level, with the year in its date ("E20221021
// 06:17:08.173208 1 main.cc:127] … Exiting..."), is the program's own account of its exit
// in a pasted `kubectl logs`, whatever its words: not "no finding".
func TestAGlogErrorLineIsWhyTheContainerExits(t *testing.T) {
	paste := "[root@m-1 ~]# kubectl logs -n cache store-0\n" +
		"I20221021 06:17:08.168525     1 init.cc:56] store running in opt mode.\n" +
		"I20221021 06:17:08.173138     1 proactor_pool.cc:66] Running 16 io threads\n" +
		"E20221021 06:17:08.173208     1 main.cc:127] Max memory is less than 256MB per thread. Exiting...\n"
	rs := catalogRoots(t, map[string]string{"logs.txt": paste})
	if len(rs) == 0 || rs[0].Stage != analyze.StageRuntime || !strings.Contains(rs[0].Cause, "256MB per thread") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want a root at the runtime stage quoting the program's error line")
	}
}

// A crash-looping pod whose pasted log ends at the program's fatal line (logrus's
// level=fatal) is diagnosed from that line, not left at a bare CrashLoopBackOff no rule
// knows.
func TestAFatalLogLineOfACrashLoopingPod(t *testing.T) {
	files := map[string]string{
		"pods.txt": "[ops@wrk1 ~]$ kubectl get pods -n storage\n" +
			"NAME READY STATUS RESTARTS AGE\n" +
			"store-manager-5mc6p 0/1 CrashLoopBackOff 149 12h\n" +
			"store-manager-cp7xp 0/1 CrashLoopBackOff 148 12h\n" +
			"store-ui-789db56875-qqk7w 1/1 Running 0 12h\n",
		"logs.txt": "[ops@wrk1 ~]$ kubectl -n storage logs store-manager-5mc6p\n" +
			"time=\"2019-01-03T13:19:29Z\" level=error msg=\"Failed environment check, please make sure you have the helper installed on the host\"\n" +
			"time=\"2019-01-03T13:19:29Z\" level=fatal msg=\"Error starting manager: Environment check failed: Failed to execute: nsenter [--mount=/host/proc/1004/ns/mnt helper --version], output nsenter: failed to execute helper: No such file or directory\"\n",
	}
	rs := catalogRoots(t, files)
	if len(rs) == 0 || rs[0].Stage != analyze.StageRuntime || !strings.Contains(rs[0].Cause, "Environment check failed") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want a root at the runtime stage quoting the program's fatal line")
	}
}

// A program that prints its configuration as it starts (CoreDNS's Corefile, whose
// "errors" plugin is a line of its own) has not reported an error there: the crash is
// read from what the ticket quotes, not from the directive.
func TestAConfigDirectiveIsNoErrorLine(t *testing.T) {
	log := "2020/06/02 08:40:44 [INFO] Using config file:\ncluster.local:53 {\n    errors\n    cache 30\n    health 169.254.20.10:8080\n}\n"
	ticket := "node-local-dns crash looping on masters '169.254.20.10:8080: bind: address already in use'\n"
	rs := catalogRoots(t, map[string]string{"container.log": log, "message.txt": ticket})
	for _, f := range rs {
		if strings.Contains(f.Cause, "“errors”") {
			t.Errorf("a Corefile directive read as the error: %s", f.Cause)
		}
	}
	wantOneRoot(t, rs, "runtime-address-in-use", "address already in use")
}
