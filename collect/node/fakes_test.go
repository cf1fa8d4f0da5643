package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podflow.dev/podflow/bundle"
)

// fakeRunner answers commands from a table keyed by "name arg0 arg1" (the command and
// its selector); anything else is "not installed".
type fakeRunner struct {
	mu      sync.Mutex
	answers map[string]fakeAnswer
	calls   [][]string
}

type fakeAnswer struct {
	out Output
	err error
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) (Output, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]string{name}, args...))
	key := name
	for i := 0; i < 2 && i < len(args); i++ {
		key += " " + args[i]
	}
	if a, ok := f.answers[key]; ok {
		return a.out, a.err
	}
	if a, ok := f.answers[name]; ok {
		return a.out, a.err
	}
	return Output{}, fmt.Errorf("run %s: %w", name, exec.ErrNotFound)
}

func stdout(s string) fakeAnswer { return fakeAnswer{out: Output{Stdout: []byte(s)}} }

// testClock is the instant every test collects at.
var testClock = time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC)

// testOptions collects into a temporary host root with no runtime socket and a runner
// that knows no command, so each test adds only what it exercises.
func testOptions(t *testing.T, r Runner) Options {
	t.Helper()
	root := t.TempDir()
	return Options{
		NodeName:       "worker-1",
		HostRoot:       root,
		Target:         filepath.Join(t.TempDir(), "node.tar.gz"),
		Runner:         r,
		KmsgPath:       filepath.Join(root, "no-kmsg"),
		PodflowVersion: "test",
		Now:            func() time.Time { return testClock },
	}
}

func openBundle(t *testing.T, p string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(p, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if problems := bundle.Verify(b); len(problems) != 0 {
		t.Fatalf("bundle does not verify: %v", problems)
	}
	return b
}

func writeHostFile(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeCRI is an in-process runtime serving the read-only subset podflow uses.
type fakeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	images     []*runtimeapi.Image
	podStatus  map[string]*runtimeapi.PodSandboxStatusResponse
	ctrStatus  map[string]*runtimeapi.ContainerStatusResponse
	failImages bool
	// statusDelay slows each status call, to exercise the step timeout.
	statusDelay time.Duration

	mu       sync.Mutex
	verbose  []bool
	listedCF []*runtimeapi.ContainerFilter
}

func (f *fakeCRI) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "containerd", RuntimeVersion: "v2.2.0", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeCRI) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: f.sandboxes}, nil
}

func (f *fakeCRI) ListContainers(_ context.Context, r *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	f.listedCF = append(f.listedCF, r.GetFilter())
	f.mu.Unlock()
	return &runtimeapi.ListContainersResponse{Containers: f.containers}, nil
}

func (f *fakeCRI) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	if f.failImages {
		return nil, status.Error(codes.Internal, "image store is locked")
	}
	return &runtimeapi.ListImagesResponse{Images: f.images}, nil
}

func (f *fakeCRI) PodSandboxStatus(_ context.Context, r *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	f.verbose = append(f.verbose, r.GetVerbose())
	f.mu.Unlock()
	if s, ok := f.podStatus[r.GetPodSandboxId()]; ok {
		return s, nil
	}
	return nil, status.Errorf(codes.NotFound, "an error occurred when try to find sandbox %q: not found", r.GetPodSandboxId())
}

func (f *fakeCRI) ContainerStatus(ctx context.Context, r *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	select {
	case <-time.After(f.statusDelay):
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	f.mu.Lock()
	f.verbose = append(f.verbose, r.GetVerbose())
	f.mu.Unlock()
	if s, ok := f.ctrStatus[r.GetContainerId()]; ok {
		return s, nil
	}
	return nil, status.Errorf(codes.NotFound, "an error occurred when try to find container %q: not found", r.GetContainerId())
}

// serveCRI listens on <root>/run/containerd/containerd.sock, where the default endpoint
// points once the host root is applied.
func serveCRI(t *testing.T, root string, f *fakeCRI) {
	t.Helper()
	sock := filepath.Join(root, "run", "containerd", "containerd.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("fake CRI server: %v", err)
		}
	})
}

func sourceOf(t *testing.T, m *bundle.Manifest, name string) bundle.Source {
	t.Helper()
	s := m.Source(name)
	if s == nil {
		t.Fatalf("manifest has no source %q; sources: %+v", name, m.Sources)
	}
	return *s
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}
