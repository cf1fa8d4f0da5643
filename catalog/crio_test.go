package catalog

import "testing"

// TestCRIOLines reads lines that CRI-O, crun and conmon print when a pod does not run (the
// curated entries of catalog/gen/curated.yaml): CRI-O's journal with its logfmt msg=, the
// kubelet's events and errors around CRI-O's answer, crun's error inside CRI-O's
// "container create failed: ", conmon's syslog line. Each wanted component's outermost
// match must carry the stage.
func TestCRIOLines(t *testing.T) {
	c := Default()
	type want = componentStage
	cases := []struct {
		msg  string
		want []want
	}{
		// CRI-O's journal: crun cannot write the container's pids limit
		{"Jan 04 06:52:28 node1 crio[2932]: time=\"2024-01-04 06:52:28.650854747Z\" level=error msg=\"Container creation error: writing file `pids.max`: Invalid argument\\n\" id=0b6c1d4e-9a3f-4e51-8f0a-2d1c3b4a5e6f name=/runtime.v1.RuntimeService/CreateContainer",
			[]want{{"cri-o", "start"}, {"crun", "start"}}},
		{"container create failed: writing file `pids.max`: Invalid argument",
			[]want{{"cri-o", "start"}, {"crun", "start"}}},
		// the kubelet's event (CreateContainerError) wrapping CRI-O's and crun's errors
		{"Warning  Failed  12s (x3 over 40s)  kubelet  Error: container create failed: executable file `/docker-entrypoint.sh` not found in $PATH: No such file or directory",
			[]want{{"cri-o", "start"}, {"crun", "start"}}},
		{"Error: container create failed: mount `/var/lib/kubelet/pods/0c1d/volume-subpaths/config/app/0` to `etc/app/app.conf`: Not a directory",
			[]want{{"cri-o", "start"}, {"crun", "start"}}},
		{"Error: container create failed: chdir to `/app`: No such file or directory",
			[]want{{"crun", "start"}}},
		{"Error: container create failed: error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1)",
			[]want{{"crun", "start"}}},
		{"Error: relabel failed /var/lib/kubelet/pods/0c1d/volumes/kubernetes.io~nfs/data: lsetxattr /var/lib/kubelet/pods/0c1d/volumes/kubernetes.io~nfs/data: operation not supported",
			[]want{{"cri-o", "volume"}}},
		// the pod's sandbox: its network, a name the retried request holds, the
		// runtime handler of a RuntimeClass, the kubelet's cgroup driver
		{"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create pod network sandbox k8s_web-0_default_6d1f2c3a-1b2c-4d5e-8f90-0a1b2c3d4e5f_0(8a1b2c3d4e5f): error adding pod default_web-0 to CNI network \"multus-cni-network\": plugin type=\"multus\" name=\"multus-cni-network\" failed (add): Multus: [default/web-0]: error getting pod: Unauthorized",
			[]want{{"kubelet", "sandbox"}, {"cri-o", "sandbox"}}},
		{"Failed to create pod sandbox: rpc error: code = Unknown desc = error reserving pod name k8s_web-0_default_6d1f2c3a_0 for id 1f2e3d4c5b6a: name is reserved",
			[]want{{"cri-o", "sandbox"}}},
		{"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler kata from runtime list map[crun:0xc0003e4b40 runc:0xc0003e4c00]",
			[]want{{"cri-o", "sandbox"}}},
		{"Failed to create pod sandbox: rpc error: code = Unknown desc = cri-o configured with systemd cgroup manager, but did not receive slice as parent: /kubepods/besteffort/pod1234",
			[]want{{"cri-o", "sandbox"}}},
		// the node: CRI-O overloaded, without a CNI configuration, refusing to start
		{"Error: kubelet may be retrying requests that are timing out in CRI-O due to system load. Currently at stage container volume configuration: context deadline exceeded: error reserving ctr name k8s_app_web-0_default_6d1f2c3a_0 for id 9a8b7c6d5e4f: name is reserved",
			[]want{{"cri-o", "node"}}},
		{"container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: No CNI configuration file in /etc/cni/net.d/. Has your network provider started?",
			[]want{{"kubelet", "node"}, {"cri-o", "node"}}},
		{"Mar 02 10:11:12 node1 crio[1021]: time=\"2024-03-02 10:11:12.000000000Z\" level=fatal msg=\"validating runtime config: runtime validation: \\\"crun\\\" not found in $PATH: exec: \\\"crun\\\": executable file not found in $PATH\"",
			[]want{{"cri-o", "node"}}},
		// an image pull that stops making progress (CRI-O 1.31)
		{"Failed to pull image \"quay.io/org/app:1.2\": rpc error: code = Unknown desc = Timed out on waiting up to 1m0s for image pull progress updates",
			[]want{{"kubelet", "image"}, {"cri-o", "image"}}},
		// stopping: the stop signal runs out, the network's teardown fails
		{"crio[2932]: time=\"2024-01-04 07:00:01.000000000Z\" level=warning msg=\"Stopping container 5e1c0f2a3b4c with stop signal timed out. Killing...\" id=1a2b3c4d name=/runtime.v1.RuntimeService/StopContainer",
			[]want{{"cri-o", "termination"}}},
		{"StopPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for pod sandbox k8s_web_default_0c1d_0(abc123): error removing pod default_web from CNI network \"ovn-kubernetes\": plugin type=\"ovn-k8s-cni-overlay\" failed (delete): timed out",
			[]want{{"cri-o", "termination"}}},
		// conmon's syslog line when the runtime's create fails
		{"Jan 04 06:52:28 node1 conmon[4521]: conmon 5e1c0f2a3b4c5d6e7f80 <error>: Failed to create container: exit status 1",
			[]want{{"conmon", "start"}}},
		// an exec probe on a container that exited: CRI-O's words name no stage, the
		// kubelet's around them do
		{"Readiness probe errored: rpc error: code = NotFound desc = container is not created or running: checking if PID of 5e1c0f2a is running failed: container process not found",
			[]want{{"kubelet", "probe"}, {"cri-o", ""}}},
	}
	for _, tc := range cases {
		wantReadings(t, c, tc.msg, tc.want)
	}
}

// TestCRIOEntriesCurated: the entries of CRI-O, crun and conmon are curated, cite their
// repository's file and function, and are there in number.
func TestCRIOEntriesCurated(t *testing.T) {
	modules := map[string]map[string]bool{
		"cri-o":  {"github.com/cri-o/cri-o": true, "github.com/cri-o/ocicni": true},
		"crun":   {"github.com/containers/crun": true},
		"conmon": {"github.com/containers/conmon": true},
	}
	n := map[string]int{}
	for _, e := range Default().Entries() {
		mods, ok := modules[e.Component]
		if !ok {
			continue
		}
		n[e.Component]++
		if e.Source != "curated" || !mods[e.Module] || e.File == "" || e.Function == "" {
			t.Errorf("%s (%q): not a curated entry of %s citing its file and function: %+v", e.ID, e.Template, e.Component, e)
		}
	}
	for c, least := range map[string]int{"cri-o": 60, "crun": 30, "conmon": 1} {
		if n[c] < least {
			t.Errorf("%d %s entries, want at least %d", n[c], c, least)
		}
	}
}
