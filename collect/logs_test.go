package collect

import (
	"strings"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
)

func TestReadTail(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString(" end\n")
	}
	log := b.String()
	for _, tc := range []struct {
		name  string
		limit int64
		want  string
	}{
		{"under the limit", int64(len(log)), log},
		{"no limit", 0, log},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readTail(iotest.HalfReader(strings.NewReader(log)), tc.limit)
			if err != nil || string(got) != tc.want {
				t.Errorf("readTail = %d bytes (%v), want %d", len(got), err, len(tc.want))
			}
		})
	}
	t.Run("over the limit keeps the last whole lines", func(t *testing.T) {
		got, err := readTail(iotest.OneByteReader(strings.NewReader(log)), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 1000 || len(got) < 900 || !strings.HasSuffix(log, string(got)) {
			t.Fatalf("readTail kept %d bytes, not a suffix of at most 1000", len(got))
		}
		if i := len(log) - len(got); log[i-1] != '\n' {
			t.Errorf("tail starts mid-line: %q", got[:20])
		}
	})
	t.Run("read error", func(t *testing.T) {
		if _, err := readTail(iotest.TimeoutReader(strings.NewReader(log)), 100); err == nil {
			t.Error("a failing reader gave no error")
		}
	})
}

func TestNotStarted(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   *corev1.ContainerStatus
		want string
	}{
		{"unreported", nil, "has not reported"},
		{"waiting", &corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError"}}},
			"waiting: CreateContainerConfigError"},
		{"running", &corev1.ContainerStatus{ContainerID: "containerd://1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, ""},
		{"crash loop", &corev1.ContainerStatus{RestartCount: 3,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "containerd://2"}}}, ""},
		{"terminated without a container", &corev1.ContainerStatus{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerStatusUnknown"}}}, "never started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notStarted(tc.st)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("notStarted = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLogTargetsCoverEveryContainerKind(t *testing.T) {
	p := &corev1.Pod{}
	p.Namespace, p.Name = "shop", "web"
	p.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	p.Spec.Containers = []corev1.Container{{Name: "app"}, {Name: "sidecar"}}
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}
	p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", ContainerID: "containerd://d"}}
	var got []string
	for _, target := range logTargets(p) {
		got = append(got, target.sourceName())
		if target.container == "debug" && target.status == nil {
			t.Error("ephemeral container status not linked")
		}
	}
	want := "logs/shop/web/init logs/shop/web/app logs/shop/web/sidecar logs/shop/web/debug"
	if strings.Join(got, " ") != want {
		t.Errorf("targets = %v, want %s", got, want)
	}
}

func TestKubeletLogGone(t *testing.T) {
	cases := map[string]bool{
		"unable to retrieve container logs for containerd://4f1c2a\n":  true,
		"unable to retrieve container logs for cri-o://abc":            true,
		"unable to retrieve container logs for ":                       false,
		"2026-11-29T10:00:00Z unable to retrieve container logs for x": false,
		"unable to retrieve container logs for x\nmore output":         false,
		"fatal: connection refused":                                    false,
	}
	for body, want := range cases {
		if _, got := kubeletLogGone([]byte(body)); got != want {
			t.Errorf("kubeletLogGone(%q) = %v, want %v", body, got, want)
		}
	}
}
