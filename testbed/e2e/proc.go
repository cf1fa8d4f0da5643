//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one long-running component of the test bed, started in its own process group
// so that it and everything it forks can be stopped together, and so a Ctrl-C on the
// terminal reaches the test (which stops components in order) rather than each of them.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // file holding its output, or "" when it logs to the journal
	done chan struct{}
	err  error
}

// startProc starts argv with output to logFile (or inherited streams when logFile is ""),
// and records its process group in the run directory for the shell's exit trap.
func (b *bed) startProc(name, logFile string, env []string, argv ...string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = b.dir
	// Pdeathsig stops the component if the test binary dies without running its cleanup
	// (go test's -timeout kills it); the process group catches what it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	pidFile := filepath.Join(b.dir, "pids", name+".pgid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		p.stop(time.Second)
		return nil, fmt.Errorf("record process group of %s: %w", name, err)
	}
	b.procs = append(b.procs, p)
	return p, nil
}

// exited reports whether the component is gone, with its exit error.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs the group.
func (p *proc) stop(grace time.Duration) {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM) // the group may already be gone; SIGKILL below settles it
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // members that outlived the leader
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// tail returns the last n lines of the component's log file, for failure messages.
func (p *proc) tail(n int) string {
	if p.log == "" {
		return ""
	}
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.log, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errExited reports a component that ended while the test bed still needed it.
type errExited struct {
	name string
	err  error
	tail string
}

func (e *errExited) Error() string {
	msg := fmt.Sprintf("%s exited: %v", e.name, e.err)
	if e.tail != "" {
		msg += "\nlast lines of its log:\n" + e.tail
	}
	return msg
}

// waitFor polls cond until it returns true, the deadline passes, or a watched component
// exits. cond's last error is part of the timeout message.
func waitFor(ctx context.Context, what string, timeout time.Duration, watch []*proc, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		for _, p := range watch {
			if gone, err := p.exited(); gone {
				return &errExited{name: p.name, err: err, tail: p.tail(30)}
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("waiting for %s: timed out after %s: %w", what, timeout, last)
			}
			return fmt.Errorf("waiting for %s: timed out after %s", what, timeout)
		case <-tick.C:
		}
	}
}

// run executes a short command and returns its combined output.
func run(ctx context.Context, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

var errNotRoot = errors.New("the test bed runs a kubelet, containerd and CNI: run it as root (sudo make e2e)")
