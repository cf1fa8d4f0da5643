package rules

import (
	"fmt"
	"time"

	"podflow.dev/podflow/analyze"
)

// SandboxCreateFailed finds pods whose sandbox (the pod's namespaces, network and pause
// container) the container runtime cannot create.
var SandboxCreateFailed = &analyze.Rule{
	ID:       "sandbox-create-failed",
	Stage:    analyze.StageSandbox,
	Title:    "container runtime cannot create the pod sandbox",
	Doc:      sandboxCreateFailedDoc,
	Catchall: true,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.RuntimeJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: sandboxCreateFailed,
	// containerd's network set-up (internal/cri/server sandbox_run.go) around libcni's
	// "failed to find plugin %q in path %s" (pkg/invoke/find.go); the teardown of the
	// same network (the kubelet's "Error deleting network: %v", libcni's "plugin %s
	// failed (delete): %w") is no failure to create the sandbox.
	Examples: analyze.RuleExamples{
		Fires: []string{
			`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "4f7c2a9e1d3b": failed to find plugin "bridge" in path [/opt/cni/bin]`,
			// The sandbox's pause container that the OCI runtime cannot start
			// (containerd's task, runc's container init).
			`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting cgroup config for procHooks process: unable to freeze: unknown`,
		},
		Quiet: []string{
			`Error deleting network: failed to find plugin "bridge" in path [/opt/cni/bin]`,
			`plugin type="calico" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
		},
	},
}

const sandboxCreateFailedDoc = `Before any container of a pod starts, the kubelet asks the container runtime for the
pod's sandbox (CRI RunPodSandbox): its namespaces, its network (set up by CNI) and the
pause container that holds them. When that fails the kubelet records a
FailedCreatePodSandBox event ("Failed to create pod sandbox: rpc error: code = Unknown
desc = ...") and logs "CreatePodSandbox for pod failed" with the runtime's error, and
retries with back-off; the pod stays Pending in ContainerCreating, with
PodReadyToStartContainers False. The runtime's message says which part failed:

- runtime handler: the pod's RuntimeClass names a handler the runtime does not have
  ("failed to get sandbox runtime: no runtime for "HANDLER" is configured"), or the
  RuntimeClass is gone ("failed to lookup RuntimeClass NAME");
- CNI: the network could not be set up ("failed to setup network for sandbox",
  "plugin type="bridge" name="NET" failed (add): ...", or "cni plugin not initialized"
  when the node has no CNI configuration loaded);
- other: any other step (creating or starting the pause container's task, cgroups).

Two sandbox failures have rules of their own, and this one stays quiet about them:
"no IP addresses available" (the node's pod address range is used up) is
sandbox-ip-exhausted, and "failed to get sandbox image" (the pause image cannot be
pulled or found) is sandbox-image-pull-failed. A node whose runtime reports its network
not ready never gets this far: the kubelet does not ask for a sandbox at all
(sandbox-network-not-ready).

The finding quotes the runtime's message verbatim and names the failing part, the node
and the pods; pods failing the same way on one node are one finding.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=FailedCreatePodSandBox
    kubectl get runtimeclass NAME -o jsonpath='{.handler}'
    kubectl debug node/NODE -it --image=busybox -- chroot /host journalctl -u containerd --since=-10m

## Fix

Runtime handler: configure the handler in the node's runtime (containerd: a
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.HANDLER] section, then restart
containerd), or point the RuntimeClass at a handler the nodes have; when only some
nodes have it, give the RuntimeClass a scheduling.nodeSelector. CNI: make sure the
node's network plugin runs (its DaemonSet pod on the node), its configuration is in
/etc/cni/net.d and its binaries in /opt/cni/bin; read the plugin's own log for a
plugin error.
`

func sandboxCreateFailed(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, s := range v.FailedSandboxes() {
		if s.Part.Kind.HasOwnRule() {
			continue // sandbox-ip-exhausted and sandbox-image-pull-failed say more
		}
		out = append(out, sandboxFinding(v, s.Pod, s.Failure))
	}
	return out
}

func sandboxFinding(v *analyze.View, p *analyze.Pod, f analyze.SandboxAttempt) analyze.Finding {
	pod := p.Obj
	node := pod.Spec.NodeName
	part := analyze.ClassifySandboxError(f.Message, pod)
	evidence := analyze.SandboxEvidence(p, f)
	if rc := pod.Spec.RuntimeClassName; rc != nil && part.Kind == analyze.SandboxHandler {
		evidence = append(evidence, p.Loc.At("spec", "runtimeClassName").Evidence("runtimeClassName "+*rc, time.Time{}))
	}
	cause := fmt.Sprintf("the kubelet on %s cannot create the sandbox of pod %s (failing part: %s); the runtime says %q%s",
		analyze.NodeWords(node), p.Ref().NamespacedName(), part.What, f.Message, f.Tries())
	return analyze.Finding{
		Subjects:    v.SandboxSubjects(p),
		Cause:       cause,
		Evidence:    evidence,
		Remediation: analyze.SandboxFix(part, node),
		Confirm:     analyze.SandboxConfirm(part, pod),
		GroupKey:    node + "\x00" + string(part.Kind) + "\x00" + analyze.SandboxIDQuotePattern.ReplaceAllString(f.Message, `"ID"`),
	}
}
