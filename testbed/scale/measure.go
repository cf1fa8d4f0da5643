package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// usage is what one client run cost, on its side and on the server's.
type usage struct {
	wall, cpu     time.Duration
	rssKB         int64
	serverCPU     time.Duration // kube-apiserver and etcd, while the client ran
	load          string        // 1-minute load average when the run started
	outputBytes   int64
	exitCode      int
	clientSummary string
}

type row struct {
	pods   int
	client string
	u      usage
}

const (
	clientPodflow = "podflow collect -A"
	clientCompare = "podflow collect -A (before)"
	clientDump    = "kubectl cluster-info dump -A"
	clientFloor   = "floor"
)

// measure runs every client o.rounds times, in turns, and keeps each one's fastest run.
func (c *cluster) measure(ctx context.Context, o options, pods int) ([]row, error) {
	type client struct {
		name string
		argv func(out string) []string
		out  string
	}
	clients := []client{
		{clientPodflow, func(out string) []string {
			return []string{o.podflow, "collect", "-A", "--kubeconfig", c.collectorConfig, "-o", out, "--force"}
		}, "podflow-%d-%d.tar.gz"},
		{clientDump, func(out string) []string {
			return []string{filepath.Join(c.bin, "kubectl"), "--kubeconfig", c.adminKubeconfig, "cluster-info", "dump",
				"--all-namespaces", "--output-directory", out}
		}, "dump-%d-%d"},
		{clientFloor, func(string) []string {
			return []string{o.floor, "-kubeconfig", c.collectorConfig}
		}, ""},
	}
	if o.compare != "" {
		clients = append([]client{{clientCompare, func(out string) []string {
			return []string{o.compare, "collect", "-A", "--kubeconfig", c.collectorConfig, "-o", out, "--force"}
		}, "before-%d-%d.tar.gz"}}, clients...)
	}
	best := map[string]usage{}
	for round := range o.rounds {
		for _, cl := range clients {
			if cl.name == clientDump && o.dumpMaxPods > 0 && pods > o.dumpMaxPods {
				continue
			}
			out := ""
			if cl.out != "" {
				out = c.path("out", fmt.Sprintf(cl.out, pods, round))
			}
			u, err := c.runMeasured(ctx, cl.argv(out))
			if err != nil {
				return nil, fmt.Errorf("%s at %d pods: %w", cl.name, pods, err)
			}
			if out != "" {
				u.outputBytes = diskUsage(out)
				if cl.name == clientPodflow || cl.name == clientCompare {
					if err := c.checkBundle(ctx, o, out, u); err != nil {
						return nil, err
					}
				}
				if !o.keep {
					_ = os.RemoveAll(out)
				}
			}
			logf("%d pods, %s: wall %s, cpu %s, peak RSS %d MB, server cpu %s, load %s %s", pods, cl.name,
				u.wall.Round(10*time.Millisecond), u.cpu.Round(10*time.Millisecond), u.rssKB/1024,
				u.serverCPU.Round(10*time.Millisecond), u.load, u.clientSummary)
			if b, ok := best[cl.name]; !ok || u.wall < b.wall {
				best[cl.name] = u
			}
		}
	}
	var rows []row
	for _, cl := range clients {
		if u, ok := best[cl.name]; ok {
			rows = append(rows, row{pods: pods, client: cl.name, u: u})
		}
	}
	return rows, nil
}

// checkBundle verifies the bundle podflow wrote; a collection whose sources failed is
// not a measurement of collect.
func (c *cluster) checkBundle(ctx context.Context, o options, path string, u usage) error {
	if u.exitCode != 0 {
		return fmt.Errorf("podflow collect exited %d: %s", u.exitCode, u.clientSummary)
	}
	out, err := exec.CommandContext(ctx, o.podflow, "verify", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("podflow verify %s: %w\n%s", path, err, out)
	}
	return nil
}

// runMeasured runs one client and reads its cost: wall time, CPU and peak RSS from the
// child's rusage, and the CPU kube-apiserver and etcd spent meanwhile from /proc.
func (c *cluster) runMeasured(ctx context.Context, argv []string) (usage, error) {
	u := usage{load: loadAverage()}
	before, err := c.serverTicks()
	if err != nil {
		return u, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	u.wall = time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		u.exitCode = ee.ExitCode()
		if argv[0] != "" && !strings.HasSuffix(argv[0], "podflow") {
			return u, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, tailOf(stderr.String()))
		}
	case err != nil:
		return u, err
	}
	after, err := c.serverTicks()
	if err != nil {
		return u, err
	}
	u.serverCPU = time.Duration(after-before) * time.Second / 100
	u.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.rssKB = ru.Maxrss
	}
	u.clientSummary = strings.TrimSpace(tailOf(stdout.String() + stderr.String()))
	return u, nil
}

func tailOf(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

// serverTicks is the CPU time of kube-apiserver and etcd so far, in clock ticks (the
// kernel's USER_HZ, 100 on Linux).
func (c *cluster) serverTicks() (int64, error) {
	var total int64
	for _, p := range []*exec.Cmd{c.apiserver, c.etcd} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
		if err != nil {
			return 0, fmt.Errorf("read the CPU time of %s: %w", filepath.Base(p.Path), err)
		}
		// Fields after the command name, which is in parentheses and may hold spaces.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			return 0, fmt.Errorf("short /proc/%d/stat", p.Process.Pid)
		}
		for _, f := range fields[11:13] { // utime, stime
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

func diskUsage(path string) int64 {
	var total int64
	_ = filepath.Walk(path, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| pods | client | wall | CPU | peak RSS | API server + etcd CPU | output | load avg | wall vs podflow |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := "1.00×"
		if r.client != clientPodflow {
			for _, p := range rows {
				if p.pods == r.pods && p.client == clientPodflow && p.u.wall > 0 {
					ratio = fmt.Sprintf("%.2f×", float64(r.u.wall)/float64(p.u.wall))
				}
			}
		}
		out := "–"
		if r.u.outputBytes > 0 {
			out = fmt.Sprintf("%.1f MB", float64(r.u.outputBytes)/1e6)
		}
		fmt.Fprintf(w, "| %d | %s | %.2f s | %.2f s | %d MB | %.2f s | %s | %s | %s |\n", r.pods, r.client,
			r.u.wall.Seconds(), r.u.cpu.Seconds(), r.u.rssKB/1024, r.u.serverCPU.Seconds(), out, r.u.load, ratio)
	}
	fmt.Fprintln(w)
}
