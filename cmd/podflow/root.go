package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"podflow.dev/podflow/untrusted"
)

// Exit codes, per the design: 0 ok, 1 error, 2 usage, 3 findings at or above --fail-on.
// 4 is a collection that wrote a bundle but with some sources failed.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitFindings = 3
	exitPartial  = 4
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// streams are the command's standard streams, replaceable in tests.
type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY is true when Out is a terminal: tables may use colour and progress is shown.
	OutTTY bool
	// ErrTTY is true when ErrOut is a terminal.
	ErrTTY bool
	// Env reads the environment (COLUMNS, NO_COLOR); nil reads none, so a test sees
	// the same output whatever its shell exports.
	Env func(string) string
}

// env returns the variable's value, or "" when there is no environment.
func (s streams) env(name string) string {
	if s.Env == nil {
		return ""
	}
	return s.Env(name)
}

func defaultStreams() streams {
	return streams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		Env:    os.Getenv,
	}
}

// codeError carries a specific exit code up to main.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &codeError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends with a code without printing anything more (the command already reported).
type silentExit struct{ code int }

func (e *silentExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// globalOptions are the flags every command shares.
type globalOptions struct {
	streams   streams
	verbosity int
	// quiet turns progress off even on a terminal (-q).
	quiet  bool
	logger *logrus.Logger
}

func (g *globalOptions) log() logrus.FieldLogger { return g.logger }

func newRootCmd(s streams) (*cobra.Command, *globalOptions) {
	g := &globalOptions{streams: s, logger: logrus.New()}
	root := &cobra.Command{
		Use:   "podflow",
		Short: "Explain why a Kubernetes Pod is not running, from evidence, offline",
		Long: `podflow collects what explains a Pod's life (manifests, events, logs, node journals,
container runtime state) into one redacted bundle, and analyzes a bundle offline: it
replays the Pod creation chain stage by stage and reports where it broke, why, and the
evidence that says so.`,
		Example: `  # Collect evidence for one namespace, then analyze it anywhere
  podflow collect -n shop -o shop.tar.gz
  podflow analyze shop.tar.gz

  # Check a bundle you received is intact
  podflow verify shop.tar.gz`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			g.logger.SetOutput(s.ErrOut)
			g.logger.SetFormatter(escapingFormatter{inner: &logrus.TextFormatter{DisableTimestamp: !s.ErrTTY, DisableColors: !s.ErrTTY, FullTimestamp: true}})
			switch {
			case g.verbosity >= 2:
				g.logger.SetLevel(logrus.TraceLevel)
			case g.verbosity == 1:
				g.logger.SetLevel(logrus.DebugLevel)
			default:
				g.logger.SetLevel(logrus.InfoLevel)
			}
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.PersistentFlags().CountVarP(&g.verbosity, "verbose", "v", "more detail: -v for decisions on stderr and, in a report, the rules skipped and load warnings listed; -vv for per-file detail")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "no progress on stderr, even on a terminal; a report shows its findings only")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &codeError{code: exitUsage, err: fmt.Errorf("%w\nSee '%s --help'", err, cmd.CommandPath())}
	})
	root.AddCommand(subcommands(g)...)
	typedUsage(root)
	registerCompletions(root)
	return root, g
}

// typedUsage makes the argument errors of cmd and its subcommands usage errors. cobra
// returns them untyped, and recognizing them by their wording would break with any
// cobra release. A command that only groups others gets a RunE that prints its help, so
// an unknown subcommand reaches the argument check instead of the help fallback.
func typedUsage(cmd *cobra.Command) {
	check := cmd.Args
	if check == nil {
		check = cobra.NoArgs // a positional argument would be an unknown subcommand
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return &codeError{code: exitUsage, err: fmt.Errorf("%w\nSee '%s --help'", err, c.CommandPath())}
		}
		return nil
	}
	if !cmd.Runnable() {
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	for _, sub := range cmd.Commands() {
		typedUsage(sub)
	}
}

// subcommands lists every verb; one file per verb builds its command.
func subcommands(g *globalOptions) []*cobra.Command {
	return []*cobra.Command{
		newVersionCmd(g),
		newVerifyCmd(g),
		newInspectCmd(g),
		newRedactCmd(g),
		newScanCmd(g),
		newCollectCmd(g),
		newAnalyzeCmd(g),
		newExplainCmd(g),
		newRulesCmd(g),
		newSignaturesCmd(g),
		newCatalogCmd(g),
		newBundleCmd(g),
		newConvertCmd(g),
		newServeCmd(g),
		newIndexCmd(g),
		newQueryCmd(g),
		newFleetCmd(g),
	}
}

// run executes podflow with args and returns the process exit code.
// stopsOnSignal marks a command whose normal end is Ctrl-C or SIGTERM (serve): when
// it then returns without error, podflow exits 0, not 130 or 143.
const stopsOnSignal = "podflow.dev/stops-on-signal"

func run(ctx context.Context, args []string, s streams) int {
	return runAs(ctx, "podflow", args, s)
}

// runAs is run for a binary started as argv0: as kubectl-podflow, podflow presents
// itself as the kubectl plugin.
func runAs(ctx context.Context, argv0 string, args []string, s streams) int {
	root, _ := newRootCmd(s)
	if isKubectlPlugin(argv0) {
		presentAsPlugin(root)
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if ie, ok := interrupted(ctx); ok {
		if err == nil && cmd != nil && cmd.Annotations[stopsOnSignal] == "true" {
			// A server's normal end is the signal: it stopped cleanly.
			return exitOK
		}
		var kept *keptError
		switch {
		case errors.As(err, &kept):
			// The command stopped on the signal and kept what it had written.
			fmt.Fprintf(s.ErrOut, "podflow: %s: stopped; %s\n", ie, kept.kept)
		case err != nil:
			// The command stopped on the signal and cleaned up; one line says why.
			fmt.Fprintf(s.ErrOut, "podflow: %s: stopped, nothing written\n", ie)
		default:
			// The signal came as the command was finishing: what it wrote is whole, but
			// whoever sent the signal is told it was received, as the shell convention
			// (and a script waiting on the exit status) expects.
			fmt.Fprintf(s.ErrOut, "podflow: %s as the command finished; its output is complete\n", ie)
		}
		return signalExitCode(ie.signal)
	}
	if err == nil {
		return exitOK
	}
	var silent *silentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	// Errors name bundle entries and quote evidence: print them escaped, keeping only
	// the line breaks podflow's own messages use.
	fmt.Fprintf(s.ErrOut, "Error: %s\n", untrusted.Lines(err.Error()))
	var ee *codeError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitError
}
