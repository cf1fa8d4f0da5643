package collect

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkCollectNamespace collects a namespace of 1000 running pods with two
// containers each and 1000 events: 2000 log sources and the lists, through the fake
// client, so it measures the collector's own work rather than an API server.
func BenchmarkCollectNamespace(b *testing.B) {
	objs := shopFixture()
	for i := range 1000 {
		p := &corev1.Pod{ObjectMeta: objMeta("shop", fmt.Sprintf("load-%04d", i), fmt.Sprintf("uid-load-%d", i)),
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app"}, {Name: "proxy"}}}}
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name,
				ContainerID: "containerd://" + c.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		}
		ev := &corev1.Event{ObjectMeta: objMeta("shop", fmt.Sprintf("load-%04d.1", i), fmt.Sprintf("uid-ev-load-%d", i)),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: p.Name, UID: p.UID}, Reason: "Started"}
		objs = append(objs, runtime.Object(p), ev)
	}
	client, _ := newFakeClient(objs...)
	logger := logrus.New()
	logger.SetLevel(logrus.WarnLevel)
	dir := b.TempDir()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		opts := Options{Target: filepath.Join(dir, fmt.Sprintf("out-%d.tar.gz", n)), Namespaces: []string{"shop"}, Logger: logger}
		res, err := Run(context.Background(), client, opts)
		if err != nil {
			b.Fatal(err)
		}
		if f := res.Incomplete(); len(f) > 0 {
			b.Fatalf("failed sources: %v", f)
		}
	}
}
