package rules

import (
	"testing"
)

// k8s.io/mount-utils returns a failed mount as "mount failed: %v\nMounting command:
// %s\nMounting arguments: %s\nOutput: %s"; the kubelet's FailedMount event carries it
// with its newlines, so a pasted Events table shows the last three lines at the margin.
// They are the event's message: the mount helper's answer explains the pod, and the
// kubelet's later timeout waiting for the volume is its symptom.
func TestAMountErrorsLinesAreItsEvent(t *testing.T) {
	events := `Events:
  Type     Reason       Age    From               Message
  ----     ------       ----   ----               -------
  Normal   Scheduled    4m44s  default-scheduler  Successfully assigned shop/api-6658dfb778-t5kh5 to node-a
  Warning  FailedMount  102s   kubelet            MountVolume.SetUp failed for volume "shared" : mount failed: exit status 32
Mounting command: mount
Mounting arguments: -t nfs files.example.internal:/exports/shared /var/lib/kubelet/pods/5088f644/volumes/kubernetes.io~nfs/shared
Output: mount.nfs: Connection timed out
  Warning  FailedMount  27s (x2 over 2m41s)  kubelet  Unable to attach or mount volumes: unmounted volumes=[shared], unattached volumes=[shared kube-api-access-rhbw9]: timed out waiting for the condition
`
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": events}), "volume-nfs-mount-failed", "files.example.internal")
}

// Docker creating a hostPath's source on the node (a read-only /opt on Container-Optimized
// OS) fails the container's start, not a write of the process: the volume stage, read from
// Docker's volume/mounts, not the read-only-filesystem signature of a running program.
func TestHostPathSourceTheEngineCannotCreateIsTheVolumes(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"events.txt": `Error: failed to start container "datadog": Error response from daemon: error while creating mount source path '/opt/datadog-agent/run': mkdir /opt/datadog-agent: read-only file system` + "\n",
	})
	wantFirstRoot(t, rs, "volume", "", "/opt/datadog-agent/run")
}

// A kubelet's FailedMount message pasted without its event's columns is long and wordy
// enough to read like a sentence; as a chain of wrapped errors it is the component's, the
// Secrets Store CSI driver's provider not found, and the reporter's prose does not move
// it elsewhere.
func TestAWrappedMountErrorWithoutColumnsIsTheKubelets(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"events.txt":  `MountVolume.SetUp failed for volume "mysecret" : rpc error: code = Unknown desc = failed to mount secrets store objects for pod default/mypod, err: error connecting to provider "gcp": provider not found: provider "gcp"` + "\n",
		"message.txt": "I followed the steps in the example, but secret is not mounting.\n",
	})
	wantFirstRoot(t, rs, "volume", "volume-csi-driver-missing", `its provider gcp`, `provider not found: provider "gcp"`)
}

// "cni config uninitialized" says no network is loaded; the kubelet's load error of the
// file says which one is wrong, and the network-not-ready cause names it.
func TestNetworkNotReadyNamesTheCNIConfigItCannotLoad(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"kubelet.log": "cni.go:132] Error loading CNI config file /etc/cni/net.d/10-flannel.conf: no 'type'; perhaps this is a .conflist?\n" +
			"cni.go:172] Unable to update cni config: No valid networks found in /etc/cni/net.d\n" +
			"kubelet.go:2110] Container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:docker: network plugin is not ready: cni config uninitialized\n",
	})
	rootCauseHas(t, rs, "sandbox", "/etc/cni/net.d/10-flannel.conf: no 'type'; perhaps this is a .conflist?")
}

// A terminal wraps an event's message between any two words: the kubelet's refusal of a
// non-numeric user is read across the break.
func TestNonNumericUserRefusalWrappedByTheTerminal(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"events.txt": "  Warning  Failed     10s (x4 over 24s)  kubelet            Error: container has runAsNonRoot and image has non-numeric user\n" +
			"(nonroot), cannot verify user is non-root (pod: \"web-c68bcb8c4-\nx7qqp_shop(545601de)\", container: web-server)\n",
	})
	wantOneRoot(t, rs, "config-run-as-non-root", "nonroot")
}

// A listing of /etc/cni/net.d with two configurations says which one the runtime loads
// (the first in name order): a file another add-on left behind decides the pods' network.
func TestSandboxFailureNamesTheCNIConfigLoadedFirst(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"events.txt": `FailedCreatePodSandBox   pod/web-0    Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "dde271acbfb6": plugin type="multus" name="multus-cni-network" failed (add): Multus: [shop/web-0/abc]: error waiting for pod: Unauthorized` + "\n",
		"ls.txt": "# ls -l /etc/cni/net.d/\n-rw------- 1 root root  506 Jun  3 02:14 00-multus.conf\n" +
			"-rw-r--r-- 1 root root  276 May  2 16:33 05-cilium.conflist\ndrwxr-xr-x 2 root root 4.0K Jun  3 02:14 multus.d\n",
	})
	rootCauseHas(t, rs, "00-multus.conf (the first of 00-multus.conf, 05-cilium.conflist")
}
