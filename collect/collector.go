// Package collect snapshots a Kubernetes cluster into a podflow bundle: every object
// kind the analysis reads, container logs, cluster version and clock, and the kubelet
// configuration when the node proxy is permitted. It only reads from the cluster.
package collect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"podflow.dev/podflow/bundle"
)

// Defaults applied by Run to zero-valued options.
const (
	DefaultLogLines       = 2000
	DefaultLogBytes       = 2 << 20
	DefaultRequestTimeout = 30 * time.Second
	DefaultSourceTimeout  = 2 * time.Minute
	DefaultConcurrency    = 8
	// DefaultPreviousLogRetry is how long the collector waits before asking once more
	// for a previous instance's log the kubelet did not have: while a crash-looping
	// container is being restarted, the instance the kubelet's status names as the
	// last terminated one can briefly be one it no longer, or not yet, can read.
	DefaultPreviousLogRetry = 2 * time.Second
)

// ErrInterrupted is returned when the context is cancelled during collection; nothing is
// left at the target path.
var ErrInterrupted = errors.New("collection interrupted")

// Options configure one cluster collection.
type Options struct {
	// Target is the bundle path: .tar.gz, .tgz, .tar, or a directory.
	Target string
	// Force replaces an existing target.
	Force bool
	// PodflowVersion is recorded in the manifest.
	PodflowVersion string

	// Namespaces to collect; ignored when AllNamespaces or Pod is set.
	Namespaces    []string
	AllNamespaces bool
	// LabelSelector selects pods (and so their logs); owners are collected regardless.
	LabelSelector string
	// Pod, as namespace/name, restricts collection to that pod's chain.
	Pod string
	// Since bounds container logs and events to this window before now; zero keeps all.
	Since time.Duration

	LogLines int64
	LogBytes int64
	// IncludeSecretKeys lists Secrets, keeping metadata, type, key names and value sizes.
	IncludeSecretKeys bool

	// RequestTimeout bounds the first reachability check.
	RequestTimeout time.Duration
	// SourceTimeout bounds each source (a paginated list, one container's logs).
	SourceTimeout time.Duration
	// Concurrency bounds how many sources run at once.
	Concurrency int
	// PreviousLogRetry is the wait before the second and last request for a previous
	// instance's log that the kubelet said it did not have.
	PreviousLogRetry time.Duration

	// Filter, when set, rewrites every file before it is written (redaction).
	Filter bundle.Filter
	// Scan, when set, sees every file as it is written, after Filter (the leak scan);
	// see bundle.WriterOptions.
	Scan   func(name string, data []byte)
	Logger logrus.FieldLogger
	// Planned, when set, is called with the number of sources just planned: sources are
	// planned as collection learns of them (a pod's logs once the pods are listed).
	Planned func(n int)
	// Progress, when set, is called once per finished source.
	Progress func(bundle.Source)
}

// The vocabulary both collectors share (this package's cluster collector and the node
// collector of collect/node): Options name the bundle Target and take a Logger and a
// Filter; a Filter that is a RedactionReporter fills the manifest's redaction record and
// one that is a StringRedactor masks the error texts the manifest quotes; each returns a
// Result.

// RedactionReporter is implemented by filters that can say what they redacted; the
// collector records the report in the manifest.
type RedactionReporter interface {
	Redaction() bundle.Redaction
}

// StringRedactor is implemented by filters that can also redact free text, such as the
// error messages the manifest records.
type StringRedactor interface {
	RedactString(file, s string) string
}

// Result is a finished collection: the bundle written and its manifest.
type Result struct {
	Target   string
	Manifest *bundle.Manifest
}

// Incomplete lists the sources that failed or were only partly collected.
func (r *Result) Incomplete() []bundle.Source { return r.Manifest.Incomplete() }

func (o Options) withDefaults() Options {
	if o.LogLines == 0 {
		o.LogLines = DefaultLogLines
	}
	if o.LogBytes == 0 {
		o.LogBytes = DefaultLogBytes
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.SourceTimeout <= 0 {
		o.SourceTimeout = DefaultSourceTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.PreviousLogRetry <= 0 {
		o.PreviousLogRetry = DefaultPreviousLogRetry
	}
	if o.Logger == nil {
		l := logrus.New()
		l.SetLevel(logrus.WarnLevel)
		o.Logger = l
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Target == "":
		return errors.New("no target path for the bundle")
	case o.Pod != "" && (o.AllNamespaces || o.LabelSelector != ""):
		return errors.New("a pod's chain cannot be combined with all namespaces or a label selector")
	case o.Pod != "":
		ns, _, err := bundle.SplitPodName(o.Pod)
		if err != nil {
			return err
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("pod %q: namespace: %s", o.Pod, strings.Join(errs, "; "))
		}
	case o.AllNamespaces && len(o.Namespaces) > 0:
		return errors.New("namespaces cannot be combined with all namespaces")
	case !o.AllNamespaces && len(o.Namespaces) == 0:
		return errors.New("no namespace to collect")
	}
	for _, ns := range o.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if o.LogLines < 0 || o.LogBytes < 0 {
		return fmt.Errorf("log bounds must not be negative (lines %d, bytes %d)", o.LogLines, o.LogBytes)
	}
	return nil
}

// collector is the state of one Run.
type collector struct {
	opts   Options
	client *Client
	log    logrus.FieldLogger
	w      *bundle.Writer
	start  time.Time
	// skew is the API server's clock minus ours.
	skew time.Duration
	// chain is the selected pod's chain when Options.Pod is set.
	chain *chain

	// slots bound the sources running at once, across every runAll.
	slots chan struct{}

	mu      sync.Mutex
	sources []bundle.Source
}

// Run collects from the cluster behind client and writes the bundle at opts.Target.
// An unreachable API server fails before anything is written. A source that fails is
// recorded in the manifest and collection goes on; Result.Failed lists those sources.
// When ctx is cancelled the partial bundle is discarded and ErrInterrupted returned.
func Run(ctx context.Context, client *Client, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if client == nil || client.Kube == nil {
		return nil, errors.New("collect: no Kubernetes client")
	}
	if opts.Pod != "" {
		ns, _, _ := bundle.SplitPodName(opts.Pod)
		opts.Namespaces, opts.AllNamespaces = []string{ns}, false
	}
	// Each namespace is one set of sources and files; naming it twice must not write twice.
	opts.Namespaces = slices.Compact(slices.Sorted(slices.Values(opts.Namespaces)))
	c := &collector{opts: opts, client: client, log: opts.Logger, start: time.Now(), slots: make(chan struct{}, opts.Concurrency)}
	info, err := c.serverInfo(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	if opts.Pod == "" && !opts.AllNamespaces {
		if err := c.dropMissingNamespaces(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ErrInterrupted
			}
			return nil, err
		}
	}
	if opts.Pod != "" {
		if c.chain, err = c.podChain(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ErrInterrupted
			}
			return nil, err
		}
	}
	c.w, err = bundle.Create(opts.Target, bundle.WriterOptions{Force: opts.Force, Filter: opts.Filter, Scan: opts.Scan})
	if err != nil {
		return nil, err
	}
	m, err := c.collect(ctx, info)
	if ctx.Err() != nil {
		c.w.Abort()
		return nil, ErrInterrupted
	}
	if err != nil {
		c.w.Abort()
		return nil, err
	}
	if err := c.w.Close(m); err != nil {
		return nil, err
	}
	return &Result{Target: opts.Target, Manifest: m}, nil
}

func (c *collector) collect(ctx context.Context, info *serverInfo) (*bundle.Manifest, error) {
	if err := c.writeClusterInfo(info); err != nil {
		return nil, err
	}
	lists := c.planLists()
	var (
		targets []logTarget
		nodes   []string
		err     error
	)
	if c.chain != nil {
		targets, nodes, err = c.chainLists(ctx, lists)
	} else {
		// Container logs are read as soon as their pods are listed (see streamLists).
		nodes, err = c.streamLists(ctx, lists)
	}
	if err != nil {
		return nil, err
	}
	steps := append(c.logSteps(targets), c.kubeletConfigSteps(nodes)...)
	c.runAll(ctx, steps)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	namespaces := c.opts.Namespaces
	if c.opts.AllNamespaces {
		namespaces = listedNamespaces(lists)
	}
	id := c.identity(ctx, namespaces)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	m := c.manifest(info)
	m.Identity = id
	return m, nil
}

func (c *collector) manifest(info *serverInfo) *bundle.Manifest {
	m := &bundle.Manifest{
		PodflowVersion: c.opts.PodflowVersion,
		CollectedAt:    c.start.UTC(),
		Type:           "cluster",
		Scope: bundle.Scope{
			AllNamespaces: c.opts.AllNamespaces,
			LabelSelector: c.opts.LabelSelector,
			Pod:           c.opts.Pod,
		},
		Cluster: bundle.Cluster{
			Name:             c.client.Name,
			Server:           c.client.Server,
			ServerVersion:    info.version.GitVersion,
			ClockSkewSeconds: info.skewSeconds,
		},
		Redaction: bundle.Redaction{Policy: "none"},
	}
	if !c.opts.AllNamespaces {
		m.Scope.Namespaces = c.opts.Namespaces
	}
	if c.opts.Since > 0 {
		m.Scope.Since = c.opts.Since.String()
	}
	c.mu.Lock()
	m.Sources = append([]bundle.Source(nil), c.sources...)
	c.mu.Unlock()
	if c.opts.Filter != nil {
		// Error texts quote API answers, which can carry what the filter masks elsewhere.
		if r, ok := c.opts.Filter.(StringRedactor); ok {
			for i := range m.Sources {
				m.Sources[i].Error = r.RedactString(bundle.ManifestPath, m.Sources[i].Error)
			}
		}
		m.Redaction = bundle.Redaction{Policy: "unreported", Enabled: true}
		if r, ok := c.opts.Filter.(RedactionReporter); ok {
			m.Redaction = r.Redaction()
		}
	}
	return m
}

// reserve adds a source to the manifest now, so the manifest lists sources in the
// order they were planned whatever order they finish in.
func (c *collector) reserve(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, bundle.Source{Name: name, Status: bundle.StatusFailed, Error: "not run"})
	if c.opts.Planned != nil {
		c.opts.Planned(1)
	}
	return len(c.sources) - 1
}

// outcome is how one source went.
type outcome struct {
	status string
	// err is the failure, or for a skipped source the reason it was skipped.
	err   error
	files []string
}

func (c *collector) finish(slot int, out outcome, took time.Duration) {
	c.mu.Lock()
	s := &c.sources[slot]
	s.Status, s.DurationMS, s.Files, s.Error = out.status, took.Milliseconds(), out.files, ""
	if out.err != nil {
		s.Error = out.err.Error()
	}
	done := *s
	c.mu.Unlock()
	fields := logrus.Fields{"source": done.Name, "status": done.Status, "ms": done.DurationMS}
	if done.Error != "" {
		c.log.WithFields(fields).WithField("error", done.Error).Debug("source finished")
	} else {
		c.log.WithFields(fields).Trace("source finished")
	}
	if c.opts.Progress != nil {
		c.mu.Lock()
		c.opts.Progress(done)
		c.mu.Unlock()
	}
}

// addFiles attaches files written after a source finished (lists are written once all
// of them are in, because a pod's chain is known only then).
func (c *collector) addFiles(slot int, files ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources[slot].Files = append(c.sources[slot].Files, files...)
}

// timed runs one source under its own timeout and records how it went.
func (c *collector) timed(ctx context.Context, slot int, fn func(ctx context.Context) outcome) {
	sctx, cancel := context.WithTimeout(ctx, c.opts.SourceTimeout)
	defer cancel()
	began := time.Now()
	out := fn(sctx)
	if out.err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		out.err = fmt.Errorf("timed out after %s: %w", c.opts.SourceTimeout, out.err)
	}
	c.finish(slot, out, time.Since(began))
}

// runAll runs steps, in order, in the collector's Options.Concurrency slots, which
// runAll calls running at the same time share; once ctx is done, steps not yet started
// are dropped. A step must not wait for another runAll.
func (c *collector) runAll(ctx context.Context, steps []func(context.Context)) {
	var wg sync.WaitGroup
	for _, step := range steps {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-c.slots }()
			step(ctx)
		}()
	}
	wg.Wait()
}

// chainLists reads every list into memory, keeps what belongs to the selected pod's
// chain and writes it. A chain is one namespace, filtered across kinds, so it is small
// and needs every kind at once.
func (c *collector) chainLists(ctx context.Context, lists []*listing) ([]logTarget, []string, error) {
	steps := make([]func(context.Context), len(lists))
	for i, l := range lists {
		steps[i] = func(ctx context.Context) { c.fetchList(ctx, l) }
	}
	c.runAll(ctx, steps)
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	c.chain.filter(lists)
	if err := c.writeLists(lists); err != nil {
		return nil, nil, err
	}
	var (
		targets []logTarget
		nodes   []string
	)
	for _, l := range lists {
		if l.src.kind != bundle.KindPods || l.err != nil {
			continue
		}
		for _, item := range l.items {
			if p, ok := item.(*corev1.Pod); ok {
				targets = append(targets, logTargets(p)...)
				if p.Spec.NodeName != "" {
					nodes = append(nodes, p.Spec.NodeName)
				}
			}
		}
	}
	return targets, nodes, nil
}

// streamLists reads the cluster-level lists first (they are small, and the namespace
// list names the namespaces every namespaced list writes a file for), then streams the
// namespaced lists to the bundle a namespace at a time (see streamList). The logs of a
// pod list's containers are read as soon as that list is in, alongside the lists still
// being paged (events are the longest), in the same slots; they are planned in the
// order of the pod lists, so the manifest's order does not depend on timing. It returns
// the nodes of the pods listed.
func (c *collector) streamLists(ctx context.Context, lists []*listing) ([]string, error) {
	var cluster, namespaced, podLists []*listing
	for _, l := range lists {
		switch {
		case !l.src.namespaced:
			cluster = append(cluster, l)
		case l.src.kind == bundle.KindPods:
			podLists = append(podLists, l)
			fallthrough
		default:
			namespaced = append(namespaced, l)
		}
	}
	steps := make([]func(context.Context), 0, len(lists))
	for _, l := range cluster {
		steps = append(steps, func(ctx context.Context) { c.fetchList(ctx, l) })
	}
	c.runAll(ctx, steps)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := c.writeLists(cluster); err != nil {
		return nil, err
	}
	namespaces := c.opts.Namespaces
	if c.opts.AllNamespaces {
		namespaces = listedNamespaces(cluster)
	}
	for _, l := range cluster {
		l.items = nil // written; nothing reads them again
	}
	listed := make(map[*listing]chan struct{}, len(podLists))
	for _, l := range podLists {
		listed[l] = make(chan struct{})
	}
	steps = steps[:0]
	for _, l := range namespaced {
		want := namespaces
		if l.namespace != "" {
			want = []string{l.namespace}
		}
		steps = append(steps, func(ctx context.Context) {
			c.streamList(ctx, l, want)
			if done, ok := listed[l]; ok {
				close(done)
			}
		})
	}
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		var logs sync.WaitGroup
		defer logs.Wait()
		for _, l := range podLists {
			select {
			case <-listed[l]:
			case <-ctx.Done():
				return
			}
			logSteps := c.logSteps(l.targets)
			logs.Go(func() { c.runAll(ctx, logSteps) })
		}
	}()
	c.runAll(ctx, steps)
	<-logsDone
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := c.writeErrors(namespaced); err != nil {
		return nil, err
	}
	var nodes []string
	for _, l := range podLists {
		nodes = append(nodes, l.nodes...)
	}
	return nodes, nil
}

// NamespacesNotFoundError is a collection none of whose namespaces exists: there is
// nothing to collect, and an empty bundle would pass for a quiet cluster.
type NamespacesNotFoundError struct {
	Missing []string
	// Existing names some namespaces that do exist, when the user may list them.
	Existing []string
}

func (e *NamespacesNotFoundError) Error() string {
	var quoted []string
	for _, ns := range e.Missing {
		quoted = append(quoted, strconv.Quote(ns))
	}
	msg := fmt.Sprintf("namespace %s does not exist; nothing was collected", strings.Join(quoted, ", "))
	if len(e.Missing) > 1 {
		msg = fmt.Sprintf("namespaces %s do not exist; nothing was collected", strings.Join(quoted, ", "))
	}
	if len(e.Existing) > 0 {
		msg += "; namespaces that exist: " + strings.Join(e.Existing, ", ")
	}
	return msg
}

// maxExistingNamed bounds the namespaces a NamespacesNotFoundError names.
const maxExistingNamed = 10

// dropMissingNamespaces reads each requested namespace before anything is written. None
// existing is an error; some missing are left out of the collection and recorded as
// failed sources, so the bundle is written and the collection reports it partial. A
// namespace the user may not read is kept: only the API server can tell then.
func (c *collector) dropMissingNamespaces(ctx context.Context) error {
	var existing, missing []string
	for _, ns := range c.opts.Namespaces {
		_, err := c.client.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ns)
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		default:
			existing = append(existing, ns)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(existing) == 0 {
		e := &NamespacesNotFoundError{Missing: missing}
		if l, err := c.client.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: maxExistingNamed}); err == nil {
			for _, n := range l.Items {
				e.Existing = append(e.Existing, n.Name)
			}
		}
		return e
	}
	c.opts.Namespaces = existing
	for _, ns := range missing {
		slot := c.reserve("namespace/" + ns)
		c.finish(slot, outcome{status: bundle.StatusFailed, err: fmt.Errorf("namespace %q does not exist; nothing was collected from it", ns)}, 0)
	}
	return nil
}
