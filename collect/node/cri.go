package node

import (
	"context"
	"errors"
	"fmt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podflow.dev/podflow/bundle"
)

// CRIClient is the subset of the CRI that podflow reads. Every call is read-only.
type CRIClient interface {
	Version(ctx context.Context) (*runtimeapi.VersionResponse, error)
	ListPodSandbox(ctx context.Context) ([]*runtimeapi.PodSandbox, error)
	ListContainers(ctx context.Context) ([]*runtimeapi.Container, error)
	ListImages(ctx context.Context) ([]*runtimeapi.Image, error)
	// PodSandboxStatus and ContainerStatus ask for verbose info, as `crictl inspectp`
	// and `crictl inspect` do: the runtime's own view (runtime spec, pid, errors).
	PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatusResponse, error)
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatusResponse, error)
	Close() error
}

// maxCRIMessage matches the kubelet's limit, so anything the kubelet can read we can too.
const maxCRIMessage = 16 << 20

// inspectWorkers bounds concurrent status calls, to go easy on a runtime that may be
// the very thing in trouble.
const inspectWorkers = 4

// DialCRI connects to a CRI runtime listening on a unix socket. endpoint is the name
// the user gave, kept for messages; socket is the resolved path.
func DialCRI(_ context.Context, endpoint, socket string) (CRIClient, error) {
	conn, err := grpc.NewClient("unix://"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxCRIMessage)))
	if err != nil {
		return nil, fmt.Errorf("connect to runtime endpoint %s: %w", endpoint, err)
	}
	return &grpcCRI{conn: conn, rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn)}, nil
}

type grpcCRI struct {
	conn *grpc.ClientConn
	rt   runtimeapi.RuntimeServiceClient
	img  runtimeapi.ImageServiceClient
}

func (g *grpcCRI) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	return g.rt.Version(ctx, &runtimeapi.VersionRequest{})
}

func (g *grpcCRI) ListPodSandbox(ctx context.Context) ([]*runtimeapi.PodSandbox, error) {
	r, err := g.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{}})
	return r.GetItems(), err
}

func (g *grpcCRI) ListContainers(ctx context.Context) ([]*runtimeapi.Container, error) {
	// An empty filter (no state) is `crictl ps -a`: exited containers explain crashes.
	r, err := g.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{}})
	return r.GetContainers(), err
}

func (g *grpcCRI) ListImages(ctx context.Context) ([]*runtimeapi.Image, error) {
	r, err := g.img.ListImages(ctx, &runtimeapi.ListImagesRequest{Filter: &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{}}})
	return r.GetImages(), err
}

func (g *grpcCRI) PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatusResponse, error) {
	return g.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
}

func (g *grpcCRI) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatusResponse, error) {
	return g.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
}

func (g *grpcCRI) Close() error { return g.conn.Close() }

// endpointSocket returns the socket path of a unix endpoint ("unix:///run/x.sock" or a
// bare absolute path, as crictl accepts).
func endpointSocket(endpoint string) (string, error) {
	p := endpoint
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		p = rest
	} else if strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("runtime endpoint %q: only unix sockets are supported", endpoint)
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("runtime endpoint %q: socket path must be absolute", endpoint)
	}
	return p, nil
}

// criState accumulates the CRI step's files and errors; inspections add to it concurrently.
type criState struct {
	mu    sync.Mutex
	files []string
	errs  []string
}

func (s *criState) file(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = append(s.files, p)
}

func (s *criState) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

// collectCRI reads the runtime's pods, containers and images and inspects each pod and
// container, writing what crictl would print.
func (c *collector) collectCRI(ctx context.Context) bundle.Source {
	src := bundle.Source{Name: SourceCRI}
	endpoint := c.opts.RuntimeEndpoint
	fail := func(format string, args ...any) bundle.Source {
		src.Status, src.Error = bundle.StatusFailed, fmt.Sprintf(format, args...)
		c.step(Step{Source: SourceCRI, Read: endpoint, Error: src.Error})
		return src
	}
	sockPath, err := endpointSocket(endpoint)
	if err != nil {
		return fail("%v", err)
	}
	socket := c.hostPath(sockPath)
	info, err := os.Stat(socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("runtime endpoint %s: socket %s does not exist (is the runtime running? check --runtime-endpoint and --host-root)", endpoint, socket)
	case err != nil:
		return fail("runtime endpoint %s: %v", endpoint, err)
	case info.Mode()&fs.ModeSocket == 0:
		return fail("runtime endpoint %s: %s is not a socket", endpoint, socket)
	}
	client, err := c.opts.DialCRI(ctx, endpoint, socket)
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		if err := client.Close(); err != nil {
			c.log.WithError(err).Debug("closing the CRI connection failed; collection is complete anyway")
		}
	}()
	t0 := time.Now()
	v, err := client.Version(ctx)
	if err != nil {
		return fail("runtime endpoint %s: RuntimeService/Version: %v", endpoint, err)
	}
	c.step(Step{Source: SourceCRI, Read: endpoint + " RuntimeService/Version", DurationMS: time.Since(t0).Milliseconds(), Used: true})
	c.mu.Lock()
	c.rt = &RuntimeInfo{Endpoint: endpoint, RuntimeName: v.GetRuntimeName(), RuntimeVersion: v.GetRuntimeVersion(), RuntimeAPIVersion: v.GetRuntimeApiVersion()}
	c.mu.Unlock()

	st := &criState{}
	pods := criCall(c, st, "RuntimeService/ListPodSandbox", bundle.NodeCRIPods, func() ([]*runtimeapi.PodSandbox, []byte, error) {
		items, err := client.ListPodSandbox(ctx)
		if err != nil {
			return nil, nil, err
		}
		data, err := podsJSON(items)
		return items, data, err
	})
	containers := criCall(c, st, "RuntimeService/ListContainers", bundle.NodeCRIContainers, func() ([]*runtimeapi.Container, []byte, error) {
		items, err := client.ListContainers(ctx)
		if err != nil {
			return nil, nil, err
		}
		data, err := containersJSON(items)
		return items, data, err
	})
	criCall(c, st, "ImageService/ListImages", bundle.NodeCRIImages, func() ([]*runtimeapi.Image, []byte, error) {
		items, err := client.ListImages(ctx)
		if err != nil {
			return nil, nil, err
		}
		data, err := imagesJSON(items)
		return items, data, err
	})

	podIDs := make([]string, 0, len(pods))
	for _, p := range pods {
		podIDs = append(podIDs, p.GetId())
	}
	ctrIDs := make([]string, 0, len(containers))
	for _, ctr := range containers {
		ctrIDs = append(ctrIDs, ctr.GetId())
	}
	c.inspectAll(ctx, st, "RuntimeService/PodSandboxStatus", podIDs, bundle.NodeCRIInspectPodPath, func(id string) ([]byte, error) {
		r, err := client.PodSandboxStatus(ctx, id)
		if err != nil {
			return nil, err
		}
		return inspectPodJSON(r)
	})
	c.inspectAll(ctx, st, "RuntimeService/ContainerStatus", ctrIDs, bundle.NodeCRIInspectPath, func(id string) ([]byte, error) {
		r, err := client.ContainerStatus(ctx, id)
		if err != nil {
			return nil, err
		}
		return inspectContainerJSON(r)
	})

	sort.Strings(st.files)
	src.Files = st.files
	switch {
	case len(st.errs) == 0:
		src.Status = bundle.StatusOK
	case len(st.files) == 0:
		src.Status = bundle.StatusFailed
	default:
		src.Status = bundle.StatusPartial
	}
	src.Error = joinLimited(st.errs, 10)
	return src
}

// criCall makes one list call and writes its JSON.
func criCall[T any](c *collector, st *criState, method, file string, call func() ([]T, []byte, error)) []T {
	t0 := time.Now()
	step := Step{Source: SourceCRI, Read: c.opts.RuntimeEndpoint + " " + method}
	items, data, err := call()
	step.DurationMS = time.Since(t0).Milliseconds()
	if err == nil {
		var p string
		if p, err = c.write(file, data); err == nil {
			st.file(p)
			step.Used, step.Bytes = true, int64(len(data))
		}
	}
	if err != nil {
		step.Error = err.Error()
		st.fail("%s: %v", method, err)
	}
	c.step(step)
	return items
}

// safeID matches the container and sandbox IDs runtimes hand out (hex for containerd
// and CRI-O); anything else would not be a safe file name.
var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`)

// inspectAll runs one status call per ID on a few workers and writes each result.
func (c *collector) inspectAll(ctx context.Context, st *criState, method string, ids []string, pathOf func(node, id string) string, call func(id string) ([]byte, error)) {
	if len(ids) == 0 {
		return
	}
	t0 := time.Now()
	var (
		mu      sync.Mutex
		failed  []string
		written int64
	)
	record := func(n int, err error) {
		mu.Lock()
		defer mu.Unlock()
		written += int64(n)
		if err != nil {
			failed = append(failed, err.Error())
			st.fail("%s %s", method, err)
		}
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(inspectWorkers, len(ids)) {
		wg.Go(func() {
			for id := range work {
				record(c.inspectOne(st, id, pathOf, call))
			}
		})
	}
	sent := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		work <- id
		sent++
	}
	close(work)
	wg.Wait()
	if sent < len(ids) {
		record(0, fmt.Errorf("stopped after %d of %d: %w", sent, len(ids), ctx.Err()))
	}
	c.step(Step{Source: SourceCRI, Read: fmt.Sprintf("%s %s (%d ids)", c.opts.RuntimeEndpoint, method, len(ids)),
		DurationMS: time.Since(t0).Milliseconds(), Bytes: written, Used: written > 0, Error: joinLimited(failed, 10)})
}

// inspectOne inspects and writes one ID, returning the bytes written.
func (c *collector) inspectOne(st *criState, id string, pathOf func(node, id string) string, call func(id string) ([]byte, error)) (int, error) {
	if !safeID.MatchString(id) {
		return 0, fmt.Errorf("%q: refusing an ID that is not a plain name", id)
	}
	data, err := call(id)
	if status.Code(err) == codes.NotFound {
		// The kubelet removed it between the list and this call (a crash-looping
		// container is replaced every few seconds): it is gone, not a failure. The list
		// still names it, so readers see it existed.
		c.opts.Logger.WithField("id", id).Debug("CRI object removed before it could be inspected")
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	p := pathOf(c.opts.NodeName, id)
	if err := c.w.WriteFile(p, data); err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	st.file(p)
	return len(data), nil
}

// joinLimited joins messages, summarizing beyond limit so one broken runtime does not
// put thousands of copies of the same error into the manifest.
func joinLimited(msgs []string, limit int) string {
	if len(msgs) <= limit {
		return strings.Join(msgs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(msgs[:limit], "; "), len(msgs)-limit)
}
