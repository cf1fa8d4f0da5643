package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

func TestParseHumanAge(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"45s": 45 * time.Second, "5m16s": 5*time.Minute + 16*time.Second, "3h": 3 * time.Hour,
		"2d3h": 51 * time.Hour, "1y10d": 375 * 24 * time.Hour,
	} {
		if got, ok := parseHumanAge(s); !ok || got != want {
			t.Errorf("%s: %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "<invalid>", "<unknown>", "5 m", "3x", "99999999999999999999s"} {
		if _, ok := parseHumanAge(s); ok {
			t.Errorf("%q read as an age", s)
		}
	}
}

// finalizerStuckTicket is the test bed's finalizer-stuck paste: describe prints the
// deleted pod as Succeeded, since its phase is terminal.
func finalizerStuckTicket(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join("testdata", "pasted", "finalizer-stuck", "ticket.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func importedPod(t *testing.T, text string) (corev1.Pod, string) {
	t.Helper()
	b, _ := importDir(t, map[string][]byte{"t.txt": []byte(text)}, FormatLoose)
	var pods struct{ Items []corev1.Pod }
	data, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "finalizer-stuck"))
	if err != nil || json.Unmarshal(data, &pods) != nil || len(pods.Items) != 1 {
		t.Fatalf("pods: %v %s", err, data)
	}
	return pods.Items[0], diagnosis(analyzeBundles(t, b))
}

// describe shows a deleted pod's deletion only as "Terminating (lasts X)" with its grace
// period (kubectl pkg/describe describePod), and not at all once its phase is terminal.
func TestDescribedDeletion(t *testing.T) {
	ticket := finalizerStuckTicket(t)
	const status = "Status:           Succeeded\n"
	if !strings.Contains(ticket, status) {
		t.Fatal("the ticket changed: no Succeeded status line")
	}
	pod, diag := importedPod(t, ticket)
	if pod.Annotations[bundle.DeletionAnnotation] != "not shown" || pod.DeletionTimestamp != nil {
		t.Errorf("Succeeded: %v", pod.ObjectMeta)
	}
	if diag != "termination termination-finalizers-stuck [Pod finalizer-stuck/app]" {
		t.Errorf("Succeeded after Killing: %s", diag)
	}

	// The same pod while it is still Running: what describe prints for it once deleted.
	terminating := strings.Replace(ticket, status, "Status:           Terminating (lasts 2m7s)\nTermination Grace Period:  10s\n", 1)
	pod, diag = importedPod(t, terminating)
	if pod.Annotations[bundle.DeletionAnnotation] != "terminating 2m7s" || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 10 || pod.Status.Phase != "" {
		t.Errorf("Terminating: %v %v", pod.ObjectMeta, pod.Status.Phase)
	}
	if diag != "termination termination-finalizers-stuck [Pod finalizer-stuck/app]" {
		t.Errorf("Terminating for 2m7s: %s", diag)
	}
	// Within a minute of its deletionTimestamp the kubelet may still be finishing.
	_, diag = importedPod(t, strings.Replace(terminating, "lasts 2m7s", "lasts 20s", 1))
	if strings.Contains(diag, "termination-finalizers-stuck") {
		t.Errorf("Terminating for 20s: %s", diag)
	}
	// A pod that completed on its own (no Killing) is not being deleted.
	var kept []string
	for _, l := range strings.Split(ticket, "\n") {
		if !strings.Contains(l, "Killing") {
			kept = append(kept, l)
		}
	}
	if _, diag = importedPod(t, strings.Join(kept, "\n")); diag != "" {
		t.Errorf("Succeeded without Killing: %s", diag)
	}
}

// A node the paste shows only through the NodeNotReady events the node controller
// records on its pods becomes a partial Node.
func TestNotReadyNodeFromPodEvents(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "pasted", "node-not-ready", "ticket-no-headers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := importDir(t, map[string][]byte{"t.txt": data}, FormatLoose)
	var nodes struct{ Items []corev1.Node }
	raw, err := b.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
	if err != nil || json.Unmarshal(raw, &nodes) != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes: %v %s", err, raw)
	}
	n := nodes.Items[0]
	if n.Name != "podflow-node" || n.Annotations[bundle.PartialAnnotation] != "spec,status" || len(n.Status.Conditions) != 0 {
		t.Errorf("node %+v", n)
	}
	// Without the event, no node is made up.
	var kept []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "NodeNotReady") {
			kept = append(kept, l)
		}
	}
	b, _ = importDir(t, map[string][]byte{"t.txt": []byte(strings.Join(kept, "\n"))}, FormatLoose)
	if _, err := b.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes)); err == nil {
		t.Error("a node without NodeNotReady events was made")
	}
}

// A pod a kubelet journal names only as pod="ns/name" (incident 150's kubelet log, as
// pasted) becomes a partial pod bound to the node the journal is placed at.
func TestJournalPod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "incidents", "150-capa-e2e-zeroed-csi-credentials-attach", "kubelet.log"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := importDir(t, map[string][]byte{"kubelet.log": data}, FormatLoose)
	var pods struct{ Items []corev1.Pod }
	raw, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "default"))
	if err != nil || json.Unmarshal(raw, &pods) != nil || len(pods.Items) != 1 {
		t.Fatalf("pods: %v %s", err, raw)
	}
	p := pods.Items[0]
	if p.Name != "intree-nginx-statefulset-0" || p.Spec.NodeName != "ip-10-0-116-133" || p.Annotations[bundle.PartialAnnotation] != "spec,status" {
		t.Errorf("pod %+v", p.ObjectMeta)
	}
	if _, err := b.ReadFile(bundle.NodePath("ip-10-0-116-133", bundle.NodeKubeletLog)); err != nil {
		t.Errorf("the journal is not at the pod's node: %v", err)
	}
}
