package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/serve"
	"podflow.dev/podflow/untrusted"
)

// serveOptions are the inputs of `podflow serve`.
type serveOptions struct {
	*globalOptions
	open          openFlags
	format        string
	paths         []string
	port          int
	kubeconfigOut string
	// shell runs a shell with KUBECONFIG set instead of waiting for Ctrl-C; command, when
	// set, is the one command it runs (sh -c).
	shell   bool
	command string
}

// serveReadyKey carries, in the command's context, a function told the address once the
// server accepts connections and its kubeconfig is written: tests wait on it instead of
// watching for the kubeconfig file.
type serveReadyKey struct{}

// withServeReady returns ctx with ready called when a serve command run with it is ready.
func withServeReady(ctx context.Context, ready func(addr string)) context.Context {
	return context.WithValue(ctx, serveReadyKey{}, ready)
}

func newServeCmd(g *globalOptions) *cobra.Command {
	o := &serveOptions{globalOptions: g}
	cmd := &cobra.Command{
		Annotations: map[string]string{stopsOnSignal: "true"},
		Use:         "serve INPUT...",
		Short:       "Serve a bundle as a read-only Kubernetes API, so kubectl get, describe and logs browse it offline",
		Long: `Serve answers the read-only part of the Kubernetes API from a bundle, on 127.0.0.1 only,
so kubectl and other Kubernetes clients browse the evidence as they would the cluster it
came from: get and describe, lists per namespace and across namespaces (-A), label and
field selectors (kubectl describe and get events --field-selector use them), -o wide, yaml
and json, and pod logs, current and previous (-p). Every write (create, apply, edit,
delete, ...) is refused with 405 MethodNotAllowed, and a request without the server's
token with 401 Unauthorized.

Inputs are read as podflow analyze reads them: a podflow bundle or another tool's output
(Troubleshoot, must-gather, sosreport, cluster-info dump, pasted text), detected unless
--format names it; several inputs are served together.

Serve prints a kubeconfig for the server to stdout, or writes it to --kubeconfig-out
(mode 0600): a random bearer token, and the certificate of the server's TLS, made at
start for 127.0.0.1 (kubectl sends a token only over TLS). Both last as long as the
server. The bundle is a snapshot: ages count from now, as kubectl's own do, and the
server says when the bundle was collected. Ctrl-C stops the server.

--shell starts $SHELL (or /bin/sh) with KUBECONFIG set to the server's kubeconfig, so
kubectl and any other client in it browse the bundle; the server stops when the shell
exits, and podflow exits with the shell's status. -c CMD runs one command that way. The
kubeconfig's namespace is the bundle's: the one it was collected for, or the one all its
pods are in.`,
		Example: `  podflow serve shop.tar.gz --kubeconfig-out shop.kubeconfig &
  kubectl --kubeconfig shop.kubeconfig get pods -A
  kubectl --kubeconfig shop.kubeconfig describe pod -n shop web-7d9f8b6c5d-4xk2p
  kubectl --kubeconfig shop.kubeconfig logs -n shop web-7d9f8b6c5d-4xk2p -p
  podflow serve must-gather.local.5318008/ --port 6443 > openshift.kubeconfig
  podflow serve shop.tar.gz --shell                  # a shell where kubectl reads the bundle
  podflow serve shop.tar.gz -c 'kubectl get pods -o wide'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			if o.command != "" {
				o.shell = true
			}
			if o.port < 0 || o.port > 65535 {
				return usageError("--port: want 0 (a free port) to 65535, got %d", o.port)
			}
			return runServe(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.port, "port", 0, "port to listen on, on 127.0.0.1 (default: a free port)")
	f.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "write the kubeconfig to this file instead of stdout")
	f.BoolVar(&o.shell, "shell", false, "start a shell with KUBECONFIG set to the server; the server stops when it exits")
	f.StringVarP(&o.command, "command", "c", "", "run this one command in a shell with KUBECONFIG set, then stop (implies --shell)")
	addFormatFlag(f, &o.format)
	o.open.add(f)
	return cmd
}

func runServe(ctx context.Context, o *serveOptions) error {
	bundles, err := openInputs(ctx, o.globalOptions, &o.open, o.format, o.paths, o.progressFor(o.paths), false)
	if err != nil {
		return err
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	srv, err := serve.New(bundles, serve.Options{Token: token})
	if err != nil {
		return err
	}
	if srv.Objects() == 0 {
		o.log().Warn("the inputs hold no API objects (a node bundle or sosreport alone?): kubectl will find no resources; serve them with a cluster bundle")
	}
	if n := srv.Skipped(); n > 0 {
		o.log().Warnf("%d list item(s) of the bundle are not objects with a name and are not served", n)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w", o.port, err)
	}
	addr := ln.Addr().String()
	srv.SetAddress(addr)
	tlsConfig, caPEM, err := serve.SelfSignedTLS(time.Now())
	if err != nil {
		ln.Close()
		return err
	}
	kubeconfig, err := clientcmd.Write(*kubeconfigFor("https://"+addr, caPEM, token, defaultNamespace(bundles, srv.PodNamespaces())))
	if err != nil {
		ln.Close()
		return err
	}
	if o.shell && o.kubeconfigOut == "" {
		// The shell's stdout is the user's terminal: the kubeconfig goes to a private
		// file that lasts as long as the server.
		dir, err := os.MkdirTemp("", "podflow-serve-")
		if err != nil {
			ln.Close()
			return fmt.Errorf("make a directory for the kubeconfig: %w", err)
		}
		defer os.RemoveAll(dir)
		o.kubeconfigOut = filepath.Join(dir, "kubeconfig")
	}
	if o.kubeconfigOut != "" {
		if err := writePrivate(o.kubeconfigOut, kubeconfig); err != nil {
			ln.Close()
			return err
		}
	} else if _, err := o.streams.Out.Write(kubeconfig); err != nil {
		ln.Close()
		return err
	}
	// The handlers' requests end with the server: a watch held open returns at once.
	base, stop := context.WithCancel(context.Background())
	defer stop()
	hs := serve.NewHTTPServer(base, srv)
	// TLS handshake errors of clients that do not trust the certificate are theirs.
	hs.ErrorLog = log.New(io.Discard, "", 0)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(tls.NewListener(serve.LimitListener(ln), tlsConfig)) }()
	how := "with the kubeconfig printed above"
	if o.kubeconfigOut != "" {
		how = "with --kubeconfig " + untrusted.ShellArg(o.kubeconfigOut)
	}
	o.log().Infof("serving %s%s read-only on https://%s (%d objects); use kubectl %s; stop with Ctrl-C",
		untrusted.Text(inputNames(o.paths)), collectedText(bundles), addr, srv.Objects(), how)
	o.log().Debugf("serving %v", srv.Resources())
	if ready, ok := ctx.Value(serveReadyKey{}).(func(string)); ok && ready != nil {
		ready(addr)
	}
	var shellErr error
	if o.shell {
		shellErr = runShell(ctx, o, done)
	} else {
		select {
		case err := <-done:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
		}
	}
	stop()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stop the server: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	o.log().Info("server stopped")
	return shellErr
}

// runShell runs the user's shell, or -c's command in it, with KUBECONFIG set to the
// server's kubeconfig, and returns once it exits: nil for status 0, else an error
// carrying its status, which podflow exits with.
func runShell(ctx context.Context, o *serveOptions, served <-chan error) error {
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	args := []string{}
	if o.command != "" {
		args = append(args, "-c", o.command)
	}
	kubeconfig, err := filepath.Abs(o.kubeconfigOut)
	if err != nil {
		return err
	}
	cmd := exec.Command(shell, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.streams.In, o.streams.Out, o.streams.ErrOut
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if o.command == "" {
		o.log().Infof("starting %s with KUBECONFIG=%s; exit the shell to stop the server", untrusted.Text(shell), untrusted.Text(kubeconfig))
	}
	// The terminal sends Ctrl-C to the shell and its commands too: it is theirs while
	// the shell runs, and podflow stops the server when the shell exits.
	childOwnsInterrupt.Store(true)
	defer childOwnsInterrupt.Store(false)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", shell, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case err := <-served:
		_ = cmd.Process.Kill()
		<-exited //nolint:errcheck // the shell's own exit status says nothing once the server failed
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		// SIGTERM (Ctrl-C is the shell's): the shell is ended with the server.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited //nolint:errcheck // ended by us: its exit status is the signal's
		return ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if code < 0 {
			code = exitError
		}
		return &silentExit{code: code}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", shell, err)
	}
	return nil
}

func inputNames(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more", paths[0], len(paths)-1)
}

// collectedText says when the first bundle that records it was collected.
func collectedText(bundles []*bundle.Bundle) string {
	for _, b := range bundles {
		if b.Manifest != nil && !b.Manifest.CollectedAt.IsZero() {
			return ", collected " + b.Manifest.CollectedAt.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// defaultNamespace is the namespace kubectl uses without -n: the one the bundle was
// collected for, when it was collected for exactly one; else the one all the served
// pods are in (a paste about one pod); else default.
func defaultNamespace(bundles []*bundle.Bundle, podNamespaces []string) string {
	for _, b := range bundles {
		if b.Manifest != nil && len(b.Manifest.Scope.Namespaces) == 1 && untrusted.IsName(b.Manifest.Scope.Namespaces[0]) {
			return b.Manifest.Scope.Namespaces[0]
		}
	}
	if len(podNamespaces) == 1 && untrusted.IsName(podNamespaces[0]) {
		return podNamespaces[0]
	}
	return "default"
}

const serveContext = "podflow-serve"

func kubeconfigFor(server string, caPEM []byte, token, namespace string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[serveContext] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[serveContext] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[serveContext] = &clientcmdapi.Context{Cluster: serveContext, AuthInfo: serveContext, Namespace: namespace}
	cfg.CurrentContext = serveContext
	return cfg
}

// writePrivate writes a file only its owner can read: it holds the server's token.
func writePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
