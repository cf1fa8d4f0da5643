package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// cluster is the running etcd, kube-apiserver and kwok of the scale phase.
type cluster struct {
	dir, bin         string
	server           string
	adminKubeconfig  string
	collectorConfig  string
	client           kubernetes.Interface
	etcd, apiserver  *exec.Cmd
	kwok             *exec.Cmd
	procs            []*exec.Cmd
	collectorNS      string
	nodeNames        []string
	namespaces       []string
	kwokPort         int
	containerLogFile string
}

func (c *cluster) path(parts ...string) string {
	return filepath.Join(append([]string{c.dir}, parts...)...)
}

func startCluster(ctx context.Context, o options) (*cluster, error) {
	if err := os.RemoveAll(o.dir); err != nil {
		return nil, fmt.Errorf("clear %s: %w", o.dir, err)
	}
	for _, d := range []string{"logs", "etcd", "pki", "out"} {
		if err := os.MkdirAll(filepath.Join(o.dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	c := &cluster{dir: o.dir, bin: o.bin, collectorNS: "podflow"}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"credentials", func(context.Context) error { return c.credentials() }},
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
		{"kwok", func(ctx context.Context) error { return c.startKwok(ctx, o) }},
		{"collector RBAC", func(ctx context.Context) error { return c.collectorRBAC(ctx, o) }},
		{"nodes and namespaces", func(ctx context.Context) error { return c.nodesAndNamespaces(ctx, o) }},
	}
	t0 := time.Now()
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			return c, fmt.Errorf("%s: %w", s.name, err)
		}
		logf("%s: ready after %s", s.name, time.Since(t0).Round(100*time.Millisecond))
	}
	return c, nil
}

// start runs one component in its own process group, its output in logs/<name>.log.
func (c *cluster) start(name string, argv ...string) (*exec.Cmd, error) {
	f, err := os.Create(c.path("logs", name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + c.dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	f.Close()
	c.procs = append(c.procs, cmd)
	return cmd, nil
}

// stop ends every component, the last started first.
func (c *cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// credentials writes the service-account signing key, the static token of the admin and
// its kubeconfig. The API server serves a certificate it generates itself; clients
// skip verifying it, as nothing else listens on this loopback port.
func (c *cluster) credentials() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.path("pki", "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	token := hex.EncodeToString(tok)
	if err := os.WriteFile(c.path("pki", "tokens.csv"), []byte(token+",podflow-admin,podflow-admin,\"system:masters\"\n"), 0o600); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.server = "https://127.0.0.1:" + strconv.Itoa(port)
	c.adminKubeconfig = c.path("pki", "admin.kubeconfig")
	return writeKubeconfig(c.adminKubeconfig, c.server, "podflow-admin", token)
}

func writeKubeconfig(path, server, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["podflow-scale"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["podflow-scale"] = &clientcmdapi.Context{Cluster: "podflow-scale", AuthInfo: user}
	cfg.CurrentContext = "podflow-scale"
	return clientcmd.WriteToFile(*cfg, path)
}

func (c *cluster) startEtcd(ctx context.Context) error {
	cp, err := freePort()
	if err != nil {
		return err
	}
	pp, err := freePort()
	if err != nil {
		return err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(cp)
	peer := "http://127.0.0.1:" + strconv.Itoa(pp)
	c.etcd, err = c.start("etcd", filepath.Join(c.bin, "etcd"), "--name", "scale", "--data-dir", c.path("etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "scale="+peer, "--initial-cluster-state", "new",
		"--quota-backend-bytes", strconv.Itoa(8<<30), "--unsafe-no-fsync", "--log-level", "warn")
	if err != nil {
		return err
	}
	return waitFor(ctx, "etcd /health", time.Minute, c.etcd, func(ctx context.Context) error {
		return httpGet(ctx, http.DefaultClient, client+"/health", "")
	})
}

func (c *cluster) startAPIServer(ctx context.Context) error {
	port := strings.TrimPrefix(c.server, "https://127.0.0.1:")
	etcdURL := ""
	for i, a := range c.etcd.Args {
		if a == "--listen-client-urls" {
			etcdURL = c.etcd.Args[i+1]
		}
	}
	var err error
	c.apiserver, err = c.start("kube-apiserver", filepath.Join(c.bin, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		// Nothing reaches the API server through the kubernetes Service here; the
		// address is a documentation one (the reconciler refuses loopback).
		"--advertise-address", "192.0.2.1",
		"--endpoint-reconciler-type", "none",
		"--secure-port", port,
		"--cert-dir", c.path("pki", "apiserver"),
		"--token-auth-file", c.path("pki", "tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-key-file", c.path("pki", "sa.key"),
		"--service-account-signing-key-file", c.path("pki", "sa.key"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--kubelet-preferred-address-types", "InternalIP",
		"--profiling=false",
		"--v=1")
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed by the API server just started
	tok, err := os.ReadFile(c.path("pki", "tokens.csv"))
	if err != nil {
		return err
	}
	token, _, _ := strings.Cut(string(tok), ",")
	if err := waitFor(ctx, "kube-apiserver /readyz", 2*time.Minute, c.apiserver, func(ctx context.Context) error {
		return httpGet(ctx, hc, c.server+"/readyz", token)
	}); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.adminKubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0 // filling the cluster: no client-side limit
	cfg.WarningHandler = rest.NoWarnings{}
	c.client, err = kubernetes.NewForConfig(cfg)
	return err
}

// startKwok runs kwok with the stages of the pinned module (nodes become Ready and
// renew their Lease; pods become Running) and a ClusterLogs rule that serves one
// CRI-format log for every container, through its kubelet API on loopback.
func (c *cluster) startKwok(ctx context.Context, o options) error {
	var err error
	if c.kwokPort, err = freePort(); err != nil {
		return err
	}
	c.containerLogFile = c.path("container.log")
	var log strings.Builder
	at := time.Now().UTC().Add(-time.Hour)
	for i := range 200 {
		fmt.Fprintf(&log, "%s stdout F GET /api/orders/%d 200 %dms user-agent=shop-client/2.1\n",
			at.Add(time.Duration(i)*17*time.Second).Format(time.RFC3339Nano), 1000+i*7, 3+i%40)
	}
	if err := os.WriteFile(c.containerLogFile, []byte(log.String()), 0o644); err != nil {
		return err
	}
	var cfg strings.Builder
	for _, f := range []string{"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"} {
		data, err := os.ReadFile(filepath.Join(o.kwokStages, f))
		if err != nil {
			return fmt.Errorf("kwok stage: %w", err)
		}
		cfg.WriteString("---\n")
		cfg.Write(data)
	}
	fmt.Fprintf(&cfg, `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: every-container
spec:
  logs:
  - logsFile: %s
    follow: false
`, c.containerLogFile)
	if err := os.WriteFile(c.path("kwok.yaml"), []byte(cfg.String()), 0o644); err != nil {
		return err
	}
	c.kwok, err = c.start("kwok", filepath.Join(c.bin, "kwok"),
		"--config", c.path("kwok.yaml"),
		"--kubeconfig", c.adminKubeconfig,
		"--manage-all-nodes",
		"--node-ip", "127.0.0.1",
		"--node-port", strconv.Itoa(c.kwokPort),
		"--server-address", "127.0.0.1:"+strconv.Itoa(c.kwokPort),
		"--cidr", "10.128.0.0/12")
	if err != nil {
		return err
	}
	return waitFor(ctx, "kwok /healthz", time.Minute, c.kwok, func(ctx context.Context) error {
		hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // kwok's own test certificate
		return httpGet(ctx, hc, "https://127.0.0.1:"+strconv.Itoa(c.kwokPort)+"/healthz", "")
	})
}

// collectorRBAC applies what `podflow collect rbac` prints, with the pinned kubectl, and
// writes a kubeconfig holding a token of that ServiceAccount.
func (c *cluster) collectorRBAC(ctx context.Context, o options) error {
	rbac, err := exec.CommandContext(ctx, o.podflow, "collect", "rbac", "-n", c.collectorNS).Output()
	if err != nil {
		return fmt.Errorf("podflow collect rbac: %w", err)
	}
	ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n", c.collectorNS)
	apply := exec.CommandContext(ctx, filepath.Join(c.bin, "kubectl"), "--kubeconfig", c.adminKubeconfig, "apply", "-f", "-")
	apply.Stdin = strings.NewReader(ns + string(rbac))
	if out, err := apply.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, out)
	}
	sa := ""
	for _, line := range strings.Split(string(rbac), "\n") {
		if strings.HasPrefix(line, "kind: ServiceAccount") {
			sa = "pending"
		}
		if sa == "pending" && strings.HasPrefix(line, "  name: ") {
			sa = strings.TrimSpace(strings.TrimPrefix(line, "  name: "))
		}
	}
	if sa == "" || sa == "pending" {
		return errors.New("podflow collect rbac printed no ServiceAccount")
	}
	exp := int64(4 * 3600)
	tr, err := c.client.CoreV1().ServiceAccounts(c.collectorNS).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of %s/%s: %w", c.collectorNS, sa, err)
	}
	c.collectorConfig = c.path("pki", "collector.kubeconfig")
	return writeKubeconfig(c.collectorConfig, c.server, "system:serviceaccount:"+c.collectorNS+":"+sa, tr.Status.Token)
}

// waitFor polls check until it succeeds, the deadline passes or the process exits.
func waitFor(ctx context.Context, what string, limit time.Duration, p *exec.Cmd, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	exited := make(chan struct{})
	if p != nil {
		go func() {
			var st syscall.WaitStatus
			for ctx.Err() == nil {
				if pid, _ := syscall.Wait4(p.Process.Pid, &st, syscall.WNOHANG, nil); pid == p.Process.Pid {
					close(exited)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("waiting for %s: the process exited (see its log): %w", what, last)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %w)", what, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func httpGet(ctx context.Context, hc *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
