package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// kernelLog is a memory cgroup OOM kill as a 6.x kernel reports it, amid unrelated lines.
const kernelLog = `2026-11-29T09:59:01,000001+00:00 eth0: renamed from tmp4f2a1
2026-11-29T09:59:02,000002+00:00 IPv6: ADDRCONF(NETDEV_CHANGE): vethb1c2: link becomes ready
2026-11-29T09:59:03,000003+00:00 cni0: port 2(vethb1c2) entered forwarding state
2026-11-29T10:00:01,100000+00:00 app invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999
2026-11-29T10:00:01,100001+00:00 CPU: 1 PID: 4567 Comm: app Not tainted 6.8.0 #1
2026-11-29T10:00:01,100002+00:00 Hardware name: QEMU Standard PC
2026-11-29T10:00:01,100003+00:00 Call Trace:
2026-11-29T10:00:01,100004+00:00  <TASK>
2026-11-29T10:00:01,100005+00:00  dump_stack_lvl+0x48/0x70
2026-11-29T10:00:01,100006+00:00  </TASK>
2026-11-29T10:00:01,100007+00:00 memory: usage 65536kB, limit 65536kB, failcnt 12
2026-11-29T10:00:01,100008+00:00 swap: usage 0kB, limit 0kB, failcnt 0
2026-11-29T10:00:01,100009+00:00 Memory cgroup stats for /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c.slice/cri-containerd-c0ffee.scope:
2026-11-29T10:00:01,100010+00:00 anon 66846720
2026-11-29T10:00:01,100011+00:00 file 0
2026-11-29T10:00:01,100012+00:00 kernel 307200
2026-11-29T10:00:01,100013+00:00 sock 0
2026-11-29T10:00:01,100014+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-c0ffee.scope,mems_allowed=0,oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c.slice/cri-containerd-c0ffee.scope,task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c.slice/cri-containerd-c0ffee.scope,task=app,pid=4567,uid=0
2026-11-29T10:00:01,100015+00:00 Memory cgroup out of memory: Killed process 4567 (app) total-vm:70000kB, anon-rss:65000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:180kB oom_score_adj:999
2026-11-29T10:00:01,100016+00:00 oom_reaper: reaped process 4567 (app), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
2026-11-29T10:05:00,000000+00:00 cni0: port 3(veth9a8b) entered blocking state
2026-11-29T10:06:00,000000+00:00 cni0: port 3(veth9a8b) entered disabled state
2026-11-29T10:07:00,000000+00:00 device veth9a8b entered promiscuous mode
`

func TestFilterOOMKeepsKillLinesAndContext(t *testing.T) {
	got := string(filterOOM([]byte(kernelLog)))
	lines := strings.Split(strings.TrimSuffix(kernelLog, "\n"), "\n")
	// Two lines either side of each OOM line (trigger at 3, memcg usage at 10, stats at
	// 12, oom-kill at 17, victim at 18, reaper at 19): the first veth line, the middle of
	// the stack trace and the last network line go.
	var want []string
	for i, l := range lines {
		if (i >= 1 && i <= 5) || (i >= 8 && i <= 21) {
			want = append(want, l)
		}
	}
	if got != strings.Join(want, "\n")+"\n" {
		t.Fatalf("filterOOM =\n%s\nwant\n%s", got, strings.Join(want, "\n")+"\n")
	}
	if out := filterOOM([]byte("eth0: link up\nnothing else\n")); len(out) != 0 {
		t.Fatalf("no OOM lines, got %q", out)
	}
}

func TestDmesgPrefersISOTimestamps(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{"dmesg --time-format iso": stdout(kernelLog)}}
	res, err := Collect(context.Background(), testOptions(t, r))
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, err := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeDmesg))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "dmesg.log", string(got), "2026-11-29T10:00:01,100015+00:00 Memory cgroup out of memory: Killed process 4567 (app)")
	if strings.Contains(string(got), "promiscuous") {
		t.Errorf("unrelated kernel lines kept: %s", got)
	}
	if src := sourceOf(t, b.Manifest, SourceDmesg); src.Status != bundle.StatusOK {
		t.Errorf("dmesg source = %+v", src)
	}
}

func TestDmesgFallsBackToPlainThenKmsg(t *testing.T) {
	r := &fakeRunner{answers: map[string]fakeAnswer{
		"dmesg --time-format iso": {out: Output{Stderr: []byte("dmesg: unrecognized option '--time-format'\n"), ExitCode: 1}},
		"dmesg":                   {out: Output{Stderr: []byte("dmesg: klogctl: Operation not permitted\n"), ExitCode: 1}},
	}}
	opts := testOptions(t, r)
	kmsg := "6,1001,5000000,-;eth0: link up\n" +
		"4,1002,123456789,-;app invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n" +
		" SUBSYSTEM=memory\n" +
		"3,1003,123456790,-;Memory cgroup out of memory: Killed process 4567 (app) total-vm:70000kB\n" +
		"6,1004,999000000,-;later unrelated 1\n6,1005,999000001,-;later unrelated 2\n6,1006,999000002,-;later unrelated 3\n"
	writeHostFile(t, opts.HostRoot, "kmsg", kmsg)
	opts.KmsgPath = filepath.Join(opts.HostRoot, "kmsg")
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := openBundle(t, res.Target)
	got, _ := b.ReadFile(bundle.NodePath("worker-1", bundle.NodeDmesg))
	want := "[    5.000000] eth0: link up\n" +
		"[  123.456789] app invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n" +
		"[  123.456790] Memory cgroup out of memory: Killed process 4567 (app) total-vm:70000kB\n" +
		"[  999.000000] later unrelated 1\n" +
		"[  999.000001] later unrelated 2\n"
	if string(got) != want {
		t.Fatalf("dmesg.log =\n%s\nwant\n%s", got, want)
	}
	steps := stepsFor(readCollection(t, b), SourceDmesg)
	if len(steps) != 3 || steps[0].Used || steps[1].Used || !steps[2].Used || steps[2].Read != opts.KmsgPath {
		t.Errorf("dmesg steps = %+v", steps)
	}
	if steps[1].Stderr != "dmesg: klogctl: Operation not permitted" {
		t.Errorf("stderr excerpt = %q", steps[1].Stderr)
	}
}

func TestDmesgFailsWhenNothingWorks(t *testing.T) {
	opts := testOptions(t, &fakeRunner{})
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	src := sourceOf(t, res.Manifest, SourceDmesg)
	if src.Status != bundle.StatusFailed {
		t.Fatalf("dmesg source = %+v", src)
	}
	mustContain(t, "dmesg error", src.Error, "dmesg is not installed", "no "+opts.KmsgPath)
}

func TestDmesgByteCapKeepsNewest(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString("[  1.000000] Memory cgroup out of memory: Killed process ")
		b.WriteString(strings.Repeat("9", 3))
		b.WriteString(" (app")
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(")\n")
	}
	r := &fakeRunner{answers: map[string]fakeAnswer{"dmesg --time-format iso": stdout(b.String())}}
	opts := testOptions(t, r)
	opts.MaxDmesgBytes = 300
	res, err := Collect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := openBundle(t, res.Target).ReadFile(bundle.NodePath("worker-1", bundle.NodeDmesg))
	if len(got) > 300 || !strings.HasSuffix(b.String(), string(got)) || !strings.HasPrefix(string(got), "[") {
		t.Fatalf("dmesg.log = %q", got)
	}
}

func TestFormatKmsgKeepsUnparsableLines(t *testing.T) {
	got := string(formatKmsg([]byte("garbage without header\n6,1,notanumber,-;x\n6,2,1500000,-;ok\n")))
	want := "garbage without header\n6,1,notanumber,-;x\n[    1.500000] ok\n"
	if got != want {
		t.Fatalf("formatKmsg = %q, want %q", got, want)
	}
}

func TestReadKmsgOfMissingDevice(t *testing.T) {
	_, err := readKmsg(context.Background(), filepath.Join(t.TempDir(), "kmsg"), 100)
	if !os.IsNotExist(err) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}
