package catalog

import "testing"

// TestGPUAndWindowsLines reads lines of the GPU and Windows node components: NVIDIA's
// device plugin (the node advertises no GPUs), the NVIDIA container toolkit and the
// libnvidia-container CLI its hook runs (a container that does not start), and hcsshim,
// the runtime shim of Windows nodes (a compute system that cannot be created, started or
// stopped, the Host Networking Service that makes the pod's network). Each wanted
// component's outermost match must carry the stage.
func TestGPUAndWindowsLines(t *testing.T) {
	c := Default()
	type want = componentStage
	cases := []struct {
		msg  string
		want []want
	}{
		// the device plugin's own log: no NVML, no devices, a strategy it refuses
		{`E0517 09:12:03.123456       1 factory.go:87] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.`,
			[]want{{"nvidia-device-plugin", "node"}}},
		{`I0517 09:12:03.123789       1 main.go:346] No devices found. Waiting indefinitely.`,
			[]want{{"nvidia-device-plugin", "node"}}},
		{`E0517 09:12:03.124000       1 factory.go:112] Incompatible strategy detected auto`,
			[]want{{"nvidia-device-plugin", "node"}}},
		{`W0517 09:12:03.100000       1 rm.go:104] NVML not detected: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory`,
			[]want{{"nvidia-device-plugin", "node"}}},
		// the 1.0.0-beta plugin, still pasted from old threads
		{`2020/05/17 09:12:03 Failed to start nvml with error: could not load NVML library.`,
			[]want{{"nvidia-device-plugin", "node"}}},
		{`E0517 09:15:41.000000       1 main.go:132] error starting plugins: unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2`,
			[]want{{"nvidia-device-plugin", "node"}}},
		// the kubelet's event when the toolkit's hook runs nvidia-container-cli on a node
		// whose driver is not loaded, cannot be found, or is older than the image needs
		{"Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
			[]want{{"nvidia-container-toolkit", "start"}}},
		{`Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown`,
			[]want{{"nvidia-container-toolkit", "start"}}},
		{`Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown`,
			[]want{{"nvidia-container-toolkit", "start"}}},
		{"Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.2, please update your driver to a newer version, or use an earlier cuda container: unknown",
			[]want{{"nvidia-container-toolkit", "start"}}},
		// the toolkit's runtime wrapper in CDI mode
		{`Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all: unknown`,
			[]want{{"nvidia-container-toolkit", "start"}}},
		// Windows: the compute system of a container cannot be created or its process
		// started
		{`hcs::CreateComputeSystem 9bd1f0c2e7a1b3d45c6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4: The directory name is invalid.`,
			[]want{{"hcsshim", "start"}}},
		{`Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem app: The container operating system does not match the host operating system.: unknown`,
			[]want{{"hcsshim", "start"}}},
		{`hcsshim::CreateComputeSystem 4e2a9c1b7f3d: The directory name is invalid.`,
			[]want{{"hcsshim", "start"}}},
		{`Error: failed to start containerd task "app": hcs::System::CreateProcess app: The system cannot find the file specified.: unknown`,
			[]want{{"hcsshim", "start"}}},
		// stopping it
		{`rpc error: code = Unknown desc = hcs::System::Terminate 5e2b8a1c9d0f: Access is denied.`,
			[]want{{"hcsshim", "termination"}}},
		// the Host Networking Service refuses the pod's endpoint
		{`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "8e2f4a6c": plugin type="win-bridge" name="cbr0" failed (add): error while ProvisionEndpoint(cid_eth0,8e2f4a6c,8e2f4a6c): HNS failed with error : The parameter is incorrect.`,
			[]want{{"hcsshim", "sandbox"}}},
		{`failed to create endpoint: hnsCall failed in Win32: The object already exists. (0x1392)`,
			[]want{{"hcsshim", "sandbox"}}},
	}
	for _, tc := range cases {
		wantReadings(t, c, tc.msg, tc.want)
	}
}

// TestGPUAndWindowsReleases: the three components are read from their pinned releases,
// their curated entries cite the C source or the Go file whose wording the generator
// cannot read, and each is there in number.
func TestGPUAndWindowsReleases(t *testing.T) {
	modules := map[string]map[string]bool{
		"nvidia-device-plugin":     {"github.com/NVIDIA/k8s-device-plugin": true, "github.com/NVIDIA/gpu-monitoring-tools": true},
		"nvidia-container-toolkit": {"github.com/NVIDIA/nvidia-container-toolkit": true, "github.com/NVIDIA/libnvidia-container": true},
		"hcsshim":                  {"github.com/Microsoft/hcsshim": true},
	}
	n, curated := map[string]int{}, map[string]int{}
	for _, e := range Default().Entries() {
		mods, ok := modules[e.Component]
		if !ok {
			continue
		}
		n[e.Component]++
		if !mods[e.Module] {
			t.Errorf("%s (%q): module %s, want one of %v", e.ID, e.Template, e.Module, mods)
		}
		if e.Source == "curated" {
			curated[e.Component]++
			if e.File == "" || e.Function == "" {
				t.Errorf("%s (%q): a curated entry must cite its file and function", e.ID, e.Template)
			}
		}
	}
	for comp, least := range map[string]int{"nvidia-device-plugin": 150, "nvidia-container-toolkit": 150, "hcsshim": 250} {
		if n[comp] < least {
			t.Errorf("%d %s entries, want at least %d", n[comp], comp, least)
		}
	}
	for comp, least := range map[string]int{"nvidia-container-toolkit": 8, "hcsshim": 10} {
		if curated[comp] < least {
			t.Errorf("%d curated %s entries, want at least %d", curated[comp], comp, least)
		}
	}
	pinned := map[string]bool{}
	for _, p := range Default().Header().Pins {
		pinned[p.Module] = true
	}
	for _, m := range []string{"github.com/NVIDIA/k8s-device-plugin", "github.com/NVIDIA/nvidia-container-toolkit", "github.com/Microsoft/hcsshim"} {
		if !pinned[m] {
			t.Errorf("%s is not among the catalog's pins", m)
		}
	}
}
