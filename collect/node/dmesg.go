package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
)

// oomMarkers are the kernel messages of an OOM kill, global or by a memory cgroup, across
// kernel versions: the trigger, the memcg usage and stats, the victim and the reaper.
var oomMarkers = [][]byte{
	[]byte("invoked oom-killer"),
	[]byte("Out of memory"),
	[]byte("Memory cgroup out of memory"),
	[]byte("Memory cgroup stats for"),
	[]byte("memory: usage"),
	[]byte("memory+swap: usage"),
	[]byte("oom-kill:"),
	[]byte("Killed process"),
	[]byte("Kill process"),
	[]byte("oom_reaper:"),
	[]byte("killed as a result of limit of"),
}

// oomContext is how many lines around each OOM line are kept too, as grep -C does.
const oomContext = 2

// collectDmesg reads the kernel ring buffer and keeps the OOM killer's lines.
func (c *collector) collectDmesg(ctx context.Context) bundle.Source {
	src := bundle.Source{Name: SourceDmesg}
	var reasons []string
	var raw []byte
	found := false
	for _, args := range [][]string{{"--time-format", "iso"}, nil} {
		out, res, reason := c.runDmesg(ctx, args)
		if res == journalFound {
			raw, found = out, true
			break
		}
		reasons = append(reasons, reason)
		if res == journalMissing {
			break
		}
	}
	if !found {
		out, reason, ok := c.readKmsgAny(ctx)
		if ok {
			raw, found = out, true
		} else {
			reasons = append(reasons, reason)
		}
	}
	if !found {
		src.Status, src.Error = bundle.StatusFailed, strings.Join(reasons, "; ")
		return src
	}
	kept, _ := keepTail(filterOOM(raw), c.opts.MaxDmesgBytes)
	p, err := c.write(bundle.NodeDmesg, kept)
	if err != nil {
		src.Status, src.Error = bundle.StatusFailed, err.Error()
		return src
	}
	src.Status, src.Files = bundle.StatusOK, []string{p}
	return src
}

// runDmesg runs dmesg with args. The result reuses the journal outcomes: found, failed,
// or missing when dmesg is not installed and trying it again is pointless.
func (c *collector) runDmesg(ctx context.Context, args []string) ([]byte, journalResult, string) {
	st := Step{Source: SourceDmesg, Command: append([]string{"dmesg"}, args...)}
	if args == nil {
		st.Note = "fallback: dmesg without --time-format (busybox or old util-linux)"
	}
	t0 := time.Now()
	out, err := c.opts.Runner.Run(ctx, "dmesg", args...)
	st.DurationMS = time.Since(t0).Milliseconds()
	st.Stderr = excerpt(out.Stderr)
	if err != nil {
		st.Error = err.Error()
		c.step(st)
		if errors.Is(err, exec.ErrNotFound) {
			return nil, journalMissing, "dmesg is not installed"
		}
		return nil, journalFailed, err.Error()
	}
	st.ExitCode = exitCode(out.ExitCode)
	if out.ExitCode != 0 {
		c.step(st)
		return nil, journalFailed, fmt.Sprintf("%s: exit code %d: %s", strings.Join(st.Command, " "), out.ExitCode, orNone(st.Stderr))
	}
	data, dropped := boundOutput(out, c.opts.MaxLogBytes)
	st.Used, st.Bytes, st.TruncatedBytes = true, int64(len(data)), dropped
	c.step(st)
	return data, journalFound, ""
}

// readKmsgAny reads /dev/kmsg, trying the host root's copy too: a debug Pod may not have
// the device in its own /dev.
func (c *collector) readKmsgAny(ctx context.Context) ([]byte, string, bool) {
	paths := []string{c.opts.KmsgPath}
	if c.opts.HostRoot != "/" {
		paths = append(paths, c.hostPath(c.opts.KmsgPath))
	}
	var reasons []string
	for _, p := range paths {
		st := Step{Source: SourceDmesg, Read: p, Note: "fallback: dmesg did not work"}
		t0 := time.Now()
		data, err := readKmsg(ctx, p, c.opts.MaxLogBytes)
		st.DurationMS = time.Since(t0).Milliseconds()
		if err != nil {
			st.Error = err.Error()
			c.step(st)
			if errors.Is(err, fs.ErrNotExist) {
				reasons = append(reasons, fmt.Sprintf("no %s", p))
			} else {
				reasons = append(reasons, err.Error())
			}
			continue
		}
		out := formatKmsg(data)
		st.Used, st.Bytes = true, int64(len(out))
		c.step(st)
		return out, "", true
	}
	return nil, strings.Join(reasons, "; "), false
}

// formatKmsg turns /dev/kmsg records ("6,1234,5678901,-;text", continuation lines
// starting with a space) into dmesg's raw lines ("[    5.678901] text").
func formatKmsg(data []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 || line[0] == ' ' {
			continue
		}
		head, msg, ok := bytes.Cut(line, []byte(";"))
		fields := bytes.Split(head, []byte(","))
		var usec int64
		var err error
		if ok && len(fields) >= 3 {
			usec, err = strconv.ParseInt(string(fields[2]), 10, 64)
		}
		if !ok || len(fields) < 3 || err != nil {
			// Not a record header: keep the line as it is rather than lose it.
			out.Write(line)
			out.WriteByte('\n')
			continue
		}
		fmt.Fprintf(&out, "[%5d.%06d] %s\n", usec/1e6, usec%1e6, msg)
	}
	return out.Bytes()
}

// filterOOM keeps the lines of OOM kills and oomContext lines around each.
func filterOOM(data []byte) []byte {
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if !isOOMLine(l) {
			continue
		}
		for j := max(0, i-oomContext); j <= min(len(lines)-1, i+oomContext); j++ {
			keep[j] = true
		}
	}
	var out bytes.Buffer
	for i, l := range lines {
		if keep[i] {
			out.Write(l)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

func isOOMLine(l []byte) bool {
	for _, m := range oomMarkers {
		if bytes.Contains(l, m) {
			return true
		}
	}
	return false
}

// bootTime derives the boot instant from /proc/uptime (the same for every mount
// namespace, so no host root is needed).
func bootTime(now time.Time) (time.Time, bool) {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, false
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	secs, err := strconv.ParseFloat(first, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return now.Add(-time.Duration(secs * float64(time.Second))).UTC(), true
}
