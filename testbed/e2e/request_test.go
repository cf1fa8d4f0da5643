//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// requestNamespace is where the request scenarios ask the API server for things.
const requestNamespace = "request-shop"

// requestScenarios is the name PODFLOW_SCENARIOS gives TestRequestScenarios.
const requestScenarios = "request"

// requestScenario is a client's request the real API server refuses, or a client that
// cannot make one: the pinned kubectl's output is what a user pastes, and podflow must
// place its root at the request stage with the identity or field named.
type requestScenario struct {
	name string
	// run makes the request and returns the text the user would paste.
	run  func(t *testing.T, ctx context.Context) string
	rule string
	// mentions are strings the root cause must contain.
	mentions []string
	// printed is a string the pasted output must contain: the test checks it really
	// reproduced the failure before judging podflow.
	printed string
}

// TestRequestScenarios reproduces the request stage's failures against the test bed's
// API server: RBAC refusals, expired and untrusted certificates, a deleted service
// account's token, invalid objects, a missing CRD, and the audit log's record of a
// denied request. Each is analysed as a paste.
func TestRequestScenarios(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if sel := os.Getenv("PODFLOW_SCENARIOS"); sel != "" && !containsString(strings.Split(sel, ","), requestScenarios) {
		t.Skip("PODFLOW_SCENARIOS does not name request")
	}
	cli := &podflowCLI{bin: tb.podflow}
	server := fmt.Sprintf("https://127.0.0.1:%d", tb.ports.apiserver)
	dir := t.TempDir()
	if _, err := tb.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: requestNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deployer := "system:serviceaccount:" + requestNamespace + ":deployer"
	admin := []string{"--kubeconfig", tb.adminKubeconfig, "-n", requestNamespace}

	scenarios := []requestScenario{{
		name: "forbidden-create-pods",
		run: func(t *testing.T, ctx context.Context) string {
			kc := serviceAccountKubeconfig(t, ctx, dir, server, "deployer", false)
			return kubectlOut(ctx, nil, "--kubeconfig", kc, "-n", requestNamespace, "run", "web", "--image=podflow.test/busybox:1")
		},
		rule: "request-forbidden", mentions: []string{deployer, "create", "pods", requestNamespace},
		printed: "Error from server (Forbidden)",
	}, {
		name: "audit-denied-request",
		run: func(t *testing.T, ctx context.Context) string {
			return auditLines(t, ctx, deployer, `"code":403`)
		},
		rule: "request-forbidden", mentions: []string{deployer, "create", "pods", requestNamespace},
		printed: `"audit.k8s.io/v1"`,
	}, {
		name: "client-certificate-expired",
		run: func(t *testing.T, ctx context.Context) string {
			cert, key, err := tb.pki.issueValid("request-expired-client", "jane", nil, false, nil, nil,
				time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			kc := filepath.Join(dir, "expired.kubeconfig")
			if err := writeCertKubeconfig(kc, server, tb.pki.CAFile, "jane", cert, key); err != nil {
				t.Fatal(err)
			}
			return kubectlOut(ctx, nil, "--kubeconfig", kc, "-n", requestNamespace, "get", "pods")
		},
		rule: "request-unauthorized", mentions: []string{"401"},
		printed: "You must be logged in to the server",
	}, {
		name: "apiserver-log-expired-certificate",
		run: func(t *testing.T, ctx context.Context) string {
			// klog flushes every few seconds: wait for the line.
			return waitLines(t, ctx, tb.path("logs", "kube-apiserver.log"), "Unable to authenticate the request", "certificate has expired")
		},
		rule: "request-authentication-failed", mentions: []string{"certificate has expired"},
		printed: "Unable to authenticate the request",
	}, {
		name: "untrusted-server-ca",
		run: func(t *testing.T, ctx context.Context) string {
			other, err := newPKI(filepath.Join(dir, "other-ca"))
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenOf(tb.adminKubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			kc := filepath.Join(dir, "wrong-ca.kubeconfig")
			if err := writeKubeconfig(kc, server, other.CAFile, "podflow-admin", tok); err != nil {
				t.Fatal(err)
			}
			return kubectlOut(ctx, nil, "--kubeconfig", kc, "-n", requestNamespace, "get", "pods")
		},
		rule: "request-unknown-authority", mentions: []string{"unknown authority"},
		printed: "certificate signed by unknown authority",
	}, {
		name: "deleted-service-account-token",
		run: func(t *testing.T, ctx context.Context) string {
			kc := serviceAccountKubeconfig(t, ctx, dir, server, "gone", true)
			return kubectlOut(ctx, nil, "--kubeconfig", kc, "-n", requestNamespace, "get", "pods")
		},
		rule: "request-unauthorized", mentions: []string{"401"},
		printed: "You must be logged in to the server",
	}, {
		name: "missing-required-field",
		run: func(t *testing.T, ctx context.Context) string {
			return kubectlOut(ctx, strings.NewReader(`apiVersion: v1
kind: Pod
metadata:
  name: noimage
spec:
  containers:
  - name: app
`), append(admin, "create", "-f", "-")...)
		},
		rule: "request-invalid", mentions: []string{"spec.containers[0].image", "Required value", "noimage"},
		printed: "is invalid",
	}, {
		name: "deployment-selector-changed",
		run: func(t *testing.T, ctx context.Context) string {
			deploy := func(app string) string {
				return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-web
spec:
  replicas: 0
  selector:
    matchLabels: {app: ` + app + `}
  template:
    metadata:
      labels: {app: ` + app + `}
    spec:
      containers:
      - name: web
        image: podflow.test/busybox:1
`
			}
			if out := kubectlOut(ctx, strings.NewReader(deploy("web")), append(admin, "apply", "-f", "-")...); !strings.Contains(out, "created") {
				t.Fatalf("create the deployment: %s", out)
			}
			return kubectlOut(ctx, strings.NewReader(deploy("web-v2")), append(admin, "apply", "-f", "-")...)
		},
		rule: "request-field-immutable", mentions: []string{"spec.selector", "shop-web"},
		printed: "field is immutable",
	}, {
		name: "unknown-field-strict",
		run: func(t *testing.T, ctx context.Context) string {
			return kubectlOut(ctx, strings.NewReader(`apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  restartPolicyy: Never
  containers:
  - name: app
    image: podflow.test/busybox:1
`), append(admin, "create", "--validate=strict", "-f", "-")...)
		},
		rule: "request-unknown-field", mentions: []string{"spec.restartPolicyy"},
		printed: "strict decoding error",
	}, {
		name: "crd-not-installed",
		run: func(t *testing.T, ctx context.Context) string {
			return kubectlOut(ctx, strings.NewReader(`apiVersion: shop.podflow.test/v1
kind: Storefront
metadata:
  name: main
`), append(admin, "apply", "-f", "-")...)
		},
		rule: "request-kind-not-found", mentions: []string{"Storefront", "shop.podflow.test/v1"},
		printed: "no matches for kind",
	}}
	// In order: the audit scenario reads the refusal the first one caused, the API
	// server's log the expired certificate's.
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			paste := s.run(t, ctx)
			if !strings.Contains(paste, s.printed) {
				t.Fatalf("did not reproduce: the output lacks %q:\n%s", s.printed, paste)
			}
			path := filepath.Join(dir, s.name+".txt")
			if err := os.WriteFile(path, []byte(paste), 0o600); err != nil {
				t.Fatal(err)
			}
			checkRequestRoot(t, ctx, cli, path, s, paste)
		})
	}
}

// checkRequestRoot analyses a paste and checks its root finding.
func checkRequestRoot(t *testing.T, ctx context.Context, cli *podflowCLI, path string, s requestScenario, paste string) {
	t.Helper()
	res, err := cli.run(ctx, "analyze", path, "--format", "loose", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 3 {
		t.Fatalf("analyze %s: want exit 3 (a finding at error), got %s", s.name, res)
	}
	var a analysis
	if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
		t.Fatalf("analyze -o json printed invalid JSON: %v", err)
	}
	var root *analysisFinding
	for i := range a.Findings {
		if a.Findings[i].Root {
			root = &a.Findings[i]
			break
		}
	}
	if root == nil {
		t.Fatalf("no root finding for the paste:\n%s", paste)
	}
	if root.Stage != "request" || root.Rule != s.rule {
		t.Fatalf("root = %s, want request %s; paste:\n%s", root, s.rule, paste)
	}
	for _, m := range s.mentions {
		if !strings.Contains(root.Cause, m) {
			t.Errorf("root cause %q does not name %q", root.Cause, m)
		}
	}
	t.Logf("%s: %s", s.name, root.Cause)
}

// kubectlOut runs the pinned kubectl and returns what it printed, stdout and stderr, as
// a terminal shows them. A refusal is a non-zero exit, which is the point here.
func kubectlOut(ctx context.Context, stdin *strings.Reader, args ...string) string {
	cmd := exec.CommandContext(ctx, tb.bin("kubectl"), args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// serviceAccountKubeconfig makes a service account in the request namespace, with no
// role bound, and a kubeconfig holding a token of it; deleted removes the account
// afterwards, so the token names an identity that no longer exists.
func serviceAccountKubeconfig(t *testing.T, ctx context.Context, dir, server, name string, deleted bool) string {
	t.Helper()
	sas := tb.client.CoreV1().ServiceAccounts(requestNamespace)
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := sas.CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deleted {
		if err := sas.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kc := filepath.Join(dir, name+".kubeconfig")
	if err := writeKubeconfig(kc, server, tb.pki.CAFile, "system:serviceaccount:"+requestNamespace+":"+name, tr.Status.Token); err != nil {
		t.Fatal(err)
	}
	return kc
}

// auditLines waits for the audit log to hold the events of user's requests that
// contain want, and returns them.
func auditLines(t *testing.T, ctx context.Context, user, want string) string {
	t.Helper()
	return waitLines(t, ctx, tb.auditLogPath(), `"username":"`+user+`"`, want)
}

// waitLines waits until the log file holds lines that contain every one of want, and
// returns them.
func waitLines(t *testing.T, ctx context.Context, path string, want ...string) string {
	t.Helper()
	for {
		if got := logLines(t, path, want...); got != "" {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never held a line with %q", path, want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logLines returns the lines of a log file that contain every one of want.
func logLines(t *testing.T, path string, want ...string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		for _, w := range want {
			if !strings.Contains(sc.Text(), w) {
				continue next
			}
		}
		b.WriteString(sc.Text() + "\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
