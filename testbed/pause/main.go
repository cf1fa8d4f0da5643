// Command pause is the test bed's pod sandbox process. No registry is reachable, so the
// sandbox image is built locally around this binary. Like the upstream pause container it
// sleeps until SIGINT or SIGTERM (as PID 1 a process only gets the signals it handles, so
// a plain `sleep` would ignore the runtime's stop request) and reaps orphaned children.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child so none stays a zombie in the pod's PID namespace.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
