//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Identities in the static token file. Each component authenticates as the user the
// bootstrap RBAC policy grants it, as on a kubeadm cluster.
var tokenUsers = []struct {
	name, user, groups string
}{
	{"admin", "podflow-admin", "system:masters"},
	{"controller-manager", "system:kube-controller-manager", ""},
	{"scheduler", "system:kube-scheduler", ""},
	{"kubelet", "system:node:" + nodeName, "system:nodes"},
}

// Files the control plane reads, filled by credentials.
type credentialFiles struct {
	tokenFile, saPub, saKey               string
	apiserverCert, apiserverKey           string
	kubeletClientCert, kubeletClientKey   string
	kubeletServingCert, kubeletServingKey string
	kubeconfigs                           map[string]string
}

var creds credentialFiles

func (b *bed) credentials() error {
	p, err := newPKI(b.path("pki"))
	if err != nil {
		return err
	}
	b.pki = p
	for _, port := range []*int{&b.ports.etcdClient, &b.ports.etcdPeer, &b.ports.apiserver} {
		if *port, err = freePort("127.0.0.1"); err != nil {
			return err
		}
	}
	c := credentialFiles{kubeconfigs: map[string]string{}}
	if c.saPub, c.saKey, err = p.serviceAccountKeys(); err != nil {
		return err
	}
	if c.apiserverCert, c.apiserverKey, err = p.issue("apiserver", "kube-apiserver", nil, true,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(nodeIP), net.ParseIP("10.96.0.1")}); err != nil {
		return err
	}
	if c.kubeletClientCert, c.kubeletClientKey, err = p.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, false, nil, nil); err != nil {
		return err
	}
	if c.kubeletServingCert, c.kubeletServingKey, err = p.issue("kubelet-serving", "system:node:"+nodeName, []string{"system:nodes"}, true,
		[]string{nodeName}, []net.IP{net.ParseIP(nodeIP)}); err != nil {
		return err
	}
	var lines []string
	server := fmt.Sprintf("https://127.0.0.1:%d", b.ports.apiserver)
	for _, u := range tokenUsers {
		tok, err := randomToken()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s,%s,%s", tok, u.user, u.user)
		if u.groups != "" {
			line += fmt.Sprintf(",%q", u.groups)
		}
		lines = append(lines, line)
		kc := b.path("pki", u.name+".kubeconfig")
		if err := writeKubeconfig(kc, server, b.pki.CAFile, u.user, tok); err != nil {
			return err
		}
		c.kubeconfigs[u.name] = kc
	}
	c.tokenFile = b.path("pki", "tokens.csv")
	if err := os.WriteFile(c.tokenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	creds = c
	b.adminKubeconfig = c.kubeconfigs["admin"]
	return nil
}

// writeKubeconfig writes a kubeconfig that authenticates with a bearer token.
func writeKubeconfig(path, server, caFile, user, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = clusterName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// writeCertKubeconfig writes a kubeconfig that authenticates with a client certificate
// (as kubeadm's kubelet.conf does).
func writeCertKubeconfig(path, server, caFile, user, certFile, keyFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = clusterName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

func restConfigFromKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// componentEnv is the environment of every component: no proxies (nothing is reachable
// and a proxy would change the errors scenarios rely on), the system PATH.
func (b *bed) componentEnv(extra ...string) []string {
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + b.dir,
		"LANG=C.UTF-8",
	}
	return append(env, extra...)
}

func (b *bed) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", b.ports.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", b.ports.etcdPeer)
	p, err := b.startProc("etcd", b.path("logs", "etcd.log"), b.componentEnv(),
		b.bin("etcd"), "--name", "podflow", "--data-dir", b.path("etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "podflow="+peer, "--initial-cluster-state", "new",
		"--unsafe-no-fsync", "--log-level", "warn")
	if err != nil {
		return err
	}
	b.etcd = p
	return waitFor(ctx, "etcd /health", time.Minute, []*proc{p}, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, http.DefaultClient, client+"/health", "")
	})
}

// auditPolicy records every request's metadata once it is answered: who asked, what,
// and the response status, which is what the request stage reads of an audit log.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

func (b *bed) auditLogPath() string { return b.path("logs", "audit.log") }

func (b *bed) startAPIServer(ctx context.Context) error {
	policy := b.path("pki", "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return fmt.Errorf("write audit policy: %w", err)
	}
	args := []string{
		b.bin("kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", b.ports.etcdClient),
		"--bind-address", "127.0.0.1",
		"--advertise-address", nodeIP,
		"--secure-port", strconv.Itoa(b.ports.apiserver),
		"--cert-dir", b.path("pki", "apiserver-generated"),
		"--tls-cert-file", creds.apiserverCert,
		"--tls-private-key-file", creds.apiserverKey,
		"--client-ca-file", b.pki.CAFile,
		"--token-auth-file", creds.tokenFile,
		"--authorization-mode", "Node,RBAC",
		"--enable-admission-plugins", "NamespaceLifecycle,LimitRanger,ServiceAccount,ResourceQuota,PodSecurity,NodeRestriction",
		"--service-account-key-file", creds.saPub,
		"--service-account-signing-key-file", creds.saKey,
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range", serviceSubnet,
		"--kubelet-client-certificate", creds.kubeletClientCert,
		"--kubelet-client-key", creds.kubeletClientKey,
		"--kubelet-preferred-address-types", "InternalIP",
		"--allow-privileged=true",
		"--profiling=false",
		"--audit-policy-file", policy,
		"--audit-log-path", b.auditLogPath(),
		"--audit-log-maxsize", "200",
		"--v=1",
	}
	p, err := b.startProc("kube-apiserver", b.path("logs", "kube-apiserver.log"), b.componentEnv(), args...)
	if err != nil {
		return err
	}
	b.apiserver = p
	tok, err := tokenOf(b.adminKubeconfig)
	if err != nil {
		return err
	}
	hc, err := b.caClient()
	if err != nil {
		return err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", b.ports.apiserver)
	if err := waitFor(ctx, "kube-apiserver /readyz", 2*time.Minute, []*proc{b.etcd, p}, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, hc, url, tok)
	}); err != nil {
		return err
	}
	return b.clients()
}

func (b *bed) startControllers(ctx context.Context) error {
	cm, err := b.startControllerManager()
	if err != nil {
		return err
	}
	sched, err := b.startProc("kube-scheduler", b.path("logs", "kube-scheduler.log"), b.componentEnv(),
		b.bin("kube-scheduler"),
		"--kubeconfig", creds.kubeconfigs["scheduler"],
		"--secure-port", "0",
		"--leader-elect=false",
		"--v=1")
	if err != nil {
		return err
	}
	b.scheduler = sched
	// The controller-manager is working once it has created the default ServiceAccount.
	return waitFor(ctx, "the default ServiceAccount", time.Minute, []*proc{b.apiserver, cm, sched}, func(ctx context.Context) (bool, error) {
		return b.namespaceReady(ctx, "default")
	})
}

// startControllerManager starts kube-controller-manager with extra flags on top of the
// test bed's (the node-faults phase shortens the node monitor grace period).
func (b *bed) startControllerManager(extra ...string) (*proc, error) {
	argv := append([]string{b.bin("kube-controller-manager"),
		"--kubeconfig", creds.kubeconfigs["controller-manager"],
		"--secure-port", "0",
		"--leader-elect=false",
		"--use-service-account-credentials",
		"--service-account-private-key-file", creds.saKey,
		"--root-ca-file", b.pki.CAFile,
		"--cluster-name", clusterName,
		"--allocate-node-cidrs=false",
		"--v=1"}, extra...)
	cm, err := b.startProc("kube-controller-manager", b.path("logs", "kube-controller-manager.log"), b.componentEnv(), argv...)
	if err != nil {
		return nil, err
	}
	b.controllerManager = cm
	return cm, nil
}

func (b *bed) caClient() (*http.Client, error) {
	ca, err := os.ReadFile(b.pki.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

func tokenOf(kubeconfig string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", kubeconfig, err)
	}
	for _, a := range cfg.AuthInfos {
		return a.Token, nil
	}
	return "", fmt.Errorf("%s has no user", kubeconfig)
}

// httpOK reports whether GET url answers 200; other answers are the error.
func httpOK(ctx context.Context, hc *http.Client, url, token string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return true, nil
}
