package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

func importedPods(t *testing.T, b *bundle.Bundle, ns string) map[string]corev1.Pod {
	t.Helper()
	data, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, ns))
	if err != nil {
		t.Fatal(err)
	}
	var l corev1.PodList
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range l.Items {
		out[p.Name] = p
	}
	return out
}

// A `kubectl get pods` row keeps its READY, STATUS and RESTARTS cells (for serve to
// print again), and invents no container analysis could take for evidence.
func TestGetPodsRowKeepsItsCells(t *testing.T) {
	b, _ := importDir(t, map[string][]byte{"ticket.txt": []byte("$ kubectl get pods -n shop\n" +
		"NAME                        READY   STATUS             RESTARTS      AGE\n" +
		"checkout-7d9f8b6c5d-4xk2p   0/1     CrashLoopBackOff   7 (2m ago)    14m\n" +
		"web-5f7c9d8b6-abcde         1/2     Running            0             3h\n")}, FormatLoose)
	pods := importedPods(t, b, "shop")
	for name, want := range map[string]bundle.KubectlRow{
		"checkout-7d9f8b6c5d-4xk2p": {Ready: "0/1", Status: "CrashLoopBackOff", Restarts: "7 (2m ago)"},
		"web-5f7c9d8b6-abcde":       {Ready: "1/2", Status: "Running", Restarts: "0"},
	} {
		p, ok := pods[name]
		if !ok {
			t.Fatalf("no pod %s in %v", name, pods)
		}
		var got bundle.KubectlRow
		if err := json.Unmarshal([]byte(p.Annotations[bundle.KubectlRowAnnotation]), &got); err != nil || got != want {
			t.Errorf("%s: row %+v (%v), want %+v", name, got, err, want)
		}
		if len(p.Spec.Containers) != 0 || len(p.Status.ContainerStatuses) != 0 {
			t.Errorf("%s: containers %v, statuses %v; a row names none", name, p.Spec.Containers, p.Status.ContainerStatuses)
		}
	}
}

// A pod the paste shows only as a row takes its spec from its pasted owner's template:
// the requests a scheduling failure is about are the paste's, never "cpu 0".
func TestOwnerTemplateGivesThePodsRequests(t *testing.T) {
	rep := analyzeTestdata(t, "loose/insufficient-cpu-tables", "ticket-paste.md")
	found := false
	for _, f := range rep.Findings {
		if !f.Root || f.Rule != "scheduling-insufficient-resources" && !strings.Contains(f.Cause, "requests") {
			continue
		}
		found = true
		if !strings.Contains(f.Cause, "cpu 512") || strings.Contains(f.Cause, "cpu 0") {
			t.Errorf("root %s: %s; want the template's request, cpu 512", f.Rule, f.Cause)
		}
	}
	if !found {
		t.Fatalf("no scheduling root about requests: %+v", rep.Findings)
	}

	data, err := os.ReadFile(filepath.Join("testdata", "loose", "insufficient-cpu-tables", "ticket-paste.md"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := importDir(t, map[string][]byte{"ticket-paste.md": data}, FormatLoose)
	p := importedPods(t, b, "insufficient-cpu")["api-6bc9b54ccf-zmxjb"]
	if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Name != "api" ||
		p.Spec.Containers[0].Resources.Requests.Cpu().String() != "512" {
		t.Errorf("pod spec %+v; want the ReplicaSet template's container api requesting cpu 512", p.Spec.Containers)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "ReplicaSet" || p.OwnerReferences[0].Name != "api-6bc9b54ccf" ||
		p.Annotations[SpecFromAnnotation] != "ReplicaSet/api-6bc9b54ccf" {
		t.Errorf("owner %+v, annotations %v", p.OwnerReferences, p.Annotations)
	}
	if len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("statuses %+v: the paste shows none", p.Status.ContainerStatuses)
	}
}

// The Deployment alone (no ReplicaSet pasted): its template, the ReplicaSet named by
// the pod's hash as owner.
func TestOwnerTemplateFromADeployment(t *testing.T) {
	b, _ := importDir(t, map[string][]byte{"ticket.txt": []byte("$ kubectl get pods -n shop\n" +
		"NAME                   READY   STATUS    RESTARTS   AGE\n" +
		"api-6bc9b54ccf-zmxjb   0/1     Pending   0          5m\n" +
		"\n$ kubectl get deploy api -n shop -o yaml\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: shop\nspec:\n  selector:\n    matchLabels:\n      app: api\n" +
		"  template:\n    metadata:\n      labels:\n        app: api\n    spec:\n      containers:\n      - name: api\n        image: api:1\n" +
		"        resources:\n          requests:\n            cpu: \"512m\"\n")}, FormatLoose)
	p := importedPods(t, b, "shop")["api-6bc9b54ccf-zmxjb"]
	if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Resources.Requests.Cpu().String() != "512m" {
		t.Errorf("pod spec %+v; want the Deployment template's cpu 512m", p.Spec.Containers)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != "api-6bc9b54ccf" || p.Labels["app"] != "api" {
		t.Errorf("owner %+v, labels %v", p.OwnerReferences, p.Labels)
	}
}

// A paste of several files, one naming the pod (`kubectl get pods`), another the
// describe excerpt without a name: the excerpt is about that pod, never a placeholder
// named after its file.
func TestAPodNamedInAnotherFileOfThePaste(t *testing.T) {
	b, _ := importDir(t, map[string][]byte{
		"a-describe.txt": []byte("Events:\n  Type     Reason     Age                  From     Message\n" +
			"  ----     ------     ----                 ----     -------\n" +
			"  Warning  BackOff    2m (x7 over 14m)     kubelet  Back-off restarting failed container\n"),
		"b-pods.txt": []byte("$ kubectl get pods -n shop\nNAME                        READY   STATUS             RESTARTS      AGE\n" +
			"checkout-7d9f8b6c5d-4xk2p   0/1     CrashLoopBackOff   7 (2m ago)    14m\n"),
	}, FormatLoose)
	for _, name := range b.Names() {
		if strings.Contains(name, "unnamed") {
			t.Errorf("bundle file %s names a placeholder pod", name)
		}
	}
	if _, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "default")); err == nil {
		t.Errorf("a pod in default: the paste's pod is in shop")
	}
	data, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindEvents, "shop"))
	if err != nil || !strings.Contains(string(data), "checkout-7d9f8b6c5d-4xk2p") || !strings.Contains(string(data), "Back-off") {
		t.Errorf("the excerpt's event is not the pod's: %v\n%s", err, data)
	}
	if strings.Contains(string(data), "unnamed-") {
		t.Errorf("events name a placeholder pod:\n%s", data)
	}
}
