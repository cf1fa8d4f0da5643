// Package cmdline reads the command lines tickets quote before the output they paste.
package cmdline

import (
	"regexp"
	"strings"
)

// reWrapped is kubectl run through a distribution's own command: k3s, k0s and
// microk8s ship kubectl as a subcommand ("k3s kubectl get pods", "microk8s.kubectl"),
// minikube passes the arguments after "--" to the kubectl it downloaded.
var reWrapped = regexp.MustCompile(`^(\s*(?:sudo\s+)?)(?:\S*/)?(?:(?:k3s|k0s|microk8s)\s+kubectl|microk8s\.kubectl|minikube\s+kubectl(?:\s+--(?:\s|$))?)`)

// Normalize returns a command line with a distribution's wrapper around kubectl
// replaced by kubectl itself ("k3s kubectl -n x logs p" is "kubectl -n x logs p"), so
// that its arguments read as kubectl's; any other command is returned as it is.
func Normalize(cmd string) string {
	if m := reWrapped.FindStringSubmatchIndex(cmd); m != nil {
		rest := cmd[m[1]:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			rest = " " + rest
		}
		return cmd[m[2]:m[3]] + "kubectl" + rest
	}
	return cmd
}

// Program is the program a command line runs ("k" is kubectl's usual alias, "sudo" is
// passed over), "" for none.
func Program(cmd string) string {
	f := strings.Fields(Normalize(cmd))
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	if len(f) == 0 {
		return ""
	}
	p := f[0]
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "k" {
		return "kubectl"
	}
	return p
}

// IsClient reports whether a program is a client whose output a ticket pastes: the
// Kubernetes and container CLIs, and the network tools that talk to a Service.
func IsClient(program string) bool { return clients[program] }

var clients = map[string]bool{
	"kubectl": true, "oc": true, "docker": true, "podman": true, "nerdctl": true, "crictl": true, "ctr": true,
	"curl": true, "wget": true, "telnet": true, "nc": true, "nslookup": true, "dig": true, "helm": true,
}
