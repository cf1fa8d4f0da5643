package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// interruptedError is the cause of a context cancelled by a signal.
type interruptedError struct {
	signal os.Signal
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s", signalName(e.signal))
}

// signalExitCode is the shell convention for a process ended by a signal: 128 plus its
// number (130 for SIGINT, 143 for SIGTERM).
func signalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitError
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// interrupted returns the signal error when ctx was cancelled by one.
func interrupted(ctx context.Context) (*interruptedError, bool) {
	var ie *interruptedError
	if errors.As(context.Cause(ctx), &ie) {
		return ie, true
	}
	return nil, false
}

// keptError ends a command a signal stopped after it had written part of its work,
// which it keeps (an index keeps the inputs recorded so far): kept says what.
type keptError struct {
	err  error
	kept string
}

func (e *keptError) Error() string { return e.kept }

func (e *keptError) Unwrap() error { return e.err }
