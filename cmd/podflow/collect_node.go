package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
	"podflow.dev/podflow/collect/node"
)

type collectNodeOptions struct {
	*globalOptions
	node   node.Options
	redact redact.Flags
	// filter replaces the redaction policy built from the flags (tests).
	filter bundle.Filter
	// now is the clock for the default output name; nil means time.Now.
	now func() time.Time
}

func newCollectNodeCmd(g *globalOptions) *cobra.Command {
	o := &collectNodeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Collect one node's evidence: kubelet and runtime journals, CRI state, kubelet config, kernel OOM lines",
		Long: `Run on a node, as root, to collect what the node knows about its Pods into a node bundle:
the kubelet and container runtime journals (or log files), the runtime's pods, containers,
images and per-container inspection as crictl prints them (read over the CRI socket, no
crictl needed), the kubelet config file and the kernel's OOM killer lines.

Under 'kubectl debug node/NAME' the host's filesystem is mounted at /host: pass
--host-root /host so files, sockets and the journal are found there.

A step that fails (no journalctl, no socket) is recorded in the bundle and the rest is
still collected; the exit code is then 4. Merge node bundles with a cluster bundle using
'podflow bundle merge', or analyze them together.`,
		Example: `  # On the node, as root
  sudo podflow collect node -o node-1.tar.gz

  # From a debug Pod on the node, with the host mounted at /host
  kubectl debug node/worker-1 -it --image=podflow --profile=sysadmin -- \
    podflow collect node --host-root /host --node-name worker-1 -o /host/tmp/worker-1.tar.gz

  # A kubelet that logs to a file, a CRI-O runtime
  podflow collect node --kubelet-log-file /var/log/kubelet.log \
    --runtime-unit crio --runtime-endpoint unix:///var/run/crio/crio.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			o.node.CommandLine = commandLine(cmd)
			return runCollectNode(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	n := &o.node
	f.StringVar(&n.NodeName, "node-name", "", "name of the node in the bundle (default: the host name, lower-cased as the kubelet does)")
	f.StringVar(&n.HostRoot, "host-root", node.DefaultHostRoot, "where the node's filesystem is mounted; files, sockets and the journal are looked up under it")
	f.DurationVar(&n.Since, "since", node.DefaultSince, "collect journal entries newer than this")
	n.MaxLogBytes = node.DefaultMaxLogBytes
	f.Var((*byteSize)(&n.MaxLogBytes), "max-log-bytes", "keep at most this much of each journal or log file, the newest (bytes, or a size such as 64Mi)")
	f.StringVar(&n.KubeletUnit, "kubelet-unit", node.DefaultKubeletUnit, "systemd unit (and syslog identifier) of the kubelet")
	f.StringVar(&n.KubeletLogFile, "kubelet-log-file", "", "kubelet log file to read when the journal has no kubelet entries")
	f.StringVar(&n.RuntimeUnit, "runtime-unit", node.DefaultRuntimeUnit, "systemd unit (and syslog identifier) of the container runtime")
	f.StringVar(&n.RuntimeLogFile, "runtime-log-file", "", "runtime log file to read when the journal has no runtime entries")
	f.StringVar(&n.RuntimeEndpoint, "runtime-endpoint", node.DefaultRuntimeEndpoint, "CRI endpoint of the container runtime (a unix socket)")
	f.StringVar(&n.KubeletConfig, "kubelet-config", node.DefaultKubeletConfig, "kubelet config file")
	f.DurationVar(&n.StepTimeout, "timeout", node.DefaultStepTimeout, "time limit of each step (one journal, the CRI calls, dmesg)")
	f.StringVarP(&n.Target, "output", "o", "", "bundle to write: .tar.gz, .tgz, .tar, or a directory (default podflow-node-<node>-<UTC time>.tar.gz)")
	f.BoolVar(&n.Force, "force", false, "replace the output if it is a bundle podflow wrote")
	addRedactFlags(f, &o.redact)
	return cmd
}

func (o *collectNodeOptions) validate() error {
	switch {
	case o.node.Since <= 0:
		return usageError("--since must be positive, got %s", o.node.Since)
	case o.node.StepTimeout <= 0:
		return usageError("--timeout must be positive, got %s", o.node.StepTimeout)
	case o.node.HostRoot == "":
		return usageError("--host-root must not be empty")
	}
	if o.node.NodeName != "" {
		if err := node.ValidateNodeName(o.node.NodeName); err != nil {
			return usageError("--node-name: %v", err)
		}
	}
	return nil
}

func runCollectNode(ctx context.Context, o *collectNodeOptions) error {
	opts := o.node
	if opts.NodeName == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("find the node name (set --node-name): %w", err)
		}
		opts.NodeName = strings.ToLower(strings.TrimSpace(host))
		if err := node.ValidateNodeName(opts.NodeName); err != nil {
			return fmt.Errorf("host name %q is not usable as a node name (set --node-name): %w", host, err)
		}
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	if opts.Target == "" {
		opts.Target = fmt.Sprintf("podflow-node-%s-%s.tar.gz", opts.NodeName, now().UTC().Format("20060102T150405Z"))
	}
	if o.filter != nil {
		opts.Filter = o.filter
	} else {
		policy, err := o.redact.Policy(o.log())
		if err != nil {
			var ue *redact.UsageError
			if errors.As(err, &ue) {
				return &codeError{code: exitUsage, err: err}
			}
			return err
		}
		opts.Filter = policy
	}
	opts.PodflowVersion = version
	opts.Logger = o.log()
	o.log().WithFields(logrus.Fields{"node": opts.NodeName, "hostRoot": opts.HostRoot, "output": opts.Target}).Info("collecting node evidence")
	var end func()
	opts.Planned, opts.Progress, end = sourceProgress(newProgress(ctx, o.globalOptions), "node sources")
	res, err := node.Collect(ctx, opts)
	end()
	if err != nil {
		return err
	}
	if policy, ok := opts.Filter.(*redact.Policy); ok {
		if err := o.redact.CheckWritten(res.Target, policy, bundle.DefaultLimits()); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(o.streams.Out, res.Target); err != nil {
		return err
	}
	if inc := res.Incomplete(); len(inc) > 0 {
		names := make([]string, 0, len(inc))
		for _, s := range inc {
			names = append(names, s.Name)
		}
		o.log().WithField("sources", strings.Join(names, ",")).Warn("bundle written, but some sources are incomplete (see podflow inspect)")
		return &silentExit{code: exitPartial}
	}
	return nil
}

// commandLine reconstructs the invocation from the flags that were set, for the
// bundle's record of what was run.
func commandLine(cmd *cobra.Command) []string {
	line := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		line = append(line, "--"+f.Name+"="+f.Value.String())
	})
	return line
}
