package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
)

// A pasted `kubectl get pods` is served as it was pasted: the same READY, STATUS and
// RESTARTS in kubectl's table, one pod per row in the paste's namespace, and container
// statuses a client such as k8sgpt reads.
func TestPastedPodsKeepTheirRow(t *testing.T) {
	dir := t.TempDir()
	paste := "$ kubectl get pods -n shop\n" +
		"NAME                        READY   STATUS             RESTARTS      AGE\n" +
		"checkout-7d9f8b6c5d-4xk2p   0/1     CrashLoopBackOff   7 (2m ago)    14m\n" +
		"web-5f7c9d8b6-abcde         1/2     Running            0             3h\n" +
		"pay-6c8d9f7b5-zzzzz         0/1     ImagePullBackOff   0             5m\n" +
		"batch-28373940-q8k2v        0/1     Completed          0             1d\n" +
		"db-0                        0/1     Init:0/2           0             2m\n" +
		"cache-0                     0/1     Evicted            3             2d\n" +
		"api-5d8f9c7b6-p9x7w         0/1     Pending            0             30s\n"
	path := filepath.Join(dir, "ticket.txt")
	if err := os.WriteFile(path, []byte(paste), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _, err := importer.Open(path, importer.Options{Format: importer.FormatLoose, Limits: bundle.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	cs, url := start(t, b)
	code, body := get(t, url+"/api/v1/pods", kubectlTable)
	var tab metav1.Table
	if code != http.StatusOK || json.Unmarshal(body, &tab) != nil {
		t.Fatalf("table: %d %s", code, body)
	}
	want := map[string][3]string{
		"checkout-7d9f8b6c5d-4xk2p": {"0/1", "CrashLoopBackOff", "7"},
		"web-5f7c9d8b6-abcde":       {"1/2", "Running", "0"},
		"pay-6c8d9f7b5-zzzzz":       {"0/1", "ImagePullBackOff", "0"},
		"batch-28373940-q8k2v":      {"0/1", "Completed", "0"},
		"db-0":                      {"0/1", "Init:0/2", "0"},
		"cache-0":                   {"0/1", "Evicted", "3"},
		"api-5d8f9c7b6-p9x7w":       {"0/1", "Pending", "0"},
	}
	if len(tab.Rows) != len(want) {
		t.Errorf("%d rows, want %d: %v", len(tab.Rows), len(want), tab.Rows)
	}
	for _, r := range tab.Rows {
		name, _ := r.Cells[0].(string)
		got := [3]string{r.Cells[1].(string), r.Cells[2].(string), r.Cells[3].(string)}
		if w, ok := want[name]; !ok || got != w {
			t.Errorf("row %s: READY/STATUS/RESTARTS %v, want %v", name, got, w)
		}
	}
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Namespace != "shop" {
			t.Errorf("pod %s in namespace %q, want the paste's shop", p.Name, p.Namespace)
		}
		if p.Name != "checkout-7d9f8b6c5d-4xk2p" {
			continue
		}
		cs := p.Status.ContainerStatuses
		if len(p.Spec.Containers) != 1 || len(cs) != 1 || cs[0].RestartCount != 7 || cs[0].State.Waiting == nil ||
			cs[0].State.Waiting.Reason != "CrashLoopBackOff" || cs[0].Ready {
			t.Errorf("checkout's containers %+v, statuses %+v; want one waiting in CrashLoopBackOff after 7 restarts", p.Spec.Containers, cs)
		}
	}
}
