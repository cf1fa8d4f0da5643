package logline

import (
	"strings"
	"testing"
	"time"
)

var ref = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestParseJournalFormats(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		time    time.Time
		sev     byte
		program string
		pid     int32
		source  string
		message string
		fields  []Field
		kind    Kind
		problem string
	}{
		{
			name: "short-iso with structured klog",
			line: `2026-11-29T19:00:01+0000 n1 kubelet[812]: E1129 19:00:01.123456     812 pod_workers.go:1338] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with ErrImagePull: \"boom\"" pod="shop/web-1" podUID="3f2a"`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 123456000, time.UTC), sev: 'E', program: "kubelet", pid: 812,
			source: "pod_workers.go:1338", message: "Error syncing pod, skipping",
			fields: []Field{{"err", `failed to "StartContainer" for "app" with ErrImagePull: "boom"`}, {"pod", "shop/web-1"}, {"podUID", "3f2a"}},
		},
		{
			name: "short-iso with colon zone and microseconds in the prefix",
			line: `2026-11-29T19:00:01.500000+00:00 n1 kubelet[812]: I1129 19:00:01.123456     812 kubelet.go:2546] "SyncLoop ADD" source="api" pods=["shop/web-1" "shop/web-2"]`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 500000000, time.UTC), sev: 'I', program: "kubelet", pid: 812,
			source: "kubelet.go:2546", message: "SyncLoop ADD",
			fields: []Field{{"source", "api"}, {"pods", `["shop/web-1" "shop/web-2"]`}},
		},
		{
			name: "short format takes the year from the reference",
			line: `Nov  9 07:05:03 node-a kubelet[77]: W1109 07:05:03.000001      77 reflector.go:561] "Failed to watch" err="context canceled"`,
			time: time.Date(2026, 11, 9, 7, 5, 3, 1000, time.UTC), sev: 'W', program: "kubelet", pid: 77,
			source: "reflector.go:561", message: "Failed to watch", fields: []Field{{"err", "context canceled"}},
		},
		{
			name: "short format in December read in a January bundle is last year",
			line: `Dec 31 23:59:59 n1 kubelet[1]: I1231 23:59:59.000000       1 x.go:1] "late"`,
			time: time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC), sev: 'I', program: "kubelet", pid: 1, source: "x.go:1", message: "late",
		},
		{
			name: "bare klog with escapes and a non-ASCII value",
			line: `I1129 19:00:01.000200    4242 kuberuntime_manager.go:1100] "Message with \"quotes\"\tand tab" containerName="app" msg="caf\u00e9 ok" n=3`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 200000, time.UTC), sev: 'I', pid: 4242,
			source: "kuberuntime_manager.go:1100", message: "Message with \"quotes\"\tand tab",
			fields: []Field{{"containerName", "app"}, {"msg", "café ok"}, {"n", "3"}},
		},
		{
			name: "unstructured klog message",
			line: `I1129 19:00:01.000000       1 server.go:10] Version: v1.37.2`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 0, time.UTC), sev: 'I', pid: 1, source: "server.go:10", message: "Version: v1.37.2",
		},
		{
			name: "systemd line without klog header",
			line: `2026-11-29T19:00:00+0000 n1 systemd[1]: Started kubelet.service - kubelet: The Kubernetes Node Agent.`,
			time: time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC), program: "systemd", pid: 1,
			message: "Started kubelet.service - kubelet: The Kubernetes Node Agent.",
		},
		{
			name: "structured value holding braces and a multi-line marker",
			line: `I1129 19:00:01.000000       1 x.go:1] "Probe failed" probeType="Readiness" pod={"name":"a b","namespace":"ns"} output=<`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 0, time.UTC), sev: 'I', pid: 1, source: "x.go:1", message: "Probe failed",
			fields: []Field{{"probeType", "Readiness"}, {"pod", `{"name":"a b","namespace":"ns"}`}, {"output", "<"}},
		},
		{
			name: "truncated structured message keeps what it has",
			line: `I1129 19:00:01.000000       1 x.go:1] "Cut off in the mid`,
			time: time.Date(2026, 11, 29, 19, 0, 1, 0, time.UTC), sev: 'I', pid: 1, source: "x.go:1", message: "Cut off in the mid",
		},
		{name: "boot marker", line: "-- Boot 4f1c2a9e0b7d4e51a3c2f0e9d8b7a615 --", kind: KindMarker},
		{name: "continuation", line: "    	goroutine 1 [running]:", kind: KindContinuation},
		{name: "garbage", line: "\x00\x01binary junk", kind: KindGarbage, problem: "not a journal or klog line"},
		{name: "truncated prefix", line: "2026-11-29T19:00:01+0000 n1 kub", kind: KindGarbage, problem: "no program[pid]: after the timestamp"},
		{name: "truncated klog header", line: "2026-11-29T19:00:01+0000 n1 kubelet[1]: I1129 19:0", kind: KindGarbage, problem: "truncated klog header"},
		{name: "bad timestamp", line: "2026-13-45T99:00:01+0000 n1 kubelet[1]: x", kind: KindGarbage, problem: "unreadable timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ref
			if strings.HasPrefix(tt.line, "Dec") {
				r = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
			}
			e, kind, problem := ParseJournal(tt.line, r)
			if kind != tt.kind {
				t.Fatalf("kind = %v, want %v (problem %v)", kind, tt.kind, problem)
			}
			gotProblem := ""
			if problem != nil {
				gotProblem = problem.Error()
			}
			if gotProblem != tt.problem {
				t.Fatalf("problem = %q, want %q", gotProblem, tt.problem)
			}
			if kind != KindEntry {
				return
			}
			if !e.Time.Equal(tt.time) {
				t.Errorf("time = %v, want %v", e.Time, tt.time)
			}
			if e.Severity != tt.sev || e.Program != tt.program || e.PID != tt.pid || e.Source != tt.source || e.Message != tt.message {
				t.Errorf("got sev %q program %q pid %d source %q message %q", e.Severity, e.Program, e.PID, e.Source, e.Message)
			}
			got := e.Fields()
			if len(got) != len(tt.fields) {
				t.Fatalf("fields = %q, want %q", got, tt.fields)
			}
			for i := range got {
				if got[i] != tt.fields[i] {
					t.Errorf("field %d = %q, want %q", i, got[i], tt.fields[i])
				}
			}
		})
	}
}

func TestJournalFieldLookupAndLists(t *testing.T) {
	e, _, _ := ParseJournal(`I1129 19:00:01.000000 1 x.go:1] "SyncLoop ADD" source="api" pods=["shop/a" "shop/b"] podUID="u-1"`, ref)
	if v, ok := e.Field("podUID"); !ok || v != "u-1" {
		t.Errorf("podUID = %q, %v", v, ok)
	}
	if _, ok := e.Field("missing"); ok {
		t.Error("found a field that is not there")
	}
	v, _ := e.Field("pods")
	if got := ListValue(v); strings.Join(got, ",") != "shop/a,shop/b" {
		t.Errorf("pods = %q", got)
	}
	if got := ListValue("[shop/a shop/b]"); strings.Join(got, ",") != "shop/a,shop/b" {
		t.Errorf("unquoted list = %q", got)
	}
}

func FuzzParseJournal(f *testing.F) {
	seeds := []string{
		`2026-11-29T19:00:01+0000 n1 kubelet[812]: E1129 19:00:01.123456     812 pod_workers.go:1338] "Error syncing pod, skipping" err="x \"y\"" pod="shop/web-1"`,
		`Nov 29 19:00:01 host kubelet[123]: I1129 19:00:01.123456  123 file.go:42] "msg" key="value"`,
		`I1129 19:00:01.123456  123 file.go:42] "msg" k=[a "b" {c}] v={"x":"]"} w=<`,
		`I1129 19:00:01.`, `-- Boot x --`, "\t", `"`, `2026-11-29T19:00:01+0000 n1 kubelet[`, `E0000 00:00:00.0 0 :0] "\`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, kind, _ := ParseJournal(line, ref)
		if kind == KindEntry {
			e.Fields()
			e.Field("pod")
			ListValue(e.Message)
		}
	})
}

// A journal line a copy indented is an entry, and a klog multi-line value joined with
// its lines ends at the " >" the entry's next keys follow.
func TestIndentedJournalLineAndJoinedValue(t *testing.T) {
	line := ` Feb 12 18:28:24 maciej kubelet[1234]: E0212 18:28:24.205197    1234 kuberuntime_container.go:590] "PreStop hook failed" err=<command 'a > b' exited with 2: boom> pod="scylla/db-0" podUID=f7553c4f containerName="scylla"`
	e, kind, _ := ParseJournal(line, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if kind != KindEntry || e.Program != "kubelet" || e.Host != "maciej" {
		t.Fatalf("kind %v program %q host %q, want the kubelet's entry on maciej", kind, e.Program, e.Host)
	}
	got := map[string]string{}
	ScanFields(e.FieldText, func(k, raw string) bool { got[k] = raw; return true })
	if got["err"] != "<command 'a > b' exited with 2: boom>" || FieldValue(got["pod"]) != "scylla/db-0" || FieldValue(got["containerName"]) != "scylla" {
		t.Errorf("fields %q", got)
	}
	// An indented line that is no journal line stays a continuation.
	if _, kind, _ := ParseJournal("   at com.example.Main(Main.java:12)", time.Time{}); kind != KindContinuation {
		t.Errorf("an indented stack frame read as %v", kind)
	}
	if _, kind, _ := ParseJournal("\tFeb is when the bill comes", time.Time{}); kind != KindContinuation {
		t.Errorf("an indented sentence read as %v", kind)
	}
}

// A program's log line whose level follows its RFC 3339 time (Rust's tracing, zap's
// console encoder) is no syslog line with a host named after the level.
func TestALevelIsNoHost(t *testing.T) {
	for _, line := range []string{
		"2023-11-09T11:42:47.586457Z ERROR linkerd_network_validator: Unable to connect to validator",
		"2023-11-09T11:42:46.686000Z  INFO linkerd_network_validator: Listening for connections on 0.0.0.0:4140",
	} {
		if e, kind, _ := ParseJournal(line, time.Time{}); kind == KindEntry && e.Format == FormatJournal {
			t.Errorf("%q read as a journal line of host %q", line, e.Host)
		}
	}
	e, kind, _ := ParseJournal("2023-11-09T11:42:47.586457Z worker-1 kubelet[912]: E1109 11:42:47.586457     912 pod_workers.go:1300] boom", time.Time{})
	if kind != KindEntry || e.Host != "worker-1" || e.Program != "kubelet" {
		t.Errorf("a syslog line lost its host: %+v", e)
	}
}
