// Command podflow explains, from collected evidence and offline, why a Kubernetes Pod
// is not running.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"podflow.dev/podflow/internal/checkpoint"
)

// childOwnsInterrupt is set while a shell podflow started has the terminal.
var childOwnsInterrupt atomic.Bool

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the command to stop: it abandons its work, removes what
		// it was writing and returns. A second one ends podflow at once. While a shell
		// podflow started runs in the foreground (serve --shell), Ctrl-C is the shell's:
		// the terminal sends it to the shell and its commands too.
		first := true
		for sig := range signals {
			if sig == os.Interrupt && childOwnsInterrupt.Load() {
				continue
			}
			if first {
				first = false
				cancel(&interruptedError{signal: sig})
				checkpoint.Release()
				continue
			}
			// Partial output may be left; the next run that writes the same target removes it.
			fmt.Fprintf(os.Stderr, "podflow: %s again: exiting at once\n", signalName(sig))
			os.Exit(signalExitCode(sig))
		}
	}()
	code := runAs(ctx, os.Args[0], os.Args[1:], defaultStreams())
	cancel(nil)
	os.Exit(code)
}
