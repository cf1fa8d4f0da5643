//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Fixed identities of the test bed. They end up in recorded bundles, so they are chosen
// to be stable across machines and runs rather than taken from the host.
const (
	nodeName      = "podflow-node"
	nodeIP        = "10.213.255.1" // added to lo: the kubelet refuses a loopback node IP
	podSubnet     = "10.213.0.0/24"
	serviceSubnet = "10.96.0.0/16"
	clusterDNS    = "10.96.0.10"
	bridgeName    = "podflow0"
	clusterName   = "podflow-testbed"
	busyboxImage  = "podflow.test/busybox:1"
	pauseImage    = "podflow.test/pause:1"
	// defaultRunDir is where all state lives. It is deliberately not under the checkout:
	// paths of the kubelet and containerd appear in journals and recorded fixtures.
	defaultRunDir = "/var/lib/podflow-testbed"
)

// bed is a running control plane and node.
type bed struct {
	repo      string // module root
	dir       string // run directory, owned by the test
	binDir    string // etcd, kube-*, kubelet, crictl, runcwrap
	imagesDir string // image tars built by e2e.sh
	podflow   string // the podflow binary under test
	startedAt time.Time

	ports struct{ etcdClient, etcdPeer, apiserver, kubelet, kubeletHealthz int }
	pki   *pki

	adminKubeconfig string
	containerdSock  string
	snapshotter     string
	// journal is "own" when the test bed started journald, "host" when one was running,
	// "" when kubelet and containerd log to files instead.
	journal string
	// unitCgroups are the systemd-style unit cgroups made so journald tags entries with a unit.
	unitCgroups []string

	etcd, apiserver, controllerManager, scheduler, journald, containerd, kubelet *proc
	procs                                                                        []*proc

	restConfig *rest.Config
	client     kubernetes.Interface
	dyn        dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper

	lock     *os.File
	stopOnce sync.Once
	timings  []timing
}

type timing struct {
	what string
	took time.Duration
}

func (b *bed) timed(what string, f func() error) error {
	t0 := time.Now()
	err := f()
	b.timings = append(b.timings, timing{what, time.Since(t0)})
	return err
}

func newBed() (*bed, error) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return nil, fmt.Errorf("locate the module root: %w", err)
	}
	env := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return def
	}
	// The same machine-level cache e2e.sh and build-tools.sh use.
	cache := os.Getenv("PODFLOW_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("locate the cache folder (set PODFLOW_CACHE): %w", err)
		}
		cache = filepath.Join(base, "podflow")
	}
	b := &bed{
		repo:      repo,
		dir:       env("PODFLOW_TESTBED_DIR", defaultRunDir),
		binDir:    env("PODFLOW_TESTBED_BIN", filepath.Join(cache, "testbed/bin")),
		imagesDir: env("PODFLOW_TESTBED_IMAGES", filepath.Join(cache, "testbed/images")),
		podflow:   env("PODFLOW_BIN", filepath.Join(repo, "bin/podflow")),
	}
	for _, p := range []*string{&b.dir, &b.binDir, &b.imagesDir, &b.podflow} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *bed) bin(name string) string { return filepath.Join(b.binDir, name) }

func (b *bed) path(parts ...string) string {
	return filepath.Join(append([]string{b.dir}, parts...)...)
}

// acquire takes the machine-wide test bed lock: one test bed per machine, since it owns
// fixed addresses, a bridge and the kubelet's cgroups.
func (b *bed) acquire() error {
	if err := os.MkdirAll(filepath.Dir(b.dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(b.dir), err)
	}
	f, err := os.OpenFile(b.dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open test bed lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("another test bed is running on this machine (lock %s.lock is held)", b.dir)
	}
	b.lock = f
	return nil
}

// checkForeignNode refuses machines where the test bed would fight a real node.
func (b *bed) checkForeignNode() error {
	if os.Geteuid() != 0 {
		return errNotRoot
	}
	if pid := foreignKubelet(b.dir); pid != 0 {
		return fmt.Errorf("a kubelet that is not the test bed's runs on this machine (pid %d): the test bed needs a machine that is not a Kubernetes node", pid)
	}
	return nil
}

// checkPrerequisites lists every missing binary, image and tool at once.
func (b *bed) checkPrerequisites() error {
	var missing []string
	for _, bin := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "crictl", "kubectl", "runcwrap", "registry"} {
		if _, err := os.Stat(b.bin(bin)); err != nil {
			missing = append(missing, b.bin(bin))
		}
	}
	for _, img := range []string{"busybox.tar", "pause.tar", foreignArchTar} {
		if _, err := os.Stat(filepath.Join(b.imagesDir, img)); err != nil {
			missing = append(missing, filepath.Join(b.imagesDir, img))
		}
	}
	for _, tool := range []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "ip", "iptables", "mount"} {
		if _, err := lookPath(tool); err != nil {
			missing = append(missing, tool+" (on PATH)")
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		missing = append(missing, "/usr/lib/cni/bridge (containernetworking-plugins)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the test bed needs (run testbed/e2e.sh, which installs and builds them):\n  %s", strings.Join(missing, "\n  "))
	}
	return nil
}

// prepare clears what a previous run left and creates the run directory tree.
func (b *bed) prepare() error {
	reap(b.dir, b.logf)
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("clear %s: %w", b.dir, err)
	}
	for _, d := range []string{"pids", "logs", "pki", "etcd", "kubelet", "pod-logs", "containerd", "cni/net.d", "cni/ipam", "bundles"} {
		if err := os.MkdirAll(b.path(d), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", b.path(d), err)
		}
	}
	return nil
}

func (b *bed) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testbed: "+format+"\n", args...)
}

// start brings the whole test bed up, in dependency order, each step waiting for the
// previous one to be ready.
func (b *bed) start(ctx context.Context) error {
	b.startedAt = time.Now()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"check host", func(context.Context) error { return b.checkForeignNode() }},
		{"lock", func(context.Context) error { return b.acquire() }},
		{"prepare run directory", func(context.Context) error { return b.prepare() }},
		{"check prerequisites", func(context.Context) error { return b.checkPrerequisites() }},
		{"certificates and tokens", func(context.Context) error { return b.credentials() }},
		{"etcd", b.startEtcd},
		{"kube-apiserver", b.startAPIServer},
		{"controller-manager and scheduler", b.startControllers},
		{"journald", b.startJournald},
		{"node network", b.setupNodeNetwork},
		{"containerd and images", b.startContainerd},
		{"image registry", b.startRegistry},
		{"kubelet", b.startKubelet},
		{"cluster ready", b.waitClusterReady},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.timed(s.name, func() error { return s.run(ctx) }); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		b.logf("%s: ready after %s", s.name, time.Since(b.startedAt).Round(100*time.Millisecond))
	}
	return nil
}

// stop ends every component in reverse dependency order and removes what they left on
// the host (mounts, addresses, the bridge). Safe to call more than once, concurrently.
func (b *bed) stop() {
	b.stopOnce.Do(func() {
		if b.kubelet != nil {
			b.kubelet.stop(10 * time.Second)
		}
		if b.containerd != nil {
			if ok, _ := b.containerd.exited(); !ok {
				// Stop every pod through the runtime so CNI releases addresses and
				// containerd unmounts root filesystems.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if _, err := run(ctx, nil, b.bin("crictl"), "--runtime-endpoint", "unix://"+b.containerdSock, "--timeout", "50s", "rmp", "--all", "--force"); err != nil {
					b.logf("removing pods through the runtime: %v", err)
				}
				cancel()
			}
			b.containerd.stop(10 * time.Second)
		}
		for _, p := range []*proc{b.scheduler, b.controllerManager, b.apiserver, b.etcd} {
			if p != nil {
				p.stop(10 * time.Second)
			}
		}
		if b.journald != nil {
			b.journald.stop(5 * time.Second)
		}
		for _, p := range b.procs {
			p.stop(time.Second)
		}
		reap(b.dir, b.logf)
		for i := len(b.unitCgroups) - 1; i >= 0; i-- {
			_ = os.Remove(b.unitCgroups[i]) // empty once its processes are gone; a leftover is harmless
		}
		if b.lock != nil {
			b.lock.Close()
		}
	})
}

// freePort asks the kernel for an unused port on ip.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (b *bed) clients() error {
	cfg, err := restConfigFromKubeconfig(b.adminKubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	// Scenarios trip admission warnings on purpose (a privileged Pod under Pod Security).
	cfg.WarningHandler = rest.NoWarnings{}
	b.restConfig = cfg
	if b.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if b.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	b.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(b.client.Discovery()))
	return nil
}
