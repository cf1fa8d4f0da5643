//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The test bed's admission webhook server answers on loopback over HTTPS, with a
// certificate from the test bed CA, as a policy webhook of a real cluster would. What it
// does depends on the URL path:
//
//	/deny  refuses every pod that lacks the label podflow.test/approved=true, with a
//	       message saying so (a policy webhook denying the request);
//	/hang  never answers, so the API server's timeoutSeconds fires (a webhook that is
//	       down or overloaded).
//
// Scenarios register it with a ValidatingWebhookConfiguration whose clientConfig uses
// the placeholders below; apply substitutes them.
const (
	// placeholderWebhookURL stands for the server's base URL, https://127.0.0.1:PORT.
	placeholderWebhookURL = "${PODFLOW_WEBHOOK_URL}"
	// placeholderCABundle stands for the test bed CA, base64-encoded PEM (caBundle).
	placeholderCABundle = "${PODFLOW_CA_BUNDLE}"
	// placeholderClosedURL stands for https://127.0.0.1:PORT where nothing listens, so
	// the API server's connection is refused (a webhook whose server is gone).
	placeholderClosedURL = "${PODFLOW_WEBHOOK_CLOSED_URL}"
	// placeholderHostDir stands for a directory of the node under the run directory that
	// scenarios' hostPath volumes may use (each under its own scenario's name), so a
	// volume whose directory the kubelet creates lives and goes with the run.
	placeholderHostDir = "${PODFLOW_HOST_DIR}"
	// webhookApprovedLabel exempts a pod from /deny.
	webhookApprovedLabel = "podflow.test/approved"
)

var rePlaceholder = regexp.MustCompile(`\$\{PODFLOW_[A-Z_]+\}`)

// webhookServer is the running server, started on first use.
var webhookServer struct {
	once sync.Once
	url  string
	err  error
}

// webhookURL starts the server once and returns its base URL.
func (b *bed) webhookURL() (string, error) {
	webhookServer.once.Do(func() {
		webhookServer.url, webhookServer.err = b.startWebhook()
	})
	return webhookServer.url, webhookServer.err
}

func (b *bed) startWebhook() (string, error) {
	certFile, keyFile, err := b.pki.issue("webhook", "podflow-testbed-webhook", nil, true,
		[]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for the admission webhook: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/deny", serveDeny)
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		// The API server gives up after the webhook's timeoutSeconds and closes the
		// connection, which ends the request's context.
		<-r.Context().Done()
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ServeTLS(l, certFile, keyFile); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.logf("admission webhook server: %v", err)
		}
	}()
	url := "https://" + l.Addr().String()
	b.logf("admission webhook server on %s", url)
	return url, nil
}

// serveDeny answers an AdmissionReview: a pod without the approval label is refused.
func serveDeny(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
		return
	}
	var pod corev1.Pod
	if err := json.Unmarshal(review.Request.Object.Raw, &pod); err != nil {
		http.Error(w, "want a Pod", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: pod.Labels[webhookApprovedLabel] == "true"}
	if !resp.Allowed {
		resp.Result = &metav1.Status{
			Code:    http.StatusForbidden,
			Reason:  metav1.StatusReasonForbidden,
			Message: fmt.Sprintf("pod has no label %s=true: only approved workloads may run in namespace %s", webhookApprovedLabel, review.Request.Namespace),
		}
	}
	review.Response = resp
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review) // a broken connection is the API server's to report
}

// fillPlaceholders replaces the test bed placeholders in every string of obj. An
// unknown ${PODFLOW_...} placeholder is an error, so a typo cannot reach the cluster.
func (b *bed) fillPlaceholders(obj *unstructured.Unstructured) error {
	var errs []error
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			return rePlaceholder.ReplaceAllStringFunc(x, func(p string) string {
				val, err := b.placeholder(p)
				if err != nil {
					errs = append(errs, err)
				}
				return val
			})
		}
		return v
	}
	walk(obj.Object)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func (b *bed) placeholder(p string) (string, error) {
	switch p {
	case placeholderWebhookURL:
		return b.webhookURL()
	case placeholderCABundle:
		ca, err := os.ReadFile(b.pki.CAFile)
		if err != nil {
			return "", fmt.Errorf("read CA: %w", err)
		}
		return base64.StdEncoding.EncodeToString(ca), nil
	case placeholderClosedURL:
		// A port the kernel just handed out and took back: nothing listens on it.
		port, err := freePort("127.0.0.1")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("https://127.0.0.1:%d", port), nil
	case placeholderHostDir:
		return b.path(hostDir), nil
	}
	return "", fmt.Errorf("unknown placeholder %s (known: %s, %s, %s, %s)", p, placeholderWebhookURL, placeholderCABundle, placeholderClosedURL, placeholderHostDir)
}

// waitWebhookActive waits until the API server calls a just-applied webhook
// configuration: a dry-run pod in the namespace it selects, carrying the labels of its
// objectSelectors, must be refused by one of its webhooks. Without this wait a controller could create a pod before the API
// server has loaded the configuration, and the scenario would record no refusal.
func (b *bed) waitWebhookActive(ctx context.Context, obj *unstructured.Unstructured) error {
	hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
	var names []string
	ns := ""
	labels := map[string]string{}
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		names = append(names, name)
		if sel, _, _ := unstructured.NestedString(m, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name"); sel != "" {
			ns = sel
		}
		objLabels, _, _ := unstructured.NestedStringMap(m, "objectSelector", "matchLabels")
		for k, v := range objLabels {
			labels[k] = v
		}
	}
	if ns == "" {
		return fmt.Errorf("%s %s: no webhook selects one namespace by kubernetes.io/metadata.name", obj.GetKind(), obj.GetName())
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "podflow-webhook-probe", Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "probe", Image: busyboxImage, ImagePullPolicy: corev1.PullIfNotPresent,
		}}},
	}
	return waitFor(ctx, "webhook configuration "+obj.GetName()+" to be active", time.Minute, []*proc{b.apiserver}, func(ctx context.Context) (bool, error) {
		_, err := b.client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, errors.New("a dry-run pod was admitted")
		}
		for _, n := range names {
			if strings.Contains(err.Error(), fmt.Sprintf("webhook %q", n)) {
				return true, nil
			}
		}
		return false, err
	})
}
