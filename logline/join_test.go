package logline

import (
	"strings"
	"testing"
)

// TestJoinMessages joins the lines that continue a message, in the shapes the incident
// corpus holds, and leaves apart the lines that do not.
func TestJoinMessages(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		want  []string // the messages of more than one line, joined
		alone int      // how many messages of one line
	}{
		{
			name: "klog value, indentation kept",
			text: "E0510 10:33:56.111109       1 driver.go:120] \"GRPC error\" err=<\n" +
				"\trpc error: code = Internal desc = Could not attach volume \"vol-0475f64ff83e38dd9\" to node \"i-021bdeb1a8dbf7694\"\n" +
				" >\n" +
				"I0510 10:33:57.000000       1 driver.go:121] next\n",
			want:  []string{"E0510 10:33:56.111109       1 driver.go:120] \"GRPC error\" err=<rpc error: code = Internal desc = Could not attach volume \"vol-0475f64ff83e38dd9\" to node \"i-021bdeb1a8dbf7694\">"},
			alone: 2, // the next entry and the empty last line
		},
		{
			name: "klog value, indentation lost and closing line lost",
			text: "E0101 00:00:00.000000  1 proxier.go:1500] \"Failed to execute iptables-restore\" err=<\n" +
				"exit status 1: iptables-restore: line 12 failed\n" +
				"E0101 00:00:01.000000  1 proxier.go:800] \"Sync failed\" retryingTime=\"30s\"",
			want:  []string{"E0101 00:00:00.000000  1 proxier.go:1500] \"Failed to execute iptables-restore\" err=<exit status 1: iptables-restore: line 12 failed"},
			alone: 1,
		},
		{
			name: "klog value in a journal, each line with its prefix",
			text: "Feb 05 10:58:14 bmoore-v-1 kubelet[12704]: I0205 10:58:14.917220   12704 swap_util.go:115] \"Swap is on\" /proc/swaps contents=<\n" +
				"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:         Filename     Type   Size   Used\n" +
				"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:         /swapfile    file   3991548   0\n" +
				"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:  >\n" +
				"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]: E0205 10:58:14.917245   12704 run.go:72] \"command failed\" err=\"failed to run Kubelet\"",
			want:  []string{"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]: I0205 10:58:14.917220   12704 swap_util.go:115] \"Swap is on\" /proc/swaps contents=<Filename     Type   Size   Used /swapfile    file   3991548   0>"},
			alone: 1,
		},
		{
			name: "klog value closed with the entry's next keys, first line indented by the copy",
			text: " Feb 12 18:28:24 maciej kubelet[1234]: E0212 18:28:24.205197    1234 kuberuntime_container.go:590] \"PreStop hook failed\" err=<\n" +
				"Feb 12 18:28:24 maciej kubelet[1234]:         command 'sh -c nodetool drain &; wait' exited with 2: sh: -c: line 1: syntax error near unexpected token `;'\n" +
				"Feb 12 18:28:24 maciej kubelet[1234]:  > pod=\"scylla/db-0\" containerName=\"scylla\"\n" +
				"Feb 12 18:28:25 maciej kubelet[1234]: I0212 18:28:25.000000    1234 kubelet.go:1] next",
			want: []string{" Feb 12 18:28:24 maciej kubelet[1234]: E0212 18:28:24.205197    1234 kuberuntime_container.go:590] \"PreStop hook failed\" err=<" +
				"command 'sh -c nodetool drain &; wait' exited with 2: sh: -c: line 1: syntax error near unexpected token `;'> pod=\"scylla/db-0\" containerName=\"scylla\""},
			alone: 1,
		},
		{
			name: "another program's line ends a journal value",
			text: "Feb 05 10:58:14 n kubelet[1]: E0205 10:58:14.1 1 a.go:1] \"x\" err=<\n" +
				"Feb 05 10:58:14 n containerd[2]: time=\"2024\" level=error msg=\"y\"",
			alone: 2,
		},
		{
			name: "journal line split by the stream",
			text: "Mar 01 10:00:00 node1 kubelet[42]: E0301 10:00:00.1 42 remote_runtime.go:1] \"RunPodSandbox from runtime service failed\" err=\"rpc error: code = Unknown\n" +
				"Mar 01 10:00:00 node1 kubelet[42]: \tdesc = failed to setup network\"\n" +
				"Mar 01 10:00:00 node1 kubelet[42]: I0301 10:00:00.2 42 kubelet.go:1] next",
			want:  []string{"Mar 01 10:00:00 node1 kubelet[42]: E0301 10:00:00.1 42 remote_runtime.go:1] \"RunPodSandbox from runtime service failed\" err=\"rpc error: code = Unknown desc = failed to setup network\""},
			alone: 1,
		},
		{
			name: "systemctl status line wrapped by the terminal",
			text: "● kubelet.service - kubelet: The Kubernetes Node Agent\n" +
				"    Process: 5093 ExecStart=/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS (code=exi\n" +
				"ted, status=1/FAILURE)\n" +
				"   Main PID: 5093 (code=exited, status=1/FAILURE)",
			want:  []string{"    Process: 5093 ExecStart=/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS (code=exited, status=1/FAILURE)"},
			alone: 2,
		},
		{
			name:  "unrelated lines stay apart",
			text:  "error: failed to create deployment\n\nresource Deployment/default/nginx was blocked\nrequire-labels:\n  autogen-check-for-labels: 'validation error'",
			alone: 5,
		},
		{
			name: "a margin line after a short status line is not its wrap",
			text: "     Active: failed (Result: exit-code)\n" +
				"Hint: Some lines were ellipsized, use -l to show in full.",
			alone: 2,
		},
		{
			name:  "a value opened in prose is no klog value",
			text:  "if a=< b then\nsomething else\n",
			alone: 3,
		},
		{
			name:  "a stack trace under an application's log line keeps its lines",
			text:  "2024-03-01 12:00:00.123 ERROR boom\n    at com.example.A.b(A.java:1)",
			alone: 2,
		},
		{
			name: "kubelet entries one after another",
			text: "Jun 16 11:03:05 n kubelet[1]: E0616 11:03:05.1 1 a.go:1] \"one\"\n" +
				"Jun 16 11:03:05 n kubelet[1]: E0616 11:03:05.2 1 a.go:1] \"two\"",
			alone: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := JoinMessages(strings.Split(c.text, "\n"))
			var joined []string
			alone := 0
			for _, m := range ms {
				if m.Last > m.First {
					joined = append(joined, m.Text)
				} else {
					alone++
				}
			}
			if strings.Join(joined, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("joined:\n%s\nwant:\n%s", strings.Join(joined, "\n"), strings.Join(c.want, "\n"))
			}
			if got := Joined(strings.Split(c.text, "\n")); len(got) != len(joined) {
				t.Errorf("Joined gave %d messages, want %d", len(got), len(joined))
			}
			if alone != c.alone {
				t.Errorf("%d messages of one line, want %d: %+v", alone, c.alone, ms)
			}
		})
	}
}

// TestValueEnd keeps a klog value's lines with the line that opens it, and nothing else.
func TestValueEnd(t *testing.T) {
	lines := strings.Split("E0101 00:00:00.1 1 a.go:1] \"x\" err=<\nrpc error: a\n >\nnext line", "\n")
	if got := ValueEnd(lines, 0); got != 3 {
		t.Errorf("ValueEnd = %d, want 3", got)
	}
	if got := ValueEnd(lines, 3); got != 4 {
		t.Errorf("ValueEnd of a plain line = %d, want 4", got)
	}
}

// The "(pod: …, container: …)" a kubelet error ends with, pasted on its own line, is the
// end of the message before it; a line that only looks like it (no UID) is not.
func TestJoinedPodQuoteTail(t *testing.T) {
	lines := []string{
		`Error: container has runAsNonRoot and image will run as root`,
		`(pod: "web-7d9f_shop(4ee7c357-9d03-4069-a8ad-31908855abd1)", container: web)`,
		`(pod: "web-7d9f_shop", container: web)`,
	}
	ms := JoinMessages(lines)
	if len(ms) != 2 || ms[0].Last != 1 || ms[0].Text != lines[0]+" "+lines[1] || ms[1].First != 2 {
		t.Errorf("JoinMessages = %+v, want the first two lines as one message and the third alone", ms)
	}
	if ms := JoinMessages(lines[1:2]); len(ms) != 1 || ms[0].Text != lines[1] {
		t.Errorf("a quote alone: %+v", ms)
	}
}

// klog writes a message that holds newlines as it is: the rest at the margin, between
// two entries of the log, is the first entry's; a line after the log's last entry that
// the log does not go on after is not.
func TestJoinedKlogRest(t *testing.T) {
	lines := []string{
		`E0505 16:58:14.797428    2809 factory.go:583] Error scheduling ns-a web-1: pod (web-1) failed to fit in any node`,
		`fit failure summary on nodes : Insufficient cpu (1); retrying`,
		`I0505 16:58:15.264982    2809 operation_executor.go:917] MountVolume.SetUp succeeded`,
		`E0505 16:58:16.802314    2809 factory.go:583] Error scheduling ns-a web-1: pod (web-1) failed to fit in any node`,
		`the reporter's own words after the log.`,
		`And more of them.`,
	}
	ms := JoinMessages(lines)
	if len(ms) != 5 || ms[0].Last != 1 || ms[0].Text != lines[0]+" "+lines[1] {
		t.Fatalf("JoinMessages = %+v, want the first two lines as one message", ms)
	}
	if ms[2].First != 3 || ms[2].Last != 3 {
		t.Errorf("the last entry took the text after it: %+v", ms[2])
	}
	// One entry pasted alone with the rest of its message.
	if ms := JoinMessages(lines[:2]); len(ms) != 1 || ms[0].Last != 1 {
		t.Errorf("an entry and its rest alone: %+v", ms)
	}
}

// TestJoinedTerminalCut joins a log entry a terminal cut at its width with its rest, as
// the line was before the cut (no space where the cut fell inside a word), and keeps
// apart what only looks like it: a line after an entry narrower than the width, an
// entry after the cut, and a reporter's sentence.
func TestJoinedTerminalCut(t *testing.T) {
	const width = 100
	cutAt := func(s string) (string, string) { return s[:width], s[width:] }
	a1, a2 := cutAt(`Nov 15 20:10:05 nixos kubelet[1391]: F1115 20:10:05.994998    1391 server.go:262] failed to run Kubelet: Running with swap on is not supported, please disable swap!`)
	b1, b2 := cutAt(`Nov 15 20:10:06 nixos kubelet[1391]: E1115 20:10:06.100000    1391 kubelet.go:1] "Error getting node" err="node \"nixos\" not found" pod="kube-system/x"`)
	lines := []string{
		a1, a2,
		`Nov 15 20:10:05 nixos systemd[1]: kubelet.service: Main process exited, code=exited`,
		b1, b2,
		`Nov 15 20:10:07 nixos kubelet[1391]: I1115 20:10:07.0 1391 server.go:1] short entry`,
		`this is no continuation of the short entry above`,
	}
	ms := Joined(lines)
	if len(ms) != 2 {
		t.Fatalf("Joined = %+v, want the two cut entries", ms)
	}
	if ms[0].First != 0 || ms[0].Last != 1 || !strings.Contains(ms[0].Text, "Running with swap on is not supported") {
		t.Errorf("first cut entry: %+v", ms[0])
	}
	if ms[1].First != 3 || ms[1].Last != 4 || ms[1].Text != b1+b2 {
		t.Errorf("second cut entry: %+v", ms[1])
	}

	// One message logged twice is as wide both times: no terminal's width (at a width
	// no terminal commonly has).
	same := `Nov 15 20:10:05 nixos kubelet[1391]: E0505 16:58:14.797428    2809 factory.go:583] Error scheduling pod web-1`
	if ms := Joined([]string{same, "the reporter's words", same, "more words"}); len(ms) != 0 {
		t.Errorf("a message logged twice read as cut: %+v", ms)
	}
	// A reporter's sentence after an entry at the width starts with a capital.
	if ms := Joined([]string{a1, "This is what we saw.", b1, b2}); len(ms) != 1 || ms[0].First != 2 {
		t.Errorf("a sentence after a cut entry joined to it: %+v", ms)
	}
}
