//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The image registries of the image-pull scenarios. They listen on the node address (not
// a loopback one: containerd pulls from loopback registries over plain HTTP and skips TLS
// verification), on fixed ports, so scenario manifests name them statically and recorded
// fixtures are the same on every machine.
const (
	// registryHost is a distribution registry (testbed/tools/registry) over TLS with a
	// certificate from the test bed's CA, which containerd trusts for this host, and basic
	// auth. It holds no images: with valid credentials every pull is a real "not found".
	registryHost = nodeIP + ":5000"
	// registryUntrustedHost serves TLS with a certificate from a CA containerd does not
	// trust, in front of the same registry: pulls fail the TLS handshake.
	registryUntrustedHost = nodeIP + ":5001"
	// registryRateLimitedHost answers every manifest request 429 TOOMANYREQUESTS, as a
	// registry enforcing a pull rate limit does; containerd trusts its certificate.
	registryRateLimitedHost = nodeIP + ":5002"

	// The registry's only account. Scenarios put these credentials in their pull secrets.
	registryUser     = "podflow"
	registryPassword = "podflow-registry-pw"
	// registryPasswordHash is bcrypt(registryPassword), the htpasswd form the registry reads.
	registryPasswordHash = "$2a$10$q5.Ez1SlPi3dSklQdsCGKOlIT4QpgORCQo1w1AWPlDb8CuvXvOoa6"

	// foreignArchImage holds a binary built for another CPU architecture than the node's,
	// labelled with the node's, so containerd imports and runs it (e2e.sh builds it).
	foreignArchImage = "podflow.test/foreign-arch:1"
	foreignArchTar   = "foreign-arch.tar"
)

// registryConfig is the distribution registry's configuration.
const registryConfig = `version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: {{storage}}
  delete:
    enabled: true
http:
  addr: {{addr}}
  secret: podflow-testbed-registry
  tls:
    certificate: {{cert}}
    key: {{key}}
auth:
  htpasswd:
    realm: podflow-testbed-registry
    path: {{htpasswd}}
`

// registryConfigDir is containerd's registry config_path: one directory per host.
func (b *bed) registryConfigDir() string { return b.path("containerd", "certs.d") }

// startRegistry starts the registry and its two fronts, tells containerd which of them
// to trust, and imports the foreign-architecture image. It runs after containerd is up:
// containerd reads the hosts directory at each pull.
func (b *bed) startRegistry(ctx context.Context) error {
	ip := net.ParseIP(nodeIP)
	cert, key, err := b.pki.issue("registry", nodeIP, nil, true, nil, []net.IP{ip})
	if err != nil {
		return err
	}
	dir := b.path("registry")
	if err := os.MkdirAll(filepath.Join(dir, "storage"), 0o755); err != nil {
		return fmt.Errorf("create registry directory: %w", err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(registryUser+":"+registryPasswordHash+"\n"), 0o600); err != nil {
		return fmt.Errorf("write htpasswd: %w", err)
	}
	cfg := fill(registryConfig, "{{storage}}", filepath.Join(dir, "storage"), "{{addr}}", registryHost,
		"{{cert}}", cert, "{{key}}", key, "{{htpasswd}}", htpasswd)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write registry config: %w", err)
	}
	// Docker's certs.d layout, which containerd reads when a host has no hosts.toml: the
	// CA applies to the host itself. (A hosts.toml [host] section with a ca would be tried
	// first, then the host again without the CA, which turns a 404 into an x509 error.)
	for _, host := range []string{registryHost, registryRateLimitedHost} {
		if err := copyFile(b.pki.CAFile, filepath.Join(b.registryConfigDir(), host, "ca.crt"), 0o644); err != nil {
			return err
		}
	}
	// The registry exports traces to an OTLP collector by default; there is none.
	p, err := b.startProc("registry", b.path("logs", "registry.log"), b.componentEnv("OTEL_TRACES_EXPORTER=none"),
		b.bin("registry"), "serve", filepath.Join(dir, "config.yml"))
	if err != nil {
		return err
	}
	hc, err := b.caClient()
	if err != nil {
		return err
	}
	if err := waitFor(ctx, "the image registry", time.Minute, []*proc{p}, func(ctx context.Context) (bool, error) {
		return registryChallenges(ctx, hc, "https://"+registryHost+"/v2/")
	}); err != nil {
		return err
	}
	if err := b.startRegistryFronts(cert, key); err != nil {
		return err
	}
	return b.importForeignArchImage(ctx)
}

// registryChallenges reports whether url answers as a registry with basic auth does
// without credentials: 401 with a Basic challenge.
func registryChallenges(ctx context.Context, hc *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		return false, fmt.Errorf("GET %s: %s, WWW-Authenticate %q", url, resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	return true, nil
}

// startRegistryFronts serves the untrusted and the rate-limited registry from the test
// process; they end with it.
func (b *bed) startRegistryFronts(cert, key string) error {
	untrusted, err := newPKI(b.path("pki", "untrusted"))
	if err != nil {
		return fmt.Errorf("untrusted CA: %w", err)
	}
	badCert, badKey, err := untrusted.issue("registry", nodeIP, nil, true, nil, []net.IP{net.ParseIP(nodeIP)})
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(b.pki.CAFile)
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "https", Host: registryHost})
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	for _, s := range []struct {
		addr, cert, key string
		h               http.Handler
	}{
		{registryUntrustedHost, badCert, badKey, proxy},
		{registryRateLimitedHost, cert, key, http.HandlerFunc(rateLimited)},
	} {
		pair, err := tls.LoadX509KeyPair(s.cert, s.key)
		if err != nil {
			return fmt.Errorf("load certificate for %s: %w", s.addr, err)
		}
		l, err := tls.Listen("tcp", s.addr, &tls.Config{Certificates: []tls.Certificate{pair}})
		if err != nil {
			return fmt.Errorf("listen on %s: %w", s.addr, err)
		}
		// Failed handshakes (the untrusted front's purpose) are not worth a log line.
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		go func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				b.logf("registry front %s: %v", l.Addr(), err)
			}
		}()
	}
	return nil
}

var reManifestPath = regexp.MustCompile(`^/v2/.+/manifests/[^/]+$`)

// rateLimited answers as a registry over its pull rate limit: the distribution API's
// TOOMANYREQUESTS error for manifests, with the headers Docker Hub sends.
func rateLimited(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Docker-Distribution-Api-Version", "registry/2.0")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v2/":
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "{}")
	case reManifestPath.MatchString(r.URL.Path):
		w.Header().Set("RateLimit-Limit", "100;w=21600")
		w.Header().Set("RateLimit-Remaining", "0;w=21600")
		w.Header().Set("Retry-After", "21600")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit. You may increase the limit by authenticating and upgrading.","detail":null}]}`+"\n")
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry","detail":null}]}`+"\n")
	}
}

// importForeignArchImage imports the image whose binary is for another architecture.
func (b *bed) importForeignArchImage(ctx context.Context) error {
	tar := filepath.Join(b.imagesDir, foreignArchTar)
	out, err := run(ctx, b.componentEnv(), "ctr", "--address", b.containerdSock, "--namespace", "k8s.io",
		"images", "import", "--snapshotter", b.snapshotter, tar)
	if err != nil {
		return fmt.Errorf("import %s: %w (%s)", tar, err, out)
	}
	return nil
}
