package rules

import (
	"strings"
	"testing"
)

// A ticket's text around the messages it quotes: the reporter's sentences, a heading
// that introduces the error, a numbered step of the reproduction, the command they ran.
// Those lines say nothing a component printed; when a quoted message is explained, they
// are no root of their own. Alone, the prose still gives a finding.
func TestReporterTextIsNoRootBesideAnExplainedMessage(t *testing.T) {
	// containerd's sandbox image pull error (pkg/cri/server/sandbox_run.go, 1.6):
	// "failed to get sandbox image %q: failed to pull image %q: …".
	paste := "When we deploy the cluster, the static pods never start because containerd cannot pull the pause image from the mirror.\n" +
		"\n" +
		"The error is:\n" +
		"```\n" +
		"failed to get sandbox image \"registry.example/pause:3.10\": failed to pull image \"registry.example/pause:3.10\": failed to pull and unpack image \"registry.example/pause:3.10\": failed to resolve reference \"registry.example/pause:3.10\": not found\n" +
		"```\n" +
		"\n" +
		"Steps:\n" +
		"1. install the cluster\n" +
		"2. observe error\n" +
		"\n" +
		"This causes the kubelet to fail with connection refused on port 6443 since the apiserver never starts.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"ticket.txt": paste}), "sandbox-image-pull-failed")
	// The reporter's sentence alone is still trouble to report.
	alone := catalogRoots(t, map[string]string{"ticket.txt": "This causes the kubelet to fail with connection refused on port 6443 since the apiserver never starts.\n"})
	if len(alone) == 0 {
		t.Error("a sentence about a failure alone gives no finding")
	}
}

// kubectl version's Go struct dump names a Platform; it describes the tools, not the
// failure, and does not make the prose read as an image without the node's platform.
func TestVersionDumpIsNotProse(t *testing.T) {
	ticket := "The nightly report job has not run since Monday and nobody changed its schedule.\n\n" +
		"Kubernetes version:\n" +
		"Client Version: version.Info{Major:\"1\", Minor:\"29\", GitVersion:\"v1.29.3\", GoVersion:\"go1.21.8\", Compiler:\"gc\", Platform:\"darwin/arm64\"}\n" +
		"Server Version: version.Info{Major:\"1\", Minor:\"29\", GitVersion:\"v1.29.3\", GoVersion:\"go1.21.8\", Compiler:\"gc\", Platform:\"linux/amd64\"}\n"
	for _, f := range catalogRoots(t, map[string]string{"ticket.txt": ticket}) {
		if f.Rule == "image-pull-platform-missing" {
			t.Errorf("the version dump was read as the failure: %s", f.Cause)
		}
	}
}

// A ticket's title capitalizes the message it quotes; the kubelet printed it in lower
// case (pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot).
func TestACapitalizedTitleIsTheMessageAsPrinted(t *testing.T) {
	title := "Container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"issue.txt": title}), "config-run-as-non-root", "non-numeric user (app)")
}

// A reporter's sentence is read by the catalog only for a message with enough of its
// own words in it: "could not find %v %q" is any sentence that could not find something.
func TestASentenceIsNotReadByAShortTemplate(t *testing.T) {
	text := "Trying to run a simple rc and a service, the service does not get an endpoint. Maybe it is expected, but I could not find anything related in docs. A sample from examples/storm/ works fine.\n"
	for _, f := range catalogRoots(t, map[string]string{"message.txt": text}) {
		if f.Rule == "catalog" && f.Stage == "scheduling" {
			t.Errorf("a sentence read as the scheduler's message: %s", f.Cause)
		}
	}
}

// The kubelet records the pull it backs off from as a Normal event: with nothing else
// pasted it is still the pod's trouble, at the image stage.
func TestANormalBackOffOfAPullIsTrouble(t *testing.T) {
	const events = "Normal   Pulling      28m (x5 over 31m)      kubelet  Pulling image \"ghcr.io/example/agent:0.2.0\"\n" +
		"Normal   BackOff      3m21s (x121 over 31m)  kubelet  Back-off pulling image \"ghcr.io/example/agent:0.2.0\"\n"
	rs := catalogRoots(t, map[string]string{"events.txt": events})
	if len(rs) == 0 || rs[0].Stage != "image" || !strings.Contains(rs[0].Cause, "ghcr.io/example/agent:0.2.0") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatal("want an image-stage root that names the image")
	}
}
