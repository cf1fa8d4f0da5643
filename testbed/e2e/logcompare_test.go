package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The comparison accepts a served log that differs from the live one only where
// collection put redaction marks, including a several-line secret under one mark.
func TestRedactedLines(t *testing.T) {
	live := "starting\npassword=PFCANARY-1\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\nready\n"
	cases := []struct {
		served string
		want   int
	}{
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n<redacted:private-key:2db540>\nready\n", 2},
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n<redacted:private-key:2db540>\nready, changed\n", 0},
		{"starting\npassword=<redacted:credential-assignment:c6e060>\n", 0},
		{live, 0},
	}
	for _, c := range cases {
		if got := redactedLines([]byte(live), []byte(c.served)); got != c.want {
			t.Errorf("redactedLines(%q) = %d, want %d", c.served, got, c.want)
		}
	}
}

// A served log lies between the two live reads. Only a container that started again
// between the reads may have another instance's log in the bundle: a prefix of a live
// read (empty when the new instance had printed nothing yet), the beginning of one read
// after collection, or the kubelet's answer for an instance it removed. Without a
// restart, each of these is a difference.
func TestCompareLog(t *testing.T) {
	const gone = "unable to retrieve container logs for containerd://4f2a9c"
	cases := []struct {
		name, l1, l2, served string
		restarted            bool
		want                 string // the kind of difference; "" for none
	}{
		{"equal to the first read", "a\nb\n", "a\nb\nc\n", "a\nb\n", false, ""},
		{"between the reads", "a\n", "a\nb\nc\n", "a\nb\n", false, ""},
		{"restarted before collection", "started\nstalled\n", "started\nstalled\n", "started\n", true, "restarted"},
		{"restarted before collection, nothing printed yet", "started\n", "started\n", "", true, "restarted"},
		{"restarted after collection", "started\n", "started\n", "started\nstalled\n", true, "restarted"},
		{"instance removed before collection", "started\n", "started\n", gone, true, "restarted"},
		{"instance removed before the first read", gone, "started\n", "started\n", true, ""},
		{"instance removed at both reads, another collected", gone, gone, "started\n", true, "unreadable"},
		{"instance removed at both reads, the same answer collected", gone, gone, gone, false, ""},
		{"instance removed at both reads without a restart", gone, gone, "started\n", false, "unreadable"},
		{"a prefix without a restart", "started\nstalled\n", "started\nstalled\n", "started\n", false, "body"},
		{"empty without a restart", "started\n", "started\n", "", false, "body"},
		{"longer without a restart", "started\n", "started\n", "started\nstalled\n", false, "body"},
		{"removed instance without a restart", "started\n", "started\n", gone, false, "body"},
		{"another text after a restart", "started\nstalled\n", "started\nstalled\n", "stopped\n", true, "body"},
		{"another text", "started\nstalled\n", "started\nstalled\n", "stopped\n", false, "body"},
		{"redacted", "password=PFCANARY-1\n", "password=PFCANARY-1\n", "password=<redacted:credential-assignment:c6e060>\n", false, "redacted"},
	}
	for _, c := range cases {
		diff := compareLog([]byte(c.l1), []byte(c.l2), []byte(c.served), c.restarted)
		if kind, _, _ := strings.Cut(diff, ":"); kind != c.want {
			t.Errorf("%s: compareLog = %q, want kind %q", c.name, diff, c.want)
		}
	}
}

// A log request's container restarted when its count grew between the first read and
// the last; a container the first read did not see restarted only if the last says so.
func TestRestartedDuring(t *testing.T) {
	pod := func(name string, counts ...int32) corev1.Pod {
		p := corev1.Pod{}
		p.Name = name
		for i, n := range counts {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: fmt.Sprintf("c%d", i), RestartCount: n})
		}
		return p
	}
	first := restartCounts([]corev1.Pod{pod("spooler", 2, 0)})
	last := restartCounts([]corev1.Pod{pod("spooler", 3, 0), pod("late", 1)})
	cases := []struct {
		key  string
		want bool
	}{
		{"GET /api/v1/namespaces/ns/pods/spooler/log?container=c0", true},
		{"GET /api/v1/namespaces/ns/pods/spooler/log?container=c0&previous=true", true},
		{"GET /api/v1/namespaces/ns/pods/spooler/log?container=c1", false},
		{"GET /api/v1/namespaces/ns/pods/late/log?container=c0", true},
		{"GET /api/v1/namespaces/ns/pods/other/log?container=c0", false},
		{"GET /api/v1/namespaces/ns/pods", false},
	}
	for _, c := range cases {
		if got := restartedDuring(c.key, first, last); got != c.want {
			t.Errorf("restartedDuring(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

// A pods table's row depends on its own containers' restarts; any other table's rows
// (workloads, endpoints) on a restart of any container.
func TestRowRestarted(t *testing.T) {
	w := restartWindow{
		first: map[string]int32{"spooler/spooler": 2, "web/nginx": 0},
		last:  map[string]int32{"spooler/spooler": 3, "web/nginx": 0},
	}
	pods := w.rowRestarted("GET /api/v1/namespaces/ns/pods (table)")
	if !pods("ns/spooler") || pods("ns/web") {
		t.Errorf("pods rows: spooler %v, web %v; want true, false", pods("ns/spooler"), pods("ns/web"))
	}
	if deploy := w.rowRestarted("GET /apis/apps/v1/namespaces/ns/deployments (table)"); !deploy("ns/web") {
		t.Error("a deployment's row does not see the namespace's restart")
	}
	still := restartWindow{first: w.last, last: w.last}
	if still.rowRestarted("GET /apis/apps/v1/namespaces/ns/deployments (table)")("ns/web") {
		t.Error("a row sees a restart where no count grew")
	}
}
