package rules

import (
	"strings"
	"testing"
)

// kube-proxy's iptables-restore failure names the kernel release the ticket shows
// (uname -r's output, "kernel 5.15.168" in a sentence): the command's error depends on
// the kernel's netfilter, and kube-proxy does not print it. With two releases in the
// evidence, none is named.
func TestKubeProxyIptablesFailureNamesTheKernel(t *testing.T) {
	const line = `E1113 16:15:07.931291       1 proxier.go:1481] "Failed to execute iptables-restore" err="exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option \"--xor-mark\""`
	for _, tc := range []struct{ text, want string }{
		{"$ uname -r\n6.8.0-57-generic\n", "on kernel 6.8.0-57-generic"},
		{"The nodes run Bottlerocket 1.26.2 (linux kernel 5.15.168).\n", "on kernel 5.15.168"},
		{"It broke after the update to kernel 6.8.0-57-generic.\n$ uname -a\nLinux n1 6.8.0-57-generic #59-Ubuntu SMP x86_64 GNU/Linux\n", "on kernel 6.8.0-57-generic"},
	} {
		rs := catalogRoots(t, map[string]string{"ticket.txt": tc.text, "kube-proxy.log": line + "\n"})
		wantOneRoot(t, rs, "service-kube-proxy-iptables-failed", tc.want)
	}
	rs := catalogRoots(t, map[string]string{"ticket.txt": "node a: 6.8.0-57-generic, node b: 6.8.0-60-generic\n", "kube-proxy.log": line + "\n"})
	for _, f := range rs {
		if strings.Contains(f.Cause, "on kernel") {
			t.Errorf("two kernels, one named: %s", f.Cause)
		}
	}
}
