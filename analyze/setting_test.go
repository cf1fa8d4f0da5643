package analyze

import (
	"strings"
	"testing"
)

func TestSettingReleaseShapes(t *testing.T) {
	for _, c := range []struct {
		tok       string
		announced bool
		want      string
	}{
		{"1.4.5", false, "1.4.5"},
		{"v0.17.0", false, "v0.17.0"},
		{"k8s-1.19", false, "k8s-1.19"},
		{"v1.21.7+rke2r2", false, "v1.21.7+rke2r2"},
		{"5.15.0-127-generic,", false, "5.15.0-127-generic"},
		{"nginx:1.25.3", false, "nginx:1.25.3"},
		{"1.28", false, ""},
		{"1.28", true, "1.28"},
		{"0.5s", true, ""},
		{"1.5Gi", true, ""},
		{"10.96.0.10", true, ""},
		{"1.0", false, ""},
	} {
		if got := settingRelease(c.tok, c.announced); got != c.want {
			t.Errorf("settingRelease(%q, %v) = %q, want %q", c.tok, c.announced, got, c.want)
		}
	}
}

func TestReleaseAfterTakesTheReleaseMovedTo(t *testing.T) {
	for _, c := range []struct {
		rest   string
		change bool
		want   string
	}{
		{" the aws-load-balancer-controller chart from 1.4.2 to 1.4.5 on EKS 1.22, the controller", true, "1.4.5"},
		{" our cluster to k8s-1.19 doing so prevent service connectivity", true, "k8s-1.19"},
		{": 0.14.1 crashes with following error:", false, "0.14.1"},
		{" 30 seconds the pod restarts", true, ""},
		{" see https://example.com/v1.2.3/notes", true, ""},
	} {
		if got := releaseAfter(c.rest, c.change); got != c.want {
			t.Errorf("releaseAfter(%q, %v) = %q, want %q", c.rest, c.change, got, c.want)
		}
	}
}

func TestSettingLinesAreTheReportersOwn(t *testing.T) {
	for text, want := range map[string]bool{
		"- Install tools: Kubespray":                          true,
		"Kubernetes engine: RKE2 version v1.21.7+rke2r2":      true,
		"**Kubernetes version**: 1.28":                        true,
		"I tried updating to version v0.17.0 of the exporter": true,
		"level=info msg=\"starting\" version=1.4.5":           false,
		"image: nginx:1.25.3":                                 false,
	} {
		if got := isSettingLine(text); got != want {
			t.Errorf("isSettingLine(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestSettingClauseNamesWhatTheCauseLacks(t *testing.T) {
	s := ticketSetting{platforms: []string{"RKE2"}, releases: []string{"0.14.1"}, kernel: "5.15.0-127-generic"}
	if got, want := s.clause("the name kube-dns does not resolve on RKE2", StageRuntime), " (the ticket's setting: release 0.14.1, kernel 5.15.0-127-generic)"; got != want {
		t.Errorf("clause = %q, want %q", got, want)
	}
	if got := s.clause("rke2 0.14.1 kernel 5.15.0-127-generic", StageRuntime); got != "" {
		t.Errorf("clause of a cause that names all = %q, want none", got)
	}
}

func TestAComponentReleaseListIsReadAsWritten(t *testing.T) {
	if !isSettingLine("- Crossplane: v2.0.2 deployed via Helm") {
		t.Error("a component's release in an environment list is not a setting line")
	}
	if !isSettingLine("1. Upgrade the chart to version 2.4.1 on EKS and wait") {
		t.Error("a numbered step of the ticket is not a setting line")
	}
	m := reComponentRelease.FindStringSubmatch("- Crossplane: v2.0.2 deployed via Helm and running healthy")
	if m == nil || m[1] != "Crossplane" || m[2] != "v2.0.2" {
		t.Fatalf("component release = %q", m)
	}
	s := ticketSetting{releases: []string{"Crossplane: v2.0.2"}}
	if got, want := s.clause("no command specified", StageStart), " (the ticket's setting: Crossplane: v2.0.2)"; got != want {
		t.Errorf("clause = %q, want %q", got, want)
	}
	for _, text := range []string{"Time: 12.30 the pod restarted", "Status: 1.5 seconds"} {
		if m := reComponentRelease.FindStringSubmatch(text); m != nil {
			t.Errorf("%q read as a component's release %q", text, m[2])
		}
	}
}

func TestPlatformsAreNamedAsWritten(t *testing.T) {
	for text, want := range map[string]string{
		"we run it on RKE2 with Calico":               "RKE2",
		"the images were built on an M1 Mac":          "M1 Mac",
		"a kind cluster on my laptop":                 "kind cluster",
		"this kind of error happens on every restart": "",
	} {
		if got := rePlatform.FindString(text); got != want {
			t.Errorf("platform of %q = %q, want %q", text, got, want)
		}
	}
}

func TestAProbeCauseNamesThePortTheTicketSets(t *testing.T) {
	if m := reSettingPort.FindStringSubmatch("1. Create a `Perses` resource with `spec.containerPort: 9000` and probes configured:"); m == nil || m[2] != "9000" {
		t.Fatalf("containerPort of the sentence = %q", m)
	}
	for text, want := range map[string]string{
		"but if i set `targetPort: ui` (as it is named in the pod definition)": "ui",
		"    targetPort: http-metrics":                                         "http-metrics",
		"the targetPort: the port the container listens on":                    "",
	} {
		m := reSettingPort.FindStringSubmatch(text)
		if got := ""; m != nil {
			got = strings.TrimRight(m[2], "`\"' ")
			if got != want {
				t.Errorf("targetPort of %q = %q, want %q", text, got, want)
			}
		} else if want != "" {
			t.Errorf("targetPort of %q not read, want %q", text, want)
		}
	}
	s := ticketSetting{ports: []string{"containerPort: 9000"}}
	if got, want := s.clause(`the liveness probe fails (Get "http://10.0.0.5:8080/metrics": connection refused)`, StageProbe), " (the ticket's setting: containerPort: 9000)"; got != want {
		t.Errorf("probe clause = %q, want %q", got, want)
	}
	if got := s.clause("the program exits at start", StageRuntime); got != "" {
		t.Errorf("a runtime cause names the port: %q", got)
	}
}

func TestANodesKernelAndSwapAreRead(t *testing.T) {
	if m := reSettingKernel.FindStringSubmatch("Linux nl1k8s097 5.15.0-127-generic #137-Ubuntu SMP"); m == nil || m[1]+m[2]+m[3] != "5.15.0-127-generic" {
		t.Errorf("uname kernel = %q", m)
	}
	// A distribution's release says kernel by itself.
	for line, want := range map[string]string{
		"Every node that came up on 7.2.0-1-default lost cilium-agent": "7.2.0-1-default",
		"OS: Amazon Linux 2, 5.10.223-212.873.amzn2.x86_64":            "5.10.223-212.873.amzn2.x86_64",
		"chart 1.19.4 and 1.19.7 both fail":                            "",
	} {
		got := ""
		if m := reSettingKernel.FindStringSubmatch(line); m != nil {
			got = m[1] + m[2] + m[3]
		}
		if got != want {
			t.Errorf("kernel of %q = %q, want %q", line, got, want)
		}
	}
	if m := reSettingSwap.FindStringSubmatch("/swap.img      none    swap    sw      0       0"); m == nil || m[1] != "/swap.img" {
		t.Errorf("fstab swap = %q", m)
	}
	s := ticketSetting{swap: "/swap.img"}
	if got, want := s.clause("the kubelet exits at start because swap is enabled", StageNode), " (the ticket's setting: swap /swap.img in /etc/fstab)"; got != want {
		t.Errorf("node clause = %q, want %q", got, want)
	}
	if got := s.clause("the program exits", StageRuntime); got != "" {
		t.Errorf("a runtime cause names the node's swap: %q", got)
	}
}

func TestTheSubjectAndAmountOfATicketAreRead(t *testing.T) {
	for text, want := range map[string]string{
		"my `spire-server` pods were not starting up":         "pod spire-server",
		"The `kps-prometheus-node-exporter` DaemonSet shows:": "DaemonSet kps-prometheus-node-exporter",
		"into our `rook-ceph` namespace":                      "namespace rook-ceph",
		`the deployment "web-api" keeps its old replicas`:     "Deployment web-api",
	} {
		if m := reSettingSubject.FindStringSubmatch(text); m == nil || settingSubject(m) != want {
			t.Errorf("subject of %q = %q, want %q", text, m, want)
		}
	}
	if reSettingSubject.MatchString("I ran `kubectl get pods` and saw nothing") {
		t.Error("a command set off in backticks is read as a subject")
	}
	if m := reSettingQuantity.FindStringSubmatch("PR #2902's memory bump to 3840Mi took it down"); m == nil || m[2] != "3840Mi" {
		t.Errorf("quantity = %q", m)
	}
	s := ticketSetting{subjects: []string{"pod spire-server"}, quantities: []string{"memory 3840Mi"}}
	if got, want := s.clause("no node has enough free memory", StageScheduling), " (the ticket's setting: pod spire-server, memory 3840Mi)"; got != want {
		t.Errorf("scheduling clause = %q, want %q", got, want)
	}
	if got, want := s.clause("the spire-server-0 pod's image is missing", StageImage), ""; got != want {
		t.Errorf("clause of a cause naming its subject = %q, want %q", got, want)
	}
}

func TestATemplatesExamplesAreNotItsAnswer(t *testing.T) {
	m := reTemplateExample.FindStringSubmatch("- Cloud-provider/provisioner (e.g. AKS, GKE, EKS, PKE etc): EKS")
	if m == nil || m[1] != "EKS" {
		t.Fatalf("answer = %q, want EKS", m)
	}
	if m := reTemplateExample.FindStringSubmatch("- Kubernetes version (e.g. v1.11.2): 1.11.8"); m == nil || m[1] != "1.11.8" {
		t.Errorf("answer = %q, want 1.11.8", m)
	}
	if reTemplateExample.MatchString("- Kubernetes version: 1.28 (EKS)") {
		t.Error("a setting without examples read as one with")
	}
}
