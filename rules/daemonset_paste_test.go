package rules

import "testing"

// A DaemonSet that kubectl shows wanting no pod (DESIRED 0) while it is meant for every
// node is read from its table row and from its describe, which prints no Namespace.
func TestAPastedDaemonSetThatPlacesNothing(t *testing.T) {
	t.Run("kubectl get daemonset", func(t *testing.T) {
		const text = "$ kubectl get ds -n kube-system fluentd-elasticsearch\n" +
			"NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n" +
			"fluentd-elasticsearch   0         0         0       0            0           <none>          8m10s\n"
		rs := catalogRoots(t, map[string]string{"kubectl.txt": text})
		wantOneRoot(t, rs, "controller-daemonset-failed-placement", "kube-system/fluentd-elasticsearch", "desired 0", "taints")
	})
	t.Run("kubectl describe daemonset", func(t *testing.T) {
		const text = "$ kubectl describe ds sgx-plugin -n kube-system\n" +
			"Name:           sgx-plugin\n" +
			"Selector:       app=sgx-plugin\n" +
			"Node-Selector:  <none>\n" +
			"Labels:         app=sgx-plugin\n" +
			"Desired Number of Nodes Scheduled: 0\n" +
			"Current Number of Nodes Scheduled: 0\n" +
			"Number of Nodes Scheduled with Up-to-date Pods: 0\n" +
			"Number of Nodes Scheduled with Available Pods: 0\n" +
			"Number of Nodes Misscheduled: 0\n" +
			"Pods Status:  0 Running / 0 Waiting / 0 Succeeded / 0 Failed\n"
		rs := catalogRoots(t, map[string]string{"kubectl.txt": text})
		wantOneRoot(t, rs, "controller-daemonset-failed-placement", "kube-system/sgx-plugin")
	})
	t.Run("a node selector pasted", func(t *testing.T) {
		const text = "NAMESPACE   NAME         DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR         AGE\n" +
			"monitoring  gpu-exporter 0         0         0       0            0           accelerator=nvidia    3d\n"
		rs := catalogRoots(t, map[string]string{"kubectl.txt": text})
		wantOneRoot(t, rs, "controller-daemonset-failed-placement", "monitoring/gpu-exporter", "accelerator=nvidia")
	})
}

// A DaemonSet that places pods is no finding.
func TestAPastedDaemonSetWithPodsIsQuiet(t *testing.T) {
	const text = "NAME         DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n" +
		"kube-proxy   3         3         3       3            3           <none>          40d\n"
	for _, f := range catalogRoots(t, map[string]string{"kubectl.txt": text}) {
		if f.Rule == "controller-daemonset-failed-placement" {
			t.Errorf("a DaemonSet on all its nodes reported: %s", f.Cause)
		}
	}
}

// A DaemonSet's manifest as applied shows no status: its counts are not zero, they are
// not in the evidence, and its pods' own trouble is what the ticket is about. With its
// status pasted below it, the status is the manifest's and is read.
func TestADaemonSetManifestWithoutStatusPlacesNothingUnknown(t *testing.T) {
	const manifest = "```yaml\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: node-agent\n  namespace: monitoring\n" +
		"spec:\n  selector:\n    matchLabels:\n      app: node-agent\n  template:\n    metadata:\n      labels:\n        app: node-agent\n" +
		"    spec:\n      containers:\n      - name: agent\n        image: example/agent:1.0\n        ports:\n        - containerPort: 9100\n          hostPort: 9100\n```\n"
	for _, f := range catalogRoots(t, map[string]string{"manifest.txt": manifest}) {
		if f.Rule == "controller-daemonset-failed-placement" {
			t.Errorf("a manifest without status read as placing no pod: %s", f.Cause)
		}
	}
	const status = "status:\n  currentNumberScheduled: 0\n  desiredNumberScheduled: 0\n  numberMisscheduled: 0\n  numberReady: 0\n  observedGeneration: 1\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"manifest.txt": manifest, "status.txt": status}),
		"controller-daemonset-failed-placement", "monitoring/node-agent", "desired 0")
}
