package analyze_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// Each sandbox failure's part is classified once, from the runtime's own message.
func TestClassifySandboxError(t *testing.T) {
	rc := "kata"
	pod := &corev1.Pod{Spec: corev1.PodSpec{RuntimeClassName: &rc}}
	for msg, want := range map[string]analyze.SandboxPart{
		`no runtime for "kata" is configured`: {Kind: analyze.SandboxHandler, What: `runtime handler "kata" of RuntimeClass kata`, Detail: "kata"},
		`failed to get sandbox image "registry.k8s.io/pause:3.9": failed to pull`: {Kind: analyze.SandboxPauseImage,
			What: `pause (sandbox) image "registry.k8s.io/pause:3.9"`, Detail: "registry.k8s.io/pause:3.9"},
		`plugin type="bridge" name="k8s" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.1.0.1-10.1.0.6`: {
			Kind: analyze.SandboxIPRangeUsedUp, What: "CNI IP address management, whose range is used up", Detail: "10.1.0.1-10.1.0.6"},
		`failed to setup network for sandbox "abc": plugin type="calico" failed (add): connection refused`: {Kind: analyze.SandboxCNI,
			What: `CNI plugin "calico"`, Detail: "calico"},
		// Other IP address managers' words for an exhausted range (from their sources).
		`network for pod "web-0": networkPlugin cni failed to set up pod "web-0_shop" network: unable to allocate IP via local cilium agent: [POST /ipam][502] postIpamFailure  range is full`: {
			Kind: analyze.SandboxIPRangeUsedUp, What: "CNI IP address management, which has no address left", Detail: "cilium: range is full"},
		`failed to setup network for sandbox "5d2f": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container`: {
			Kind: analyze.SandboxIPRangeUsedUp, What: "CNI IP address management, which has no address left", Detail: "failed to assign an IP address to container"},
		`cni plugin not initialized`: {Kind: analyze.SandboxCNI, What: "CNI, which has no network configuration loaded", Detail: "not initialized"},
		`something else`:             {Kind: analyze.SandboxOther, What: "the container runtime"},
	} {
		if got := analyze.ClassifySandboxError(msg, pod); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", msg, got, want)
		}
	}
	if analyze.SandboxCNI.HasOwnRule() || !analyze.SandboxPauseImage.HasOwnRule() || !analyze.SandboxIPRangeUsedUp.HasOwnRule() {
		t.Error("HasOwnRule")
	}
}

// A pod waiting for its sandbox has its latest failure read from the newer of event
// and kubelet line, with the kubelet's and gRPC's prefixes removed; a pod whose
// container has started is past its sandbox.
func TestFailedSandboxes(t *testing.T) {
	uid := "7c1e4b2a-3f5d-4e6a-9b8c-0d1e2f3a4b5c"
	waiting := podObj("shop", "web", "n1", nil)
	waiting["metadata"].(obj)["uid"] = uid
	started := podObj("shop", "api", "n1", obj{"status": obj{"phase": "Pending", "containerStatuses": []any{
		obj{"name": "app", "state": obj{"running": obj{}}}}}})
	msg := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): connection refused`
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(waiting, started),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "", "FailedCreatePodSandBox", msg, "2026-11-29T10:00:05Z"),
			event("shop", "e2", "Pod", "api", "", "FailedCreatePodSandBox", msg, "2026-11-29T10:00:05Z"),
		),
	})
	got := viewOf(t, g, allKinds, func(v *analyze.View) []analyze.FailedSandbox { return v.FailedSandboxes() })
	if len(got) != 1 || got[0].Pod.Obj.Name != "web" {
		t.Fatalf("failed sandboxes = %+v, want web's", got)
	}
	f := got[0]
	if want := `failed to setup network for sandbox "abc": plugin type="calico" failed (add): connection refused`; f.Failure.Message != want {
		t.Errorf("message = %q, want %q", f.Failure.Message, want)
	}
	if f.Part.Kind != analyze.SandboxCNI || f.Failure.Tries() != " (3 attempts, the last at 2026-11-29T10:00:05Z)" {
		t.Errorf("kind %s, tries %q", f.Part.Kind, f.Failure.Tries())
	}
	if ev := analyze.SandboxEvidence(f.Pod, f.Failure); len(ev) != 1 {
		t.Errorf("evidence = %+v, want the event", ev)
	}
}
