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
