package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
	"podflow.dev/podflow/collect"
	"podflow.dev/podflow/untrusted"
)

type collectOptions struct {
	*globalOptions
	kubeconfig        string
	context           string
	namespaces        []string
	allNamespaces     bool
	selector          string
	pod               string
	since             time.Duration
	requestTimeout    time.Duration
	sourceTimeout     time.Duration
	concurrency       int
	qps               float32
	burst             int
	output            string
	force             bool
	includeSecretKeys bool
	logLines          int64
	logBytes          int64
	printRBAC         bool
	rbacNamespace     string
	redact            redact.Flags
	// now is the clock for the default output name; nil means time.Now.
	now func() time.Time
}

func newCollectCmd(g *globalOptions) *cobra.Command {
	o := &collectOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Snapshot a cluster's evidence into a bundle: objects, events, container logs, versions",
		Long: fmt.Sprintf(`Collect reads, never writes, what explains a Pod's life from the Kubernetes API into one
redacted bundle: every object kind the analysis uses (Troubleshoot layout), events, current
and previous container logs, the cluster version and clock skew, and each node's kubelet
configuration when nodes/proxy is permitted.

Scope follows kubectl: the context's namespace by default, -n for others, -A for all,
-l to select pods, or --pod for one Pod's chain only (its owners, events, node, Services,
volumes and configuration). Secrets are never read unless --include-secret-keys is given,
and even then only their key names and value sizes are kept.

Load on the API server is bounded: at most --concurrency requests are in flight (default
%d) and at most --qps per second on average (default %d, bursts of --burst, default %d).
Lists are read %d items a page, and each namespace's part of a list is written to the
bundle as soon as its pages are in, so memory does not grow with the cluster.

A source the API refuses or that times out is recorded in the bundle's manifest and the
rest is still collected; the exit code is then 4. An unreachable API server fails before
anything is written, and an interrupted collection leaves nothing behind.

'podflow collect rbac' prints a least-privilege ServiceAccount, ClusterRole and binding
that allow exactly what collect reads.`,
			collect.DefaultConcurrency, collect.DefaultQPS, collect.DefaultBurst, collect.PageSize),
		Example: `  # The current context's namespace, to podflow-<cluster>-<time>.tar.gz
  podflow collect

  # Two namespaces, logs of the last hour, into a chosen file
  podflow collect -n shop -n payments --since 1h -o shop.tar.gz

  # One Pod's chain only
  podflow collect --pod shop/web-7d9c6b5f4-x2x8q

  # Grant podflow exactly what it reads, then collect as that ServiceAccount
  podflow collect rbac -n ops | kubectl apply -f -

  # Collect node evidence on a node (see 'podflow collect node --help')
  sudo podflow collect node -o node-1.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runCollect(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use (default: the current context)")
	f.StringSliceVarP(&o.namespaces, "namespace", "n", nil, "namespace to collect; repeat or separate with commas (default: the context's namespace)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "collect every namespace")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector for pods (their owners are collected regardless), e.g. app=web")
	f.StringVar(&o.pod, "pod", "", "collect only this Pod's chain, as namespace/name (or name, in the -n namespace)")
	f.DurationVar(&o.since, "since", 0, "only container logs and events newer than this, e.g. 1h (default: no bound)")
	f.Int64Var(&o.logLines, "log-lines", collect.DefaultLogLines, "keep at most this many lines of each container log (the newest)")
	o.logBytes = collect.DefaultLogBytes
	f.Var((*byteSize)(&o.logBytes), "log-bytes", "keep at most this much of each container log, the newest (bytes, or a size such as 2Mi)")
	f.BoolVar(&o.includeSecretKeys, "include-secret-keys", false, "list Secrets, keeping only metadata, type, key names and value sizes (needs list on secrets)")
	f.DurationVar(&o.requestTimeout, "request-timeout", collect.DefaultRequestTimeout, "time limit of each request to the API server, and of the first reachability check")
	f.DurationVar(&o.sourceTimeout, "source-timeout", collect.DefaultSourceTimeout, "time limit of each source (one paginated list, one container's logs)")
	f.IntVar(&o.concurrency, "concurrency", collect.DefaultConcurrency, "how many sources to read at once: at most this many requests are in flight")
	f.Float32Var(&o.qps, "qps", collect.DefaultQPS, "at most this many requests per second to the API server, on average")
	f.IntVar(&o.burst, "burst", collect.DefaultBurst, "requests allowed at once above --qps before it applies")
	f.StringVarP(&o.output, "output", "o", "", "bundle to write: .tar.gz, .tgz, .tar, or a directory (default podflow-<cluster>-<UTC time>.tar.gz)")
	f.BoolVar(&o.force, "force", false, "replace the output if it is a bundle podflow wrote")
	// --print-rbac and --rbac-namespace are the deprecated spelling of 'podflow collect rbac',
	// kept for one release.
	f.BoolVar(&o.printRBAC, "print-rbac", false, "deprecated: use 'podflow collect rbac'")
	f.StringVar(&o.rbacNamespace, "rbac-namespace", collect.DefaultRBACNamespace, "deprecated: use 'podflow collect rbac -n'")
	for _, name := range []string{"print-rbac", "rbac-namespace"} {
		if err := f.MarkHidden(name); err != nil {
			panic(err) // the flag was registered just above
		}
	}
	addRedactFlags(f, &o.redact)
	cmd.AddCommand(newCollectNodeCmd(g), newCollectRBACCmd(g))
	return cmd
}

func (o *collectOptions) validate() error {
	if o.printRBAC {
		if _, err := collect.RBAC(o.rbacNamespace); err != nil {
			return usageError("--rbac-namespace: %v", err)
		}
		return nil
	}
	for _, ns := range o.namespaces {
		if strings.TrimSpace(ns) == "" {
			return usageError("--namespace must not be empty")
		}
	}
	switch {
	case o.allNamespaces && len(o.namespaces) > 0:
		return usageError("--all-namespaces and --namespace cannot be combined")
	case o.pod != "" && (o.allNamespaces || o.selector != ""):
		return usageError("--pod collects one Pod's chain: it cannot be combined with --all-namespaces or --selector")
	case o.since < 0:
		return usageError("--since must not be negative, got %s", o.since)
	case o.logLines <= 0:
		return usageError("--log-lines must be positive, got %d", o.logLines)
	case o.requestTimeout <= 0:
		return usageError("--request-timeout must be positive, got %s", o.requestTimeout)
	case o.sourceTimeout <= 0:
		return usageError("--source-timeout must be positive, got %s", o.sourceTimeout)
	case o.concurrency <= 0:
		return usageError("--concurrency must be positive, got %d", o.concurrency)
	case o.qps <= 0:
		return usageError("--qps must be positive, got %g", o.qps)
	case o.burst <= 0:
		return usageError("--burst must be positive, got %d", o.burst)
	}
	if o.pod != "" {
		hasNS := strings.Contains(o.pod, "/")
		ns, _, err := bundle.SplitPodName(o.pod)
		switch {
		case !hasNS && len(o.namespaces) > 1:
			return usageError("--pod %q: give it as namespace/name when several namespaces are set", o.pod)
		case hasNS && err != nil:
			return usageError("--pod: %w", err)
		case hasNS && len(o.namespaces) > 0 && (len(o.namespaces) > 1 || o.namespaces[0] != ns):
			return usageError("--pod %q is in namespace %q, which --namespace does not name", o.pod, ns)
		}
	}
	return nil
}

func runCollect(ctx context.Context, o *collectOptions) error {
	if o.printRBAC {
		o.log().Warn("--print-rbac is deprecated and will be removed: use 'podflow collect rbac -n NAMESPACE'")
		return collect.PrintRBAC(o.streams.Out, o.rbacNamespace)
	}
	policy, err := o.redact.Policy(o.log())
	if err != nil {
		var ue *redact.UsageError
		if errors.As(err, &ue) {
			return &codeError{code: exitUsage, err: err}
		}
		return err
	}
	kc, err := collect.LoadKubeconfig(o.kubeconfig, o.context)
	if err != nil {
		return err
	}
	kc.Config.Timeout = o.requestTimeout
	kc.Config.QPS, kc.Config.Burst = o.qps, o.burst
	client, err := collect.NewClient(kc.Config, kc.Cluster)
	if err != nil {
		return err
	}
	client.User = kc.User
	opts := collect.Options{
		Target:            o.output,
		Force:             o.force,
		PodflowVersion:    version,
		Namespaces:        o.namespaces,
		AllNamespaces:     o.allNamespaces,
		LabelSelector:     o.selector,
		Pod:               o.pod,
		Since:             o.since,
		LogLines:          o.logLines,
		LogBytes:          o.logBytes,
		IncludeSecretKeys: o.includeSecretKeys,
		RequestTimeout:    o.requestTimeout,
		SourceTimeout:     o.sourceTimeout,
		Concurrency:       o.concurrency,
		Logger:            o.log(),
	}
	if len(opts.Namespaces) == 0 && !opts.AllNamespaces {
		opts.Namespaces = []string{kc.Namespace}
	}
	if opts.Pod != "" {
		if !strings.Contains(opts.Pod, "/") {
			opts.Pod = opts.Namespaces[0] + "/" + opts.Pod
		}
		opts.Namespaces = nil
	}
	if opts.Target == "" {
		now := time.Now
		if o.now != nil {
			now = o.now
		}
		opts.Target = collect.DefaultTarget(kc.Cluster, now())
	}
	opts.Filter = policy
	// The leak scan reads each file as it is written rather than the bundle afterwards.
	leaks := o.redact.LeakScan(policy)
	if leaks != nil {
		opts.Scan = leaks.File
	}
	var end func()
	opts.Planned, opts.Progress, end = sourceProgress(newProgress(ctx, o.globalOptions), "sources")
	res, err := collect.Run(ctx, client, opts)
	end()
	if err != nil {
		return err
	}
	if err := leaks.Check(res.Target); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(o.streams.Out, res.Target); err != nil {
		return err
	}
	failed := res.Incomplete()
	if len(failed) == 0 {
		return nil
	}
	for _, s := range failed {
		o.log().WithField("source", s.Name).WithField("status", s.Status).Warn(s.Error)
	}
	o.log().WithField("bundle", res.Target).Warnf("bundle written, but %d of %d sources failed (see podflow inspect)", len(failed), len(res.Manifest.Sources))
	return &silentExit{code: exitPartial}
}

// sourceProgress shows a collection on a terminal: a line per finished source (its
// status, name, time and how many files it wrote) above a bar of the sources done out
// of those planned so far. The callbacks are nil when prog is (not a terminal, -q); end
// completes the display before results are written.
func sourceProgress(prog *progress, name string) (planned func(int), finished func(bundle.Source), end func()) {
	if prog == nil {
		return nil, nil, func() {}
	}
	bar := prog.growing(name)
	planned = bar.grow
	finished = func(s bundle.Source) {
		line := fmt.Sprintf("%-8s %-48s %6dms %4d files", s.Status, untrusted.Text(s.Name), s.DurationMS, len(s.Files))
		if s.Error != "" && s.Status != bundle.StatusOK {
			line += "  " + untrusted.Text(s.Error)
		}
		prog.printf("%s\n", line)
		bar.inc()
	}
	end = func() {
		bar.done()
		prog.wait()
	}
	return planned, finished, end
}
