package rules

import (
	"strings"
	"testing"
)

// A probe that names a port the container does not declare fails with the prober's
// own error, in either kubelet's wording. The readiness rule's message knowledge reads
// the same row as "the readiness probe fails (OUTPUT)"; the signature that knows why
// is the one reported, about the same pod.
func TestAProbePortNameNoPortHas(t *testing.T) {
	for _, row := range []string{
		`  Warning  Unhealthy  2m (x13 over 4m)  kubelet  Readiness probe errored: strconv.Atoi: parsing "web-metrics": invalid syntax`,
		`  Warning  Unhealthy  2m (x13 over 4m)  kubelet  Liveness probe errored and resulted in unknown state: port "web-metrics" not found`,
	} {
		rs := catalogRoots(t, map[string]string{"events.txt": row + "\n"})
		wantOneRoot(t, rs, "probe-port-name-not-found", "port web-metrics", "no port of the container declares")
	}
}

// The kubelet's log of a failing preStop hook, pasted from a node's journal the way a
// copy indents its first line, is the termination stage's finding about the pod it
// names, quoting the hook's command and the shell's error.
func TestAFailingPreStopHookFromTheJournal(t *testing.T) {
	journal := ` Feb 12 18:28:24 node-a kubelet[1234]: E0212 18:28:24.205197    1234 kuberuntime_container.go:590] "PreStop hook failed" err=<
Feb 12 18:28:24 node-a kubelet[1234]:         command '/bin/sh -c /drain.sh &; sleep 5' exited with 2: /bin/sh: -c: line 1: syntax error near unexpected token ` + "`;'" + `
Feb 12 18:28:24 node-a kubelet[1234]:  > pod="db/db-0" podUID=f7553c4f-3328-4a27-9374-6163acf0cd26 containerName="db" containerID="containerd://b9aa"
`
	rs := catalogRoots(t, map[string]string{"kubelet.log": journal})
	wantOneRoot(t, rs, "termination-prestop-hook-failed", "container db", "/drain.sh &; sleep 5", "syntax error")
	if len(rs) == 1 && (len(rs[0].Pods()) != 1 || rs[0].Pods()[0].Name != "db-0") {
		t.Errorf("subjects %v, want pod db/db-0", rs[0].Subjects)
	}
}

// An exec probe's curl without -s prints its progress meter before its error: the cause
// quotes curl's error, and names the container the event's field path gives.
func TestAProbeCurlMeterAndItsContainer(t *testing.T) {
	const rows = `  1m    1m  1   {kubelet pool-1-abcd}    spec.containers{cache}  Normal  Started     Started container with docker id 2a158eecfcfd
  16m   42s 11  {kubelet pool-1-abcd}    spec.containers{cache}  Warning Unhealthy   Liveness probe failed:   % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                 Dload  Upload   Total   Spent    Left  Speed
  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0curl: (7) Failed to connect to localhost port 6379: Connection refused
`
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantFirstRoot(t, rs, "probe", "probe-liveness-restarts", "of container cache", "fails (curl: (7) Failed to connect to localhost port 6379")
}

// Since 1.32 the scheduler does not name the taint. When it counts every node as either
// tainted or not matching the pod's selector, the tainted nodes are the only ones the
// selector may choose (TaintToleration runs before NodeAffinity): a dedicated node's
// taint the evidence shows is the cause, not the selector.
func TestDedicatedNodesTaintUnnamed(t *testing.T) {
	paste := "$ kubectl get pods -n eso\n" +
		"eso-6fd9b9fb4f-dn6vx   0/1     Pending     0          19h\n" +
		"$ kubectl describe pod eso-6fd9b9fb4f-dn6vx -n eso | grep FailedScheduling\n" +
		"  Warning  FailedScheduling  3m24s (x239 over 19h)  default-scheduler  0/6 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 4 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.\n" +
		"$ kubectl describe node infra-0 | grep Taint\n" +
		"Taints:             dedicated=infra:NoSchedule\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": paste})
	wantFirstRoot(t, rs, "scheduling", "scheduling-untolerated-taint", "dedicated=infra:NoSchedule")
	// A control-plane taint is no dedicated node's: the selector is the cause.
	cp := strings.Replace(paste, "dedicated=infra:NoSchedule", "node-role.kubernetes.io/control-plane:NoSchedule", 1)
	rs = catalogRoots(t, map[string]string{"ticket.txt": cp})
	wantFirstRoot(t, rs, "scheduling", "scheduling-node-selector-mismatch")
}

// A host port refused on the node of a pod that runs on the node's network: the
// ticket's setting that puts it there is named, since its container ports are the
// node's ports.
func TestHostPortConflictNamesTheHostNetworkSetting(t *testing.T) {
	paste := "**How to reproduce it:**\n\n* Install the operator with `spec.network.provider: host` and run two brokers on one node\n\n" +
		"```\n  Warning  FailedScheduling  18m (x4 over 18m)  default-scheduler  0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.md": paste})
	wantFirstRoot(t, rs, "scheduling", "scheduling-host-port-conflict", "spec.network.provider: host")
}

// CoreDNS 1.2.3 to 1.2.6 say "Forwarding loop detected in "." zone" (docker logs
// indents the lines without a time), and a pasted resolv.conf names the loopback
// nameserver the pod inherited.
func TestCoreDNSLoopOldWordingAndTheResolvConf(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"logs.txt": "CoreDNS-1.2.5\n [INFO] plugin/reload: Running configuration MD5 = 0123456789abcdef0123456789abcdef\n" +
			" [FATAL] plugin/loop: Forwarding loop detected in \".\" zone. Exiting. See https://coredns.io/plugins/loop#troubleshooting. Probe query: \"HINFO 1.2.\".\n",
		"resolv.txt": "$ cat /etc/resolv.conf\nnameserver 127.0.0.53\n",
	})
	wantFirstRoot(t, rs, "service", "service-coredns-loop-detected", `Forwarding loop detected in "." zone`, "nameserver 127.0.0.53")
}

// A klog line its program wrote at fatal severity is trouble, whatever its message
// says: a paste that cut "mkdir PATH: read-only file system" after the path still
// makes a finding that quotes it, not "No finding".
func TestAFatalKlogLineIsNeverSilent(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"logs.txt": "`F1128 02:00:36.380318       1 cmd.go:161] mkdir /tmp/serving-cert-7`\n"})
	if len(rs) == 0 || !strings.Contains(rs[0].Cause, "mkdir /tmp/serving-cert-7") {
		t.Fatalf("roots %v, want one that quotes the fatal line", ruleIDs(rs))
	}
}

// Docker's ContainerCannotRun message quotes runc's error with escaped quotes; the
// command it could not find is named, not only the shell's exit code.
func TestContainerCannotRunNamesTheMissingCommand(t *testing.T) {
	const status = `    State:      Terminated
      Reason:   ContainerCannotRun
      Message:  oci runtime error: container_linux.go:247: starting container process caused "exec: \"/bin/zsh\": stat /bin/zsh: no such file or directory"

      Exit Code:    127
    Ready:          False
`
	rs := catalogRoots(t, map[string]string{"describe.txt": status})
	wantFirstRoot(t, rs, "start", "start-command-not-found", `"/bin/zsh" does not exist in its image`)
}

// A pasted Failed row names no container; the kubelet's Created row above it does, and
// the cause names it.
func TestAnEventRowTakesTheContainerItsNeighbourNames(t *testing.T) {
	const rows = `Events:
  Normal   Created    9s (x2 over 9s)  kubelet            Created container syncer
  Warning  Failed     9s (x2 over 9s)  kubelet            Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "run": executable file not found in $PATH: unknown
`
	rs := catalogRoots(t, map[string]string{"events.txt": rows})
	wantFirstRoot(t, rs, "start", "start-command-not-found", "container syncer", `command run`)
}
