package cmdline

import "testing"

func TestProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"kubectl get pods -n shop":        "kubectl",
		"sudo /usr/local/bin/crictl ps":   "crictl",
		"k describe pod web-0":            "kubectl",
		"":                                "",
		"   ":                             "",
		"helm install web ./chart --wait": "helm",
	} {
		if got := Program(cmd); got != want {
			t.Errorf("Program(%q) = %q, want %q", cmd, got, want)
		}
	}
	if !IsClient("helm") || IsClient("bash") {
		t.Error("IsClient: helm is a client, bash is not")
	}
}
