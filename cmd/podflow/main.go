// Command podflow explains, from collected evidence and offline, why a Kubernetes Pod
// is not running.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runAs(ctx, os.Args[0], os.Args[1:], defaultStreams())
	stop()
	os.Exit(code)
}
