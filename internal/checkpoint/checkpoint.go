// Package checkpoint lets a test stop podflow at a named step of its work and signal
// it there, instead of guessing from the size of the input how long the step lasts.
//
// It does nothing unless PODFLOW_TEST_CHECKPOINT names a step ("read", "load",
// "write") and PODFLOW_TEST_CHECKPOINT_FILE a file to create. The first time the
// process reaches that step it creates the file, then waits until Release is called
// (podflow calls it once a signal has cancelled its work), so the signal always lands
// in the middle of the step and the step's own cancellation checks are what stop it.
package checkpoint

import (
	"os"
	"sync"
)

// Environment variables that arm a checkpoint.
const (
	EnvStep = "PODFLOW_TEST_CHECKPOINT"
	EnvFile = "PODFLOW_TEST_CHECKPOINT_FILE"
)

var (
	released    = make(chan struct{})
	releaseOnce sync.Once
	reachOnce   sync.Once
	armed       = os.Getenv(EnvStep)
	marker      = os.Getenv(EnvFile)
)

// Reach marks that the process is at step. When the step is the armed one, the first
// call creates the marker file and blocks until Release.
func Reach(step string) {
	if armed == "" || armed != step || marker == "" {
		return
	}
	reachOnce.Do(func() {
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return // the test cannot see the step: it fails on its own timeout
		}
		_ = f.Close()
		<-released
	})
}

// Release lets a process waiting at its checkpoint go on.
func Release() {
	releaseOnce.Do(func() { close(released) })
}
