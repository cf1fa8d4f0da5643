package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// Tickets written in markdown dress pasted output up: a reporter makes the event they
// mean bold. The emphasis is the reporter's, the event the kubelet's: it is read with
// its columns, for the pod the ticket describes.
func TestABoldEventRowIsStillAnEvent(t *testing.T) {
	msg := "After the upgrade my DNS pod would not start and I see this error\n\n" +
		"  **Warning  FailedCreatePodSandBox  2m (x40 over 80m)  kubelet, node-a  Failed create pod sandbox: open /run/systemd/resolve/resolv.conf: no such file or directory**\n"
	rs := catalogRoots(t, map[string]string{"message.txt": msg})
	wantOneRoot(t, rs, "sandbox-create-failed", "/run/systemd/resolve/resolv.conf", "node-a")
}

// An issue template's answers around a pasted log ("**What happened**: After node is
// restarted, es failed to start.") tell of the trouble; the log's own error line says
// what it is. Without a signature that knows the log, the root quotes the program's
// line, at the runtime stage, not the reporter's sentence (whose "node" would place it
// at the node).
func TestTheLogsErrorLineOutranksTheReportersSentence(t *testing.T) {
	msg := "**Which chart**:\nincubator/search\n\n**What happened**:\nAfter node is restarted, es failed to start.\n\n" +
		"**What you expected to happen**:\nThe es should be able to start even if node restarted.\n\n" +
		"```\n[2024-03-01T08:40:32,026][INFO ][o.e.t.TransportService   ] [x1] publish_address {10.1.2.3:9300}, bound_addresses {[::]:9300}\n" +
		"[2024-03-01T08:40:32,056][INFO ][o.e.b.BootstrapChecks    ] [x1] bound or publishing to a non-loopback address, enforcing bootstrap checks\n" +
		"ERROR: [1] bootstrap checks failed\n" +
		"[1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]\n" +
		"[2024-03-01T08:40:32,073][INFO ][o.e.n.Node               ] [x1] stopping ...\n```\n\n" +
		"**How to reproduce it** (as minimally and precisely as possible):\nInstall the chart, after restart node, es failed to start.\n"
	var without []*analyze.Rule
	for _, r := range All() {
		if r.ID != "runtime-crash-exit-kernel-limit-too-low" {
			without = append(without, r)
		}
	}
	b := importPaste(t, map[string]string{"message.txt": msg})
	rs := roots(analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), without, analyze.Options{Unexplained: true}))
	wantFirstRoot(t, rs, "runtime", "", "bootstrap checks failed")
}
