package analyze

import "testing"

// A stage word inside a dashed name is the name ("system-probe", "image-builder"); on
// its own, or in camel case, it still says the stage.
func TestTextStageReadsNamesAsNames(t *testing.T) {
	cases := []struct {
		text string
		want Stage
	}{
		{`error reading /etc/system-probe/config.yaml: permission denied`, StageRuntime},
		{`container image-builder exited with code 2`, StageRuntime},
		{`Liveness probe failed: connection refused`, StageProbe},
		{`Back-off pulling image "example/app:1.0"`, StageImage},
		{`ErrImagePull`, StageImage},
	}
	for _, c := range cases {
		if got := textStage(c.text, StageRuntime); got != c.want {
			t.Errorf("textStage(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

// A stage word is a word of its own, or the start of one: "amount" holds no mount and
// "technique" no CNI, while "unmount", "csi" in a driver's domain and "cni" after a dash
// still say theirs.
func TestTextStageReadsWordsNotTheirInsides(t *testing.T) {
	cases := []struct {
		text string
		want Stage
	}{
		{`works for some amount of time and then always fails with this error`, StageRuntime},
		{`the technique we use to detect it fails`, StageRuntime},
		{`failed to unmount /var/lib/kubelet/pods/x/volumes/y: device busy`, StageVolume},
		{`rpc error: code = Internal desc = ebs.csi.aws.com: could not attach`, StageVolume},
		{`multus-cni failed to delegate add`, StageSandbox},
		{`MountVolume.SetUp failed for volume "data"`, StageVolume},
	}
	for _, c := range cases {
		if got := textStage(c.text, StageRuntime); got != c.want {
			t.Errorf("textStage(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

// A lookup that does not resolve, as a user's nslookup from a pod prints it, is cluster
// DNS (the service stage), not the node the text would otherwise default to; a pull whose
// registry does not resolve stays an image pull.
func TestTextStageReadsAFailedLookupAsClusterDNS(t *testing.T) {
	cases := []struct {
		text string
		want Stage
	}{
		{`nslookup: can't resolve 'servicename': Name does not resolve`, StageService},
		{`** server can't find web.default.svc.cluster.local: NXDOMAIN`, StageService},
		{`curl to the NodePort 30644 of the node gets an access timeout`, StageService},
		{`Failed to pull image "reg.example/app:1": dial tcp: lookup reg.example: no such host`, StageImage},
	}
	for _, c := range cases {
		if got := textStage(c.text, StageNode); got != c.want {
			t.Errorf("textStage(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

func TestALookupSentenceIsClusterDNSWhateverItsSetting(t *testing.T) {
	text := "I am using kubernetes 1.15.0 along with calico 3.8 on a single-node kubeadm. My pods that use hostNetwork can't resolve DNS using servicename."
	if got := textStage(text, StageNode); got != StageService {
		t.Errorf("textStage(%q) = %s, want service", text, got)
	}
}

// Of two unexplained findings at one stage, the one quoting a program's output comes
// before the one quoting the reporter's sentence about it.
func TestOutputComesBeforeTheSentenceAboutIt(t *testing.T) {
	prose := &Finding{Rule: UnexplainedRule, Stage: StageRuntime, Severity: SeverityError,
		Evidence: []Evidence{{Excerpt: "I was debugging a problem with the init pods showing an Error state and the cluster never coming up."}}}
	output := &Finding{Rule: UnexplainedRule, Stage: StageRuntime, Severity: SeverityError,
		Evidence: []Evidence{{Excerpt: `/task/initdb.sh: line 3: $'\r': command not found`}}}
	fs := []*Finding{prose, output}
	sortFindings(fs)
	if fs[0] != output {
		t.Errorf("first finding quotes %q, want the program's output", fs[0].Evidence[0].Excerpt)
	}
}
