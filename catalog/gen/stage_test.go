package main

import "testing"

// The stages of the GPU and Windows node components' call sites: hcsshim by package and
// function (the Host Networking Service is the pod's network, stopping a compute system is
// termination, HCS's shared error values and Win32 errors have no stage of their own, the
// rest creates and starts containers), NVIDIA's device plugin and container toolkit by
// component.
func TestGPUAndWindowsStages(t *testing.T) {
	checkStages(t, []stageCase{
		{site{component: "hcsshim", file: "hcn/hcnglobals.go", function: "hnsCall", kind: "error", template: "HNS failed with error : %s"}, "sandbox"},
		{site{component: "hcsshim", file: "internal/hns/hnsfuncs.go", function: "hnsCall", kind: "error", template: "hns failed with error : %s"}, "sandbox"},
		// deleting an endpoint is still the network's, not termination's
		{site{component: "hcsshim", file: "internal/hns/hnsendpoint.go", function: "(*HNSEndpoint).Delete", kind: "log", template: "hcsshim::HNSEndpoint::Delete id=%s"}, "sandbox"},
		{site{component: "hcsshim", file: "cmd/containerd-shim-runhcs-v1/pod.go", function: "createPod", kind: "error", template: "failed to setup networking for pod %q: %w"}, "sandbox"},
		{site{component: "hcsshim", file: "internal/hcsoci/create.go", function: "CreateContainer", kind: "error", template: "failure while creating namespace for container: %w"}, "sandbox"},
		{site{component: "hcsshim", file: "internal/hcs/errors.go", kind: "error", template: "hcsshim: timeout waiting for notification"}, ""},
		{site{component: "hcsshim", file: "errors.go", function: "(*ContainerError).Error", kind: "error", template: "container %s encountered an error during %s: failure in a Windows system call: %s (0x%x)"}, ""},
		{site{component: "hcsshim", file: "internal/hcserror/hcserror.go", function: "(*HcsError).Error", kind: "message", template: "failed in Win32: %s (0x%x)"}, ""},
		{site{component: "hcsshim", file: "cmd/containerd-shim-runhcs-v1/task_hcs.go", function: "(*hcsTask).close", kind: "log", template: "failed to terminate container"}, "termination"},
		{site{component: "hcsshim", file: "internal/hcs/process.go", function: "(*Process).Kill", kind: "log", template: "OpenComputeSystem() call failed"}, "termination"},
		{site{component: "hcsshim", file: "cmd/containerd-shim-runhcs-v1/task_hcs.go", function: "(*hcsTask).Stats", kind: "error", template: "failed to fetch stats: %s: %w"}, ""},
		{site{component: "hcsshim", file: "internal/hcs/system.go", function: "(*System).waitBackground", kind: "log", template: "unexpected system exit"}, "runtime"},
		{site{component: "hcsshim", file: "internal/hcsoci/hcsdoc_wcow.go", function: "createWindowsContainerDocument", kind: "error", template: "invalid spec - not enough layer folders supplied"}, "start"},
		{site{component: "hcsshim", file: "internal/hcs/utils.go", function: "CreateNTFSVHD", kind: "error", template: "failed to format VHD: %w"}, "start"},
		{site{component: "nvidia-device-plugin", file: "internal/plugin/factory.go", function: "(*options).getResourceManagers", kind: "log", template: "Incompatible strategy detected %v"}, "node"},
		{site{component: "nvidia-device-plugin", file: "internal/plugin/server.go", function: "(*nvidiaDevicePlugin).Allocate", kind: "error", template: "invalid allocation request for %q: %w"}, "node"},
		{site{component: "nvidia-container-toolkit", file: "internal/modifier/cdi/registry.go", function: "fromRegistry.Modify", kind: "error", template: "failed to inject CDI devices: %v"}, "start"},
	})
}

// stageCase is a call site and the stage it should get.
type stageCase struct {
	s    site
	want string
}

func checkStages(t *testing.T, cases []stageCase) {
	t.Helper()
	for _, tc := range cases {
		if st := stageFor(tc.s); st != tc.want {
			t.Errorf("%s %s %s %q: stage %q, want %q", tc.s.component, tc.s.file, tc.s.function, tc.s.template, st, tc.want)
		}
	}
}

// containerd's CRI container create: what its create wraps is CreateContainerError, the
// start stage (the kubelet's CreateContainerConfigError is config), and an image volume
// it mounts for the container is the volume stage.
func TestContainerdCreateStages(t *testing.T) {
	checkStages(t, []stageCase{
		{site{component: "containerd", file: "internal/cri/server/container_create.go", function: "(*criService).CreateContainer", kind: "error", template: "failed to create containerd container: %w"}, "start"},
		{site{component: "containerd", file: "internal/cri/server/container_create.go", function: "(*criService).createContainer", kind: "error", template: "failed to mount image volume: %w"}, "volume"},
		{site{component: "containerd", file: "internal/cri/server/container_create.go", function: "(*criService).createContainer", kind: "error", template: "failed to generate container %q spec: %w"}, "config"},
	})
}

// The service controller that asks the cloud for a Service's load balancer, in the
// controller manager until 1.18 and the cloud provider's module since, is the service
// stage: the Service is what does not work.
func TestServiceControllerStages(t *testing.T) {
	checkStages(t, []stageCase{
		{site{component: "cloud-controller-manager", file: "controllers/service/controller.go", function: "(*Controller).syncLoadBalancerIfNeeded", kind: "event", template: "Error syncing load balancer: %v"}, "service"},
		{site{component: "kube-controller-manager", file: "pkg/controller/service/service_controller.go", function: "(*ServiceController).syncLoadBalancerIfNeeded", kind: "event", template: "Error syncing load balancer: %v"}, "service"},
	})
}
