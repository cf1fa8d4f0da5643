package node

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkFilterOOM filters a full 4 MiB ring buffer, the most a node hands over.
func BenchmarkFilterOOM(b *testing.B) {
	var buf bytes.Buffer
	for buf.Len() < 4<<20 {
		buf.WriteString("[12345.678901] cni0: port 3(veth9a8b) entered blocking state\n")
		if buf.Len()%(256<<10) < 64 {
			buf.WriteString(kernelLog)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		filterOOM(data)
	}
}

// BenchmarkContainersJSON encodes `crictl ps -a` for a busy node of 1000 containers.
func BenchmarkContainersJSON(b *testing.B) {
	items := make([]*runtimeapi.Container, 1000)
	for i := range items {
		items[i] = &runtimeapi.Container{Id: fmt.Sprintf("%064x", i), PodSandboxId: strings.Repeat("a", 64),
			Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: uint32(i % 5)},
			Image:    &runtimeapi.ImageSpec{Image: "registry.local/app:2"}, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
			CreatedAt: int64(i), Labels: podLabels("web", "uid")}
	}
	for b.Loop() {
		if _, err := containersJSON(items); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzFormatKmsg(f *testing.F) {
	f.Add([]byte("6,1001,5000000,-;eth0: link up\n SUBSYSTEM=net\n"))
	f.Add([]byte("x;y\n,,,;\n6,1,-5,-;neg\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := formatKmsg(data)
		if n, in := bytes.Count(out, []byte("\n")), bytes.Count(data, []byte("\n"))+1; n > in {
			t.Fatalf("%d lines out of %d in", n, in)
		}
		filterOOM(out)
	})
}
