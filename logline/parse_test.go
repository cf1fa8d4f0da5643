package logline

import (
	"strings"
	"testing"
	"time"
)

func TestParseForms(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		name    string
		line    string
		format  Format
		time    time.Time
		sev     byte
		program string
		host    string
		message string
		field   [2]string
	}{
		{name: "short", line: `Nov 29 19:00:01 node-a kubelet[77]: E1129 19:00:01.000001      77 pod_workers.go:1301] "Error syncing pod, skipping" pod="shop/web-1"`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 1000), sev: 'E', program: "kubelet", host: "node-a", message: "Error syncing pod, skipping", field: [2]string{"pod", "shop/web-1"}},
		{name: "short without host", line: `Nov 29 19:00:01 kubelet[77]: E1129 19:00:01.000001      77 x.go:1] "boom"`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 1000), sev: 'E', program: "kubelet", message: "boom"},
		{name: "short-precise", line: `Nov 29 19:00:01.250000 node-a containerd[600]: time="2026-11-29T19:00:01.249Z" level=error msg="RunPodSandbox failed" error="plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory"`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 250000000), sev: 'E', program: "containerd", host: "node-a", message: "RunPodSandbox failed",
			field: [2]string{"error", `plugin type="calico" failed (add): stat /var/lib/calico/nodename: no such file or directory`}},
		{name: "short-full", line: `Sun 2026-11-29 19:00:01 UTC node-a kubelet[77]: F1129 19:00:01.000000      77 server.go:269] failed to run Kubelet: misconfiguration: kubelet cgroup driver: "cgroupfs" is different from docker cgroup driver: "systemd"`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 0), sev: 'F', program: "kubelet", host: "node-a", message: `failed to run Kubelet: misconfiguration: kubelet cgroup driver: "cgroupfs" is different from docker cgroup driver: "systemd"`},
		{name: "short-iso without host", line: `2026-11-29T19:00:01+0000 kubelet[77]: I1129 19:00:01.000000      77 x.go:1] "ok"`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 0), sev: 'I', program: "kubelet", message: "ok"},
		{name: "systemd message", line: `Nov 29 19:00:05 node-a systemd[1]: kubelet.service: Main process exited, code=exited, status=1/FAILURE`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 5, 0), program: "systemd", host: "node-a", message: "kubelet.service: Main process exited, code=exited, status=1/FAILURE"},
		{name: "bare klog", line: `E0831 04:12:41.868086    3570 file.go:157] Unable to read config path "/etc/kubernetes/manifests": path does not exist, ignoring`,
			format: FormatKlog, time: utc(2026, 8, 31, 4, 12, 41, 868086000), sev: 'E', message: `Unable to read config path "/etc/kubernetes/manifests": path does not exist, ignoring`},
		{name: "logrus text", line: `time="2025-03-02T10:11:12.123456789Z" level=error msg="failed to pull image" image="registry.example.invalid/app:1" error="dial tcp: lookup registry.example.invalid: no such host"`,
			format: FormatLogrus, time: time.Date(2025, 3, 2, 10, 11, 12, 123456789, time.UTC), sev: 'E', message: "failed to pull image", field: [2]string{"image", "registry.example.invalid/app:1"}},
		{name: "logfmt without time", line: `level=warning msg="cleanup warnings" error="exit status 1"`,
			format: FormatLogfmt, sev: 'W', message: "cleanup warnings", field: [2]string{"error", "exit status 1"}},
		{name: "logrus tty with date", line: `WARN[2025-01-02T03:04:05Z] Image pull failed                            image="app:1"`,
			format: FormatLogrus, time: utc(2025, 1, 2, 3, 4, 5, 0), sev: 'W', message: "Image pull failed", field: [2]string{"image", "app:1"}},
		{name: "logrus tty with seconds", line: `ERRO[0001] error waiting for container: context canceled`,
			format: FormatLogrus, sev: 'E', message: "error waiting for container: context canceled"},
		{name: "dmesg oom", line: `[12345.678901] Memory cgroup out of memory: Killed process 123 (java) total-vm:2097152kB, anon-rss:1048576kB`,
			format: FormatKernel, sev: 'E', program: "kernel", message: "Memory cgroup out of memory: Killed process 123 (java) total-vm:2097152kB, anon-rss:1048576kB"},
		{name: "dmesg oom-kill summary", line: `[ 1234.5] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0,task=java,pid=123,uid=0`,
			format: FormatKernel, sev: 'E', program: "kernel", message: "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0,task=java,pid=123,uid=0", field: [2]string{"task", "java"}},
		{name: "dmesg -T", line: `[Sun Nov 29 19:00:01 2026] eth0: renamed from veth1234`,
			format: FormatKernel, time: utc(2026, 11, 29, 19, 0, 1, 0), program: "kernel", message: "eth0: renamed from veth1234"},
		{name: "journalctl -k", line: `Nov 29 19:00:01 node-a kernel: Out of memory: Killed process 4242 (node) total-vm:1kB`,
			format: FormatJournal, time: utc(2026, 11, 29, 19, 0, 1, 0), sev: 'E', program: "kernel", host: "node-a", message: "Out of memory: Killed process 4242 (node) total-vm:1kB"},
		{name: "calico cni", line: `2022-07-01 09:31:06.551 [ERROR][4035329] plugin.go 121: Final result of CNI ADD was an error. error=stat /var/lib/calico/nodename: no such file or directory`,
			format: FormatBracket, time: time.Date(2022, 7, 1, 9, 31, 6, 551000000, time.UTC), sev: 'E', message: "Final result of CNI ADD was an error. error=stat /var/lib/calico/nodename: no such file or directory"},
		{name: "systemctl status header", line: `● kubelet.service - kubelet: The Kubernetes Node Agent`,
			format: FormatStatus, program: "kubelet", message: "kubelet: The Kubernetes Node Agent", field: [2]string{"unit", "kubelet.service"}},
		{name: "systemctl status active", line: `     Active: activating (auto-restart) (Result: exit-code) since Wed 2020-04-01 10:00:00 UTC; 5s ago`,
			format: FormatStatus, sev: 'E', message: "Active: activating (auto-restart) (Result: exit-code) since Wed 2020-04-01 10:00:00 UTC; 5s ago",
			field: [2]string{"active", "activating (auto-restart) (Result: exit-code) since Wed 2020-04-01 10:00:00 UTC; 5s ago"}},
		{name: "systemctl status process", line: `    Process: 1234 ExecStart=/usr/bin/kubelet $KUBELET_ARGS (code=exited, status=255)`,
			format: FormatStatus, sev: 'E', message: "Process: 1234 ExecStart=/usr/bin/kubelet $KUBELET_ARGS (code=exited, status=255)"},
		{name: "systemctl status running", line: `     Active: active (running) since Wed 2020-04-01 10:00:00 UTC; 1h ago`,
			format: FormatStatus, message: "Active: active (running) since Wed 2020-04-01 10:00:00 UTC; 1h ago"},
	}
	ref := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, kind, problem := Parse(tt.line, ref)
			if kind != KindEntry || problem != nil {
				t.Fatalf("kind %v problem %v", kind, problem)
			}
			if e.Format != tt.format || e.Severity != tt.sev || e.Program != tt.program || e.Host != tt.host || e.Message != tt.message {
				t.Errorf("got format %d sev %q program %q host %q message %q", e.Format, e.Severity, e.Program, e.Host, e.Message)
			}
			if !e.Time.Equal(tt.time) {
				t.Errorf("time = %v, want %v", e.Time, tt.time)
			}
			if tt.field[0] != "" {
				if v, ok := e.Field(tt.field[0]); !ok || v != tt.field[1] {
					t.Errorf("field %s = %q, %v; want %q", tt.field[0], v, ok, tt.field[1])
				}
			}
		})
	}
}

func TestParseRefusesText(t *testing.T) {
	for _, line := range []string{
		"Hello world", "NAME   READY   STATUS", "Events:", "[notatime] x", "level=info", "  Normal  Pulled  3m  kubelet  ok",
		"WARN[oops] x", "2026-11-29 garbage",
		// an item of a numbered list, not dmesg's uptime (which has microseconds)
		"[1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]",
	} {
		if e, kind, _ := Parse(line, time.Time{}); kind == KindEntry {
			t.Errorf("%q read as an entry: %+v", line, e)
		}
	}
}

// An application's log line with an ISO time and a bracketed level (CoreDNS's
// "[FATAL] plugin/loop: ...") is not a journal line whose host is "[FATAL]": the message
// keeps its plugin's name.
func TestBracketedLevelIsNoJournalHost(t *testing.T) {
	line := `2019-04-25T23:30:57.068Z [FATAL] plugin/loop: Loop (127.0.0.1:49602 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting.`
	e, kind, _ := ParseJournal(line, time.Time{})
	if kind == KindEntry && (e.Host == "[FATAL]" || !strings.Contains(e.Message, "plugin/loop")) {
		t.Errorf("read as a journal entry of host %q, program %q: %q", e.Host, e.Program, e.Message)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`Nov 29 19:00:01.250000 node-a containerd[600]: time="2026-11-29T19:00:01.249Z" level=error msg="x" error="y"`,
		`Sun 2026-11-29 19:00:01 UTC node-a kubelet[77]: F1129 19:00:01.000000 77 s.go:1] boom`,
		`[12345.678901] oom-kill:constraint=CONSTRAINT_MEMCG,task=java,pid=1`, `[Sun Nov 29 19:00:01 2026] x`,
		`ERRO[0001] x   k=v`, `WARN[2025-01-02T03:04:05Z] x`, `● kubelet.service - x`, `     Active: failed`,
		`level=error msg="x`, `2022-07-01 09:31:06.551 [ERROR][1] plugin.go 121: x`, `2022-07-01 09:31:06 [WARNING] x`, `time="" level= msg=`, "[", "WARN[", "Sun ", "Nov 29 19:00:01.", `2026-11-29 19:00:01 UTC x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, kind, _ := Parse(line, time.Time{})
		if kind == KindEntry {
			e.Fields()
			e.Field("pod")
		}
	})
}
