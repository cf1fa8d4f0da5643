// Package cmdline reads the command lines tickets quote before the output they paste.
package cmdline

import "strings"

// Program is the program a command line runs ("k" is kubectl's usual alias, "sudo" is
// passed over), "" for none.
func Program(cmd string) string {
	f := strings.Fields(cmd)
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
