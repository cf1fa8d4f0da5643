package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// Output is what one command produced.
type Output struct {
	Stdout []byte
	Stderr []byte
	// ExitCode is the process exit status; it is meaningful only when Run returned no error.
	ExitCode int
	// Dropped counts stdout bytes discarded from the start because the output was longer
	// than the runner's cap; the newest output is what is kept.
	Dropped int64
}

// Runner runs a command on the node. Tests substitute it to return canned output.
type Runner interface {
	// Run executes name with args. A command that ran and exited non-zero is not an error:
	// its status is in Output.ExitCode. The error is for a command that could not run at
	// all (not installed, not permitted, cancelled).
	Run(ctx context.Context, name string, args ...string) (Output, error)
}

// ExecRunner runs commands as child processes.
type ExecRunner struct {
	// MaxStdout caps the stdout kept per command; the tail is kept because the newest
	// journal lines are the ones that explain a failing Pod. Zero means no cap.
	MaxStdout int64
	// MaxStderr caps the stderr kept per command, also from the tail. Zero means 64 KiB.
	MaxStderr int64
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) (Output, error) {
	maxErr := r.MaxStderr
	if maxErr <= 0 {
		maxErr = 64 << 10
	}
	stdout, stderr := &tailBuffer{max: r.MaxStdout}, &tailBuffer{max: maxErr}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Dropped: stdout.dropped}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return out, fmt.Errorf("run %s: %w", name, ctx.Err())
	case errors.As(err, &exit):
		out.ExitCode = exit.ExitCode()
		return out, nil
	}
	return out, fmt.Errorf("run %s: %w", name, err)
}

// tailBuffer keeps the last max bytes written to it; max <= 0 keeps everything.
type tailBuffer struct {
	max     int64
	buf     bytes.Buffer
	dropped int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if t.max <= 0 {
		return t.buf.Write(p)
	}
	if int64(len(p)) >= t.max {
		t.dropped += int64(t.buf.Len()) + int64(len(p)) - t.max
		t.buf.Reset()
		t.buf.Write(p[int64(len(p))-t.max:])
		return n, nil
	}
	if over := int64(t.buf.Len()+len(p)) - t.max; over > 0 {
		t.buf.Next(int(over))
		t.dropped += over
	}
	t.buf.Write(p)
	return n, nil
}

func (t *tailBuffer) Bytes() []byte { return t.buf.Bytes() }

// keepTail bounds data to its last max bytes, starting at a line boundary so that no
// half line reaches the bundle. It returns the kept bytes and how many were dropped.
func keepTail(data []byte, max int64) ([]byte, int64) {
	if max <= 0 || int64(len(data)) <= max {
		return data, 0
	}
	cut := int64(len(data)) - max
	kept := trimPartialLine(data[cut:], data[cut-1] == '\n')
	return kept, int64(len(data) - len(kept))
}

// trimPartialLine drops the first line of a tail unless it starts on a line boundary.
// A tail that is one unterminated line is kept whole: some evidence beats none.
func trimPartialLine(tail []byte, aligned bool) []byte {
	if aligned {
		return tail
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i+1 < len(tail) {
		return tail[i+1:]
	}
	return tail
}
