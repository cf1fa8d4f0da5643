//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/testbed/scenario"
)

const journalStdout = "/run/systemd/journal/stdout"

// journalUp reports whether a journald accepts stream connections.
func journalUp() bool {
	c, err := net.DialTimeout("unix", journalStdout, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// startJournald makes sure a journald runs, so the kubelet and containerd log to a real
// journal that `journalctl -u kubelet` reads, as on a production node. A machine without
// systemd as PID 1 has none, so the test bed starts one; if that fails, the components log
// to files and the node collector falls back to them.
func (b *bed) startJournald(ctx context.Context) error {
	if os.Getenv("PODFLOW_TESTBED_JOURNAL") == "off" {
		b.logf("PODFLOW_TESTBED_JOURNAL=off: kubelet and containerd log to files")
		return nil
	}
	if journalUp() {
		b.journal = "host"
		return nil
	}
	const journald = "/lib/systemd/systemd-journald"
	if _, err := os.Stat(journald); err != nil {
		b.logf("no %s: kubelet and containerd log to files", journald)
		return nil
	}
	p, err := b.startProc("systemd-journald", b.path("logs", "journald.log"), b.componentEnv(), journald)
	if err != nil {
		return err
	}
	err = waitFor(ctx, "journald's stream socket", 30*time.Second, []*proc{p}, func(context.Context) (bool, error) {
		return journalUp(), nil
	})
	if err != nil {
		b.logf("journald did not start (%v): kubelet and containerd log to files", err)
		p.stop(time.Second)
		return nil
	}
	b.journald, b.journal = p, "own"
	return nil
}

// unitCgroupRoot is the cgroup hierarchy journald reads units from: the unified one
// (pure cgroup v2, or the hybrid mount), else the named systemd v1 hierarchy.
func unitCgroupRoot() string {
	for _, d := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(d, "cgroup.controllers")); err == nil {
			return d
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/systemd/cgroup.procs"); err == nil {
		return "/sys/fs/cgroup/systemd"
	}
	return ""
}

// journaled wraps argv so its output goes to the journal under the syslog identifier
// unit. When the test bed runs its own journald (no systemd), the process is also placed
// in system.slice/<unit>.service, the cgroup systemd would give it, so journald records
// _SYSTEMD_UNIT and `journalctl -u <unit>` finds it as on a systemd host. Without a
// journal, output goes to a log file. It returns the argv and the log file.
func (b *bed) journaled(unit string, argv []string) ([]string, string) {
	if b.journal == "" {
		return argv, b.path("logs", unit+".log")
	}
	cat := append([]string{"systemd-cat", "-t", unit, "--"}, argv...)
	if b.journal != "own" {
		return cat, ""
	}
	root := unitCgroupRoot()
	if root == "" {
		return cat, ""
	}
	slice := filepath.Join(root, "system.slice")
	if _, err := os.Stat(slice); err != nil {
		b.unitCgroups = append(b.unitCgroups, slice) // made here, so removed at the end too
	}
	cg := filepath.Join(slice, unit+".service")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		b.logf("cannot create %s (%v): %s entries carry no unit", cg, err, unit)
		return cat, ""
	}
	b.unitCgroups = append(b.unitCgroups, cg)
	script := `echo $$ > "$1" && shift && exec "$@"`
	return append([]string{"/bin/sh", "-c", script, "sh", filepath.Join(cg, "cgroup.procs")}, cat...), ""
}

// setupNodeNetwork gives the node a stable, non-loopback address on lo.
func (b *bed) setupNodeNetwork(ctx context.Context) error {
	if out, err := run(ctx, nil, "ip", "addr", "replace", nodeIP+"/32", "dev", "lo"); err != nil {
		return fmt.Errorf("add the node address: %w (%s)", err, out)
	}
	var err error
	if b.ports.kubelet, err = freePort(nodeIP); err != nil {
		return err
	}
	b.ports.kubeletHealthz, err = freePort("127.0.0.1")
	return err
}

// overlayWorks tries an overlay mount under dir: overlay on overlay (a container) or on
// some file systems fails, and containerd then needs the native snapshotter.
func overlayWorks(dir string) bool {
	base := filepath.Join(dir, "overlay-probe")
	defer os.RemoveAll(base)
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			return false
		}
	}
	opts := fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", base, base, base)
	if err := exec.Command("mount", "-t", "overlay", "overlay", "-o", opts, filepath.Join(base, "merged")).Run(); err != nil {
		return false
	}
	return exec.Command("umount", filepath.Join(base, "merged")).Run() == nil
}

const containerdConfig = `version = 2
root = "{{root}}"
state = "{{state}}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "{{sock}}"

[ttrpc]
  address = "{{sock}}.ttrpc"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "{{opt}}"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "{{pause}}"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "{{snapshotter}}"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          # runcwrap raises negative oomScoreAdj values the kernel refuses here; see its doc.
          BinaryName = "{{runc}}"
          Root = "{{runcroot}}"
          SystemdCgroup = {{systemdcgroup}}
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "{{registries}}"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "{{cniconf}}"
      max_conf_num = 1
`

// cniConfig is the pod network: a bridge with host-local addresses and port mapping.
// containerd's CRI plugin sets up each pod's lo itself with the loopback plugin.
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "podflow",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "{{bridge}}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "{{subnet}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "{{ipam}}"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

func fill(tmpl string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(tmpl)
}

func (b *bed) startContainerd(ctx context.Context) error {
	b.containerdSock = b.path("containerd", "containerd.sock")
	b.snapshotter = "overlayfs"
	if !overlayWorks(b.dir) {
		b.snapshotter = "native"
		b.logf("overlay mounts do not work under %s: containerd uses the native snapshotter", b.dir)
	}
	cni := fill(cniConfig, "{{bridge}}", bridgeName, "{{subnet}}", podSubnet, "{{ipam}}", b.path("cni", "ipam"))
	if err := os.WriteFile(b.path("cni", "net.d", "10-podflow.conflist"), []byte(cni), 0o644); err != nil {
		return fmt.Errorf("write CNI config: %w", err)
	}
	// The wrapper's path shows in runtime errors and crictl inspect output, which end up
	// in recorded fixtures; under the run directory it names no checkout.
	if err := copyFile(b.bin("runcwrap"), b.path("bin", "runc"), 0o755); err != nil {
		return err
	}
	if err := b.launchContainerd(ctx, false); err != nil {
		return err
	}
	for _, img := range []string{"busybox.tar", "pause.tar"} {
		if out, err := b.ctr(ctx, "images", "import", "--snapshotter", b.snapshotter, filepath.Join(b.imagesDir, img)); err != nil {
			return fmt.Errorf("import %s: %w (%s)", img, err, out)
		}
	}
	out, err := b.ctr(ctx, "images", "list", "--quiet")
	if err != nil {
		return err
	}
	for _, want := range []string{busyboxImage, pauseImage} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("image %s missing after import; containerd has:\n%s", want, out)
		}
	}
	return nil
}

// launchContainerd writes containerd's configuration, its runc runtime using the systemd
// cgroup driver when systemdCgroup is set (the node's and the kubelet's is cgroupfs), and
// starts containerd (b.containerd), waiting until it answers.
func (b *bed) launchContainerd(ctx context.Context, systemdCgroup bool) error {
	cfg := fill(containerdConfig,
		"{{root}}", b.path("containerd", "root"), "{{state}}", b.path("containerd", "state"),
		"{{sock}}", b.containerdSock, "{{opt}}", b.path("containerd", "opt"), "{{pause}}", pauseImage,
		"{{snapshotter}}", b.snapshotter, "{{runc}}", b.path("bin", "runc"), "{{runcroot}}", b.path("containerd", "runc"),
		"{{systemdcgroup}}", strconv.FormatBool(systemdCgroup),
		"{{cniconf}}", b.path("cni", "net.d"), "{{registries}}", b.registryConfigDir())
	if err := os.WriteFile(b.path("containerd", "config.toml"), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write containerd config: %w", err)
	}
	realRunc, err := lookPath("runc")
	if err != nil {
		return err
	}
	argv, logFile := b.journaled("containerd", []string{"containerd", "--config", b.path("containerd", "config.toml")})
	p, err := b.startProc("containerd", logFile, b.componentEnv("PODFLOW_REAL_RUNC="+realRunc), argv...)
	if err != nil {
		return err
	}
	b.containerd = p
	return waitFor(ctx, "containerd", time.Minute, []*proc{p}, func(ctx context.Context) (bool, error) {
		_, err := b.ctr(ctx, "version")
		return err == nil, err
	})
}

// kubeletConfig is the node's KubeletConfiguration. It differs from a kubeadm node only
// where this machine requires it (cgroup v1, no swap accounting, a small disk).
func (b *bed) kubeletConfig() map[string]any {
	return map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"address":                     nodeIP,
		"port":                        b.ports.kubelet,
		"readOnlyPort":                0,
		"healthzBindAddress":          "127.0.0.1",
		"healthzPort":                 b.ports.kubeletHealthz,
		"tlsCertFile":                 creds.kubeletServingCert,
		"tlsPrivateKeyFile":           creds.kubeletServingKey,
		"authentication":              map[string]any{"anonymous": map[string]any{"enabled": false}, "webhook": map[string]any{"enabled": true}, "x509": map[string]any{"clientCAFile": b.pki.CAFile}},
		"authorization":               map[string]any{"mode": "Webhook"},
		"cgroupDriver":                "cgroupfs",
		"failCgroupV1":                false,
		"failSwapOn":                  false,
		"containerRuntimeEndpoint":    "unix://" + b.containerdSock,
		"clusterDNS":                  []string{clusterDNS},
		"clusterDomain":               "cluster.local",
		"podLogsDir":                  b.path("pod-logs"),
		"serializeImagePulls":         false,
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "50Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%",
			"imagefs.available": "1%", "imagefs.inodesFree": "1%",
		},
		"kubeAPIQPS":   50,
		"kubeAPIBurst": 100,
	}
}

func (b *bed) startKubelet(ctx context.Context) error {
	p, err := b.launchKubelet(kubeletStart{})
	if err != nil {
		return err
	}
	return waitFor(ctx, "node "+nodeName+" Ready", 2*time.Minute, []*proc{b.apiserver, b.containerd, p}, func(ctx context.Context) (bool, error) {
		n, err := b.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("node Ready=%s: %s", c.Status, c.Message)
			}
		}
		return false, errors.New("node has no Ready condition yet")
	})
}

// kubeletStart changes how the kubelet is started, for node faults that start it
// misconfigured. The zero value is the test bed's own kubelet.
type kubeletStart struct {
	// config edits the KubeletConfiguration.
	config func(map[string]any)
	// kubeconfig replaces the kubelet's kubeconfig when set.
	kubeconfig string
	// flags are added to the command line.
	flags []string
}

// launchKubelet starts the kubelet (b.kubelet) without waiting for it.
func (b *bed) launchKubelet(k kubeletStart) (*proc, error) {
	cfg := b.kubeletConfig()
	if k.config != nil {
		k.config(cfg)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubelet config: %w", err)
	}
	cfgPath := b.path("kubelet", "config.yaml")
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		return nil, fmt.Errorf("write kubelet config: %w", err)
	}
	kubeconfig := creds.kubeconfigs["kubelet"]
	if k.kubeconfig != "" {
		kubeconfig = k.kubeconfig
	}
	argv, logFile := b.journaled("kubelet", append([]string{b.bin("kubelet"),
		"--config", cfgPath,
		"--kubeconfig", kubeconfig,
		"--root-dir", b.path("kubelet"),
		"--hostname-override", nodeName,
		"--node-ip", nodeIP,
		"--v=2",
	}, k.flags...))
	p, err := b.startProc("kubelet", logFile, b.componentEnv(), argv...)
	if err != nil {
		return nil, err
	}
	b.kubelet = p
	return p, nil
}

// hostDir is the run directory's folder for scenarios' hostPath volumes
// (${PODFLOW_HOST_DIR}).
const hostDir = "host"

// seccompDir is the kubelet's seccomp directory: Localhost profiles are named relative
// to it (<root-dir>/seccomp).
func (b *bed) seccompDir() string { return b.path("kubelet", "seccomp") }

// installSeccomp writes a scenario's seccomp profiles where its pods' localhostProfile
// <scenario>/<file> finds them.
func (b *bed) installSeccomp(s *scenario.Scenario) error {
	for name, data := range s.Seccomp {
		dst := filepath.Join(b.seccompDir(), s.Name, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("install seccomp profile %s: %w", name, err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("install seccomp profile %s: %w", name, err)
		}
	}
	return nil
}

// namespaceReady reports whether pods can be created in ns without transient errors:
// its default ServiceAccount and the kube-root-ca.crt ConfigMap that every projected
// token volume mounts exist.
func (b *bed) namespaceReady(ctx context.Context, ns string) (bool, error) {
	if _, err := b.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return false, fmt.Errorf("ServiceAccount %s/default: %w", ns, err)
	}
	if _, err := b.client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		return false, fmt.Errorf("ConfigMap %s/kube-root-ca.crt: %w", ns, err)
	}
	return true, nil
}

func (b *bed) waitClusterReady(ctx context.Context) error {
	return waitFor(ctx, "the default namespace", time.Minute, []*proc{b.apiserver, b.controllerManager}, func(ctx context.Context) (bool, error) {
		ok, err := b.namespaceReady(ctx, "default")
		if apierrors.IsNotFound(err) {
			return false, err
		}
		return ok, err
	})
}

// lookPath finds a tool on the components' PATH.
func lookPath(tool string) (string, error) {
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := filepath.Join(dir, tool)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed", tool)
}

// pidsNamed lists processes whose executable name is name.
func pidsNamed(name string) []int {
	entries, _ := os.ReadDir("/proc") // without /proc nothing can be found, which the caller treats as none
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == name {
			out = append(out, pid)
		}
	}
	return out
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}
