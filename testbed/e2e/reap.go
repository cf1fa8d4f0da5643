//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reap removes everything a test bed run may have left on the host, whether it stopped
// cleanly or was killed: processes (components, containerd shims, container processes),
// mounts under the run directory, the node address and the pod bridge, and the pod
// cgroups. It is idempotent and only touches what belongs to the test bed: processes that
// name the run directory, the kubelet's kubepods cgroups (checkForeignNode refuses a
// machine with another kubelet), and the test bed's fixed address and bridge name.
func reap(dir string, logf func(string, ...any)) {
	self := os.Getpid()
	killed := 0
	for round := 0; round < 3; round++ {
		pids := recordedGroups(dir)
		pids = append(pids, pidsMentioning(dir, self)...)
		pids = append(pids, podCgroupPids()...)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if pid > 1 && pid != self {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed++
				}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if killed > 0 {
		logf("reaped %d leftover processes", killed)
	}
	if n := unmountUnder(dir); n > 0 {
		logf("unmounted %d leftover mounts under %s", n, dir)
	}
	if n := removeOrphanNetns(); n > 0 {
		logf("removed %d pod network namespaces no process uses", n)
	}
	removeStaleShimSockets()
	// Both may already be gone; errors only say so.
	_ = exec.Command("ip", "addr", "del", nodeIP+"/32", "dev", "lo").Run()
	_ = exec.Command("ip", "link", "del", bridgeName).Run()
	removePodCgroups()
	_ = os.RemoveAll(filepath.Join(dir, "pids"))
}

// recordedGroups returns the negated process groups recorded by startProc, so one kill
// reaches every member.
func recordedGroups(dir string) []int {
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pgid")) // a bad pattern is impossible here
	var out []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pgid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pgid > 1 {
			if syscall.Kill(-pgid, 0) == nil {
				out = append(out, -pgid)
			}
		}
	}
	return out
}

// componentNames are the executables the test bed runs (as /proc/PID/comm shows them,
// cut to 15 bytes); reap only kills those, so a shell or viewer in the run directory
// survives.
var componentNames = []string{"containerd", "kube", "kubelet", "etcd", "systemd-journal", "systemd-cat", "crictl", "runc", "podflow"}

// pidsMentioning lists test bed components whose command line names dir: components
// started with paths under it and containerd shims, which get the socket path as -address.
func pidsMentioning(dir string, self int) []int {
	entries, _ := os.ReadDir("/proc") // nothing to reap without /proc
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !isComponent(strings.TrimSpace(string(comm))) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), dir) {
			out = append(out, pid)
		}
	}
	return out
}

func isComponent(comm string) bool {
	for _, name := range componentNames {
		if strings.HasPrefix(comm, name) {
			return true
		}
	}
	return false
}

// podCgroupDirs lists the kubelet's pod cgroup trees in every mounted hierarchy.
func podCgroupDirs() []string {
	var roots []string
	hier, _ := os.ReadDir("/sys/fs/cgroup") // no cgroup mount means no pod cgroups
	for _, h := range hier {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", h.Name(), "kubepods"))
	}
	roots = append(roots, "/sys/fs/cgroup/kubepods", "/sys/fs/cgroup/kubepods.slice")
	var out []string
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			out = append(out, r)
		}
	}
	return out
}

// podCgroupPids lists processes in the pod cgroups: containers whose shim is gone.
func podCgroupPids() []int {
	var out []int
	for _, root := range podCgroupDirs() {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil // an unreadable branch has nothing we can kill
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// removePodCgroups removes the emptied pod cgroups, deepest first.
func removePodCgroups() {
	for _, root := range podCgroupDirs() {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			_ = syscall.Rmdir(d) // a cgroup that still has members stays; the next run retries
		}
	}
}

// unmountUnder detaches every mount at or below dir, deepest first, and counts them.
func unmountUnder(dir string) int {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	n := 0
	for _, mp := range points {
		if syscall.Unmount(mp, syscall.MNT_DETACH) == nil {
			n++
		}
	}
	return n
}

// removeOrphanNetns removes the pod network namespaces containerd's CRI plugin pins under
// /run/netns (its location is fixed) that no process is in any more: those of sandboxes
// killed before the runtime could remove them. A namespace some process uses, for
// example another runtime's pod, is left alone.
func removeOrphanNetns() int {
	pinned, _ := filepath.Glob("/run/netns/cni-*") // a bad pattern is impossible here
	if len(pinned) == 0 {
		return 0
	}
	inUse := map[uint64]bool{}
	procs, _ := os.ReadDir("/proc") // without /proc every namespace looks unused; none are pinned then either
	for _, e := range procs {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil {
			inUse[st.Ino] = true
		}
	}
	n := 0
	for _, p := range pinned {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err == nil && inUse[st.Ino] {
			continue
		}
		_ = syscall.Unmount(p, syscall.MNT_DETACH) // an unmounted leftover only needs removing
		if os.Remove(p) == nil {
			n++
		}
	}
	return n
}

// removeStaleShimSockets removes containerd shim sockets (their directory is fixed) that
// nothing listens on any more.
func removeStaleShimSockets() {
	socks, _ := filepath.Glob("/run/containerd/s/*") // a bad pattern is impossible here
	for _, p := range socks {
		c, err := net.DialTimeout("unix", p, time.Second)
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			_ = os.Remove(p) // best effort: a socket that cannot be removed is only clutter
		}
	}
}

// unescapeMount decodes the octal escapes (\040 for space) of /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// foreignKubelet returns the pid of a kubelet that does not belong to the test bed in
// dir, or 0. Its pods would share the kubepods cgroups that reap empties.
func foreignKubelet(dir string) int {
	for _, pid := range pidsNamed("kubelet") {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && !strings.Contains(string(cmdline), dir) {
			return pid
		}
	}
	return 0
}
