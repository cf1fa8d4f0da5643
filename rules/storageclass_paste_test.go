package rules

import (
	"strings"
	"testing"
)

// A claim without a class stays Pending when no StorageClass is the default: kubectl
// describe storageclass and get storageclass say which classes there are and whether
// one is.
func TestPastedStorageClassesSayWhetherOneIsTheDefault(t *testing.T) {
	const pvc = "kubectl get pvc\n" +
		"NAME     STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   AGE\n" +
		"data-0   Pending                                                     2m30s\n\n"
	t.Run("describe storageclass", func(t *testing.T) {
		const sc = "kubectl describe sc\n" +
			"Name:                  local-path\n" +
			"IsDefaultClass:        No\n" +
			"Annotations:           <none>\n" +
			"Provisioner:           rancher.io/local-path\n" +
			"ReclaimPolicy:         Delete\n" +
			"VolumeBindingMode:     WaitForFirstConsumer\n" +
			"Events:                <none>\n"
		rs := catalogRoots(t, map[string]string{"kubectl.txt": pvc + sc})
		wantOneRoot(t, rs, "volume-pvc-unbound", "no default StorageClass", "local-path: IsDefaultClass No")
	})
	t.Run("get storageclass with a default", func(t *testing.T) {
		const sc = "kubectl get sc\n" +
			"NAME                   PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\n" +
			"local-path (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false                  40d\n\n" +
			"kubectl describe sc slow\n" +
			"Name:                  slow\n" +
			"IsDefaultClass:        No\n" +
			"Provisioner:           example.com/nfs\n"
		// Were the table's default not read, the describe's class alone would say none is.
		for _, f := range catalogRoots(t, map[string]string{"kubectl.txt": pvc + sc}) {
			if strings.Contains(f.Cause, "no default StorageClass") {
				t.Errorf("a default class pasted, and the cause says there is none: %s", f.Cause)
			}
		}
	})
}

// The scheduler's unbound-claims message names no claim; a chart's claim pasted beside it
// (its template actions are not YAML) is the one the cause names.
func TestTheUnboundClaimIsTheOnePasted(t *testing.T) {
	const pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  labels:\n    app: {{ template \"runner.fullname\" . }}\n" +
		"  name: runner-cache\n  namespace: devops\nspec:\n  accessModes:\n    - ReadWriteOnce\n  resources:\n    requests:\n      storage: 100Gi\n" +
		"  storageClassName: nas\n  volumeName: runner-cache\nstatus: {}\n"
	const events = "Warning | runner-ypqw71yt | pod has unbound immediate PersistentVolumeClaims (repeated 6 times) | FailedScheduling\n"
	rs := catalogRoots(t, map[string]string{"pvc.yaml": pvc, "events.txt": events})
	wantOneRoot(t, rs, "volume-pvc-unbound", "devops/runner-cache")
}
