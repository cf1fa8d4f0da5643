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

// A distribution's wrapper around kubectl reads as kubectl with the same arguments.
func TestNormalizeWrappedKubectl(t *testing.T) {
	for cmd, want := range map[string]string{
		"k3s kubectl -n kube-system logs --previous coredns-1": "kubectl -n kube-system logs --previous coredns-1",
		"sudo k3s kubectl get pods -A":                         "sudo kubectl get pods -A",
		"microk8s kubectl describe pod web-0":                  "kubectl describe pod web-0",
		"microk8s.kubectl get events":                          "kubectl get events",
		"minikube kubectl -- get pods -n shop":                 "kubectl get pods -n shop",
		"/usr/local/bin/k0s kubectl logs web-0":                "kubectl logs web-0",
		"k3s server --disable traefik":                         "k3s server --disable traefik",
		"kubectl get pods":                                     "kubectl get pods",
	} {
		if got := Normalize(cmd); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", cmd, got, want)
		}
	}
	if got := Program("microk8s kubectl get pods"); got != "kubectl" {
		t.Errorf("Program of a wrapped kubectl = %q, want kubectl", got)
	}
}
