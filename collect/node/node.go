// Package node collects the evidence a node holds about its Pods (kubelet and runtime
// journals, CRI state in the shapes crictl prints, the kubelet config, kernel OOM lines)
// into a node bundle. It runs on the node itself, or in a debug Pod with the host's
// filesystem mounted at a host root.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/collect"
)

// Source names recorded in the manifest of a node bundle.
const (
	SourceKubeletJournal = "kubelet-journal"
	SourceRuntimeJournal = "runtime-journal"
	SourceCRI            = "cri"
	SourceKubeletConfig  = "kubelet-config"
	SourceDmesg          = "dmesg"
)

// Defaults for Options fields left zero.
const (
	DefaultHostRoot        = "/"
	DefaultSince           = 24 * time.Hour
	DefaultMaxLogBytes     = 64 << 20
	DefaultKubeletUnit     = "kubelet"
	DefaultRuntimeUnit     = "containerd"
	DefaultRuntimeEndpoint = "unix:///run/containerd/containerd.sock"
	DefaultKubeletConfig   = "/var/lib/kubelet/config.yaml"
	DefaultKmsgPath        = "/dev/kmsg"
	DefaultStepTimeout     = 2 * time.Minute
	DefaultMaxDmesgBytes   = 4 << 20
)

// Options configure Collect. Zero fields take the defaults above.
type Options struct {
	// NodeName names the node in the bundle (nodes/<NodeName>/...). Required.
	NodeName string
	// HostRoot is where the node's filesystem is visible: "/" on the node, the mount
	// point of the host under `kubectl debug node/...`. Files and sockets are found under it.
	HostRoot string
	// Since bounds the journals to recent entries.
	Since time.Duration
	// MaxLogBytes caps each journal or log file; the newest bytes are kept.
	MaxLogBytes int64
	// MaxDmesgBytes caps the kernel lines kept; the newest are kept.
	MaxDmesgBytes int64

	KubeletUnit     string
	KubeletLogFile  string // read when the journal has no kubelet entries
	RuntimeUnit     string
	RuntimeLogFile  string // read when the journal has no runtime entries
	RuntimeEndpoint string
	KubeletConfig   string
	KmsgPath        string

	// StepTimeout bounds each step (one journal, the CRI calls, dmesg).
	StepTimeout time.Duration

	// Target is the bundle to write; see bundle.Create. Required.
	Target string
	Force  bool
	// Filter, when set, rewrites every file before it reaches the bundle (redaction).
	// A collect.RedactionReporter fills the manifest's redaction record once every file
	// is written; a collect.StringRedactor also masks the error texts the manifest quotes.
	Filter bundle.Filter
	// Planned, when set, is told how many sources the collection runs, before the first;
	// Progress, when set, is called once per finished source. The vocabulary of the
	// cluster collector's Options.
	Planned  func(n int)
	Progress func(bundle.Source)

	PodflowVersion string
	CommandLine    []string

	// Runner runs journalctl and dmesg; nil means an ExecRunner capped at MaxLogBytes.
	Runner Runner
	// DialCRI connects to the runtime; nil means DialCRI of this package.
	DialCRI func(ctx context.Context, endpoint, socket string) (CRIClient, error)
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger logrus.FieldLogger
}

func (o *Options) defaults() {
	if o.HostRoot == "" {
		o.HostRoot = DefaultHostRoot
	}
	// The socket path becomes a unix:// target, where a relative path would read as a host name.
	if abs, err := filepath.Abs(o.HostRoot); err == nil {
		o.HostRoot = abs
	}
	if o.Since <= 0 {
		o.Since = DefaultSince
	}
	if o.MaxLogBytes <= 0 {
		o.MaxLogBytes = DefaultMaxLogBytes
	}
	if o.MaxDmesgBytes <= 0 {
		o.MaxDmesgBytes = DefaultMaxDmesgBytes
	}
	if o.KubeletUnit == "" {
		o.KubeletUnit = DefaultKubeletUnit
	}
	if o.RuntimeUnit == "" {
		o.RuntimeUnit = DefaultRuntimeUnit
	}
	if o.RuntimeEndpoint == "" {
		o.RuntimeEndpoint = DefaultRuntimeEndpoint
	}
	if o.KubeletConfig == "" {
		o.KubeletConfig = DefaultKubeletConfig
	}
	if o.KmsgPath == "" {
		o.KmsgPath = DefaultKmsgPath
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = DefaultStepTimeout
	}
	if o.Runner == nil {
		o.Runner = ExecRunner{MaxStdout: o.MaxLogBytes}
	}
	if o.DialCRI == nil {
		o.DialCRI = DialCRI
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		o.Logger = l
	}
}

// ValidateNodeName refuses names that cannot be one directory of a bundle path.
func ValidateNodeName(name string) error {
	switch {
	case name == "":
		return errors.New("node name is empty (set --node-name)")
	case name == "." || name == "..", strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("node name %q cannot be used as a directory name", name)
	}
	return nil
}

// collector holds one run's state. Sources run one after another except the CRI
// inspections, so only the writer and the step list are shared across goroutines.
type collector struct {
	opts  Options
	w     *bundle.Writer
	log   logrus.FieldLogger
	since time.Time

	mu    sync.Mutex
	steps []Step
	rt    *RuntimeInfo
}

func (c *collector) step(s Step) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, s)
}

// hostPath resolves a node path under the host root.
func (c *collector) hostPath(p string) string {
	return filepath.Join(c.opts.HostRoot, p)
}

// Collect gathers the node's evidence and writes a node bundle. A source that fails is
// recorded in the manifest and collection.json and the bundle is still written; the error
// is for a bundle that could not be written at all, or a cancelled run, which leaves no
// bundle behind.
func Collect(ctx context.Context, opts Options) (*collect.Result, error) {
	opts.defaults()
	if err := ValidateNodeName(opts.NodeName); err != nil {
		return nil, err
	}
	if opts.Target == "" {
		return nil, errors.New("no target path for the bundle")
	}
	if st, err := os.Stat(opts.HostRoot); err != nil {
		return nil, fmt.Errorf("host root %q: %w", opts.HostRoot, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("host root %q is not a directory", opts.HostRoot)
	}
	start := opts.Now()
	w, err := bundle.Create(opts.Target, bundle.WriterOptions{Force: opts.Force, Filter: opts.Filter, ModTime: start.UTC()})
	if err != nil {
		return nil, err
	}
	c := &collector{opts: opts, w: w, log: opts.Logger.WithField("node", opts.NodeName), since: start.Add(-opts.Since)}
	m := &bundle.Manifest{
		PodflowVersion: opts.PodflowVersion,
		CollectedAt:    start.UTC(),
		Type:           "node",
		Scope:          bundle.Scope{Node: opts.NodeName, Since: opts.Since.String()},
		Redaction:      bundle.Redaction{Policy: "none"},
	}
	steps := []func(context.Context) bundle.Source{
		func(ctx context.Context) bundle.Source {
			return c.collectLog(ctx, logSpec{source: SourceKubeletJournal, unit: opts.KubeletUnit, file: opts.KubeletLogFile, dest: bundle.NodeKubeletLog})
		},
		func(ctx context.Context) bundle.Source {
			return c.collectLog(ctx, logSpec{source: SourceRuntimeJournal, unit: opts.RuntimeUnit, file: opts.RuntimeLogFile, dest: bundle.NodeRuntimeLog})
		},
		c.collectCRI,
		c.collectKubeletConfig,
		c.collectDmesg,
	}
	if opts.Planned != nil {
		opts.Planned(len(steps))
	}
	for _, run := range steps {
		stepCtx, cancel := context.WithTimeout(ctx, opts.StepTimeout)
		t0 := time.Now()
		src := run(stepCtx)
		cancel()
		src.DurationMS = time.Since(t0).Milliseconds()
		if ctx.Err() != nil {
			w.Abort()
			return nil, fmt.Errorf("collect node %s: %w", opts.NodeName, ctx.Err())
		}
		if r, ok := opts.Filter.(collect.StringRedactor); ok {
			// Errors quote command stderr, which can hold what the filter masks in files.
			src.Error = r.RedactString(bundle.ManifestPath, src.Error)
		}
		c.logSource(src)
		m.Sources = append(m.Sources, src)
		if opts.Progress != nil {
			opts.Progress(src)
		}
	}
	if err := c.writeCollection(start); err != nil {
		w.Abort()
		return nil, err
	}
	if opts.Filter != nil {
		m.Redaction = bundle.Redaction{Policy: "unreported", Enabled: true}
		if r, ok := opts.Filter.(collect.RedactionReporter); ok {
			m.Redaction = r.Redaction()
		}
	}
	if err := w.Close(m); err != nil {
		return nil, err
	}
	return &collect.Result{Target: opts.Target, Manifest: m}, nil
}

func (c *collector) logSource(s bundle.Source) {
	l := c.log.WithFields(logrus.Fields{"source": s.Name, "status": s.Status, "files": len(s.Files), "ms": s.DurationMS})
	switch s.Status {
	case bundle.StatusOK:
		l.Info("collected")
	case bundle.StatusSkipped:
		l.WithField("reason", s.Error).Info("skipped")
	default:
		l.WithField("error", s.Error).Warn("collection incomplete")
	}
}

func (c *collector) writeCollection(start time.Time) error {
	coll := Collection{
		Node:           c.opts.NodeName,
		HostRoot:       c.opts.HostRoot,
		PodflowVersion: c.opts.PodflowVersion,
		CommandLine:    c.opts.CommandLine,
		StartedAt:      start.UTC(),
		Since:          c.since.UTC(),
		Runtime:        c.rt,
		Steps:          c.steps,
	}
	if coll.Steps == nil {
		coll.Steps = []Step{}
	}
	if bt, ok := bootTime(c.opts.Now()); ok {
		coll.BootTime = &bt
	}
	coll.Clock = c.opts.Now().UTC()
	return c.w.WriteJSON(bundle.NodePath(c.opts.NodeName, bundle.NodeCollection), coll)
}

// write adds one node file to the bundle and returns its bundle path.
func (c *collector) write(file string, data []byte) (string, error) {
	p := bundle.NodePath(c.opts.NodeName, file)
	if err := c.w.WriteFile(p, data); err != nil {
		return "", err
	}
	c.log.WithFields(logrus.Fields{"file": p, "bytes": len(data)}).Trace("wrote")
	return p, nil
}
