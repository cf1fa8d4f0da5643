package analyze_test

import (
	"reflect"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

func TestRefusedConnections(t *testing.T) {
	g := load(t, map[string]any{
		bundle.FragmentPath(bundle.FragmentText, "client.txt"): "$ telnet  10.0.0.5 6379\nTrying 10.0.0.5...\ntelnet: Unable to connect to remote host: Connection refused\n" +
			"curl: (7) Failed to connect to web.shop port 80 after 1 ms: Connection refused\n" +
			"curl: (7) Failed to connect to 10.0.0.6 port 8080: Connection refused\n" +
			"nc: connect to 10.0.0.7 port 9000 (tcp) failed: Connection refused\n" +
			"telnet: Unable to connect to remote host: Connection refused\n" + // no command or Trying line: no host
			"dial tcp 10.0.0.8:53: i/o timeout\n",
		bundle.LogPath("shop", "app", "app", false): `level=error msg="get failed" err="dial tcp [fd00::1]:443: connect: connection refused"` + "\n",
	})
	type row struct {
		Host string
		Port int
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row {
		var out []row
		for _, r := range v.RefusedConnections() {
			out = append(out, row{r.Host, r.Port})
		}
		return out
	})
	want := []row{{"10.0.0.5", 6379}, {"web.shop", 80}, {"10.0.0.6", 8080}, {"10.0.0.7", 9000}, {"fd00::1", 443}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestTimedDeletionsAndPastedCommands(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(podObj("shop", "a", "n1", nil)),
		bundle.FragmentPath(bundle.FragmentText, "out.txt"): "pod \"a\" deleted\n\nreal\t0m41.459s\nuser\t0m0.175s\n" +
			"pod \"b\" deleted from shop namespace\nreal 2m3s\n" +
			"pod \"c\" deleted\nno time here\n",
		bundle.FragmentPath(bundle.FragmentText, "cmd.txt"): "    command: [\"/bin/bash\", \"-c\", \"sleep 20\"]\n    command: [oops\n",
	})
	type row struct {
		Pod  string
		Took time.Duration
	}
	got := viewOf(t, g, allKinds, func(v *analyze.View) []row {
		var out []row
		for _, d := range v.TimedDeletions() {
			out = append(out, row{d.Pod, d.Took})
		}
		return out
	})
	want := []row{{"a", 41459 * time.Millisecond}, {"b", 123 * time.Second}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deletions: got %v, want %v", got, want)
	}
	cmds := viewOf(t, g, allKinds, func(v *analyze.View) [][]string {
		var out [][]string
		for _, c := range v.PastedCommands() {
			out = append(out, c.Argv)
		}
		return out
	})
	if want := [][]string{{"/bin/bash", "-c", "sleep 20"}}; !reflect.DeepEqual(cmds, want) {
		t.Errorf("commands: got %v, want %v", cmds, want)
	}
}

func TestPID1IgnoresSIGTERM(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/bin/bash", "-c", "sleep 2000"}, true},
		{[]string{"sh", "-c", "while true; do date; sleep 5; done"}, true},
		{[]string{"sleep", "infinity"}, true},
		{[]string{"sh", "-c", "exec sleep 100"}, true},
		{[]string{"sh", "-c", "cd /app && exec ./server"}, false},
		{[]string{"sh", "-c", "trap 'exit 0' TERM; sleep 100 & wait"}, false},
		{[]string{"/app/server", "-c", "config"}, false},
		{nil, false},
	} {
		if _, got := analyze.PID1IgnoresSIGTERM(c.argv); got != c.want {
			t.Errorf("%q: got %v, want %v", c.argv, got, c.want)
		}
	}
}

func TestPastedPartitionAndRevisions(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(podObj("shop", "web-0", "n1", nil)),
		bundle.FragmentPath(bundle.FragmentText, "sts.yaml"): "updateStrategy:\n    rollingUpdate:\n      partition: 3\n    type: RollingUpdate\n" +
			"partition: 9\n", // not under rollingUpdate
		bundle.FragmentPath(bundle.FragmentText, "pods.txt"): "      controller-revision-hash: web-1a\n      statefulset.kubernetes.io/pod-name: web-0\n--\n" +
			"      controller-revision-hash: web-2b\n--\n" + // no pod name: dropped
			"      statefulset.kubernetes.io/pod-name: web-2\n      controller-revision-hash: web-2b\n",
	})
	parts := viewOf(t, g, allKinds, func(v *analyze.View) []int {
		var out []int
		for _, p := range v.PastedPartitions() {
			out = append(out, p.Partition)
		}
		return out
	})
	if want := []int{3}; !reflect.DeepEqual(parts, want) {
		t.Errorf("partitions: got %v, want %v", parts, want)
	}
	revs := viewOf(t, g, allKinds, func(v *analyze.View) []string {
		var out []string
		for _, r := range v.PastedPodRevisions() {
			out = append(out, r.Pod+"="+r.Revision)
		}
		return out
	})
	if want := []string{"web-0=web-1a", "web-2=web-2b"}; !reflect.DeepEqual(revs, want) {
		t.Errorf("revisions: got %v, want %v", revs, want)
	}
}
