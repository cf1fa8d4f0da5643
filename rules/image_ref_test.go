package rules

import "testing"

// A rate-limited pull names the image as a user writes it: the reference the pull was
// for (the kubelet's "Failed to pull image", containerd's "failed to pull and unpack
// image") rather than the registry path of the refused request, and the repository
// with its tag (REPO:TAG) where the message prints them apart ("reading manifest TAG
// in REPO").
func TestRateLimitedPullNamesTheImageReference(t *testing.T) {
	events := "Warning  Failed  3m (x4 over 5m)  kubelet  Failed to pull image \"redis:7.2-alpine\": rpc error: code = Unknown desc = " +
		"failed to pull and unpack image \"docker.io/library/redis:7.2-alpine\": failed to copy: httpReadSeeker: failed open: unexpected status code " +
		"https://registry-1.docker.io/v2/library/redis/manifests/sha256:0f4c1a2b: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": events}), "image-pull-rate-limited", "redis:7.2-alpine", "429 Too Many Requests")
	crio := "Warning  Failed  1m  kubelet  Failed to pull image \"example/worker:latest\": rpc error: code = Unknown desc = reading manifest latest in docker.io/example/worker: toomanyrequests: You have reached your pull rate limit.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"events.txt": crio}), "image-pull-rate-limited", "docker.io/example/worker:latest")
}

// The runtime's "permission denied" on the container's command does not say which
// image holds that file; the cause names the one image the evidence shows.
func TestNotExecutableNamesTheImage(t *testing.T) {
	ticket := "We switched the deployment to `registry.example.com/tools/resolver:v3.1.0` and it no longer starts:\n\n" +
		"  Warning  Failed     12s (x3 over 40s)  kubelet  Error: failed to create containerd task: OCI runtime create failed: " +
		"container_linux.go:380: starting container process caused: exec: \"/resolver\": permission denied: unknown\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"ticket.txt": ticket}), "start-permission-denied", "registry.example.com/tools/resolver:v3.1.0")
}
