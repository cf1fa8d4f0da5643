package importer

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// `kubectl get pv`, `kubectl get pvc` and `kubectl describe pvc` as a ticket pastes them
// (cp-helm-charts#225, website#26943) become the volumes and claims they print: a
// describe block of a claim is not read as a pod's.
func TestClaimsFromTablesAndDescribe(t *testing.T) {
	paste := "[root@master ~]# kubectl get pv\n" +
		"NAME             CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS      CLAIM   STORAGECLASS   REASON   AGE\n" +
		"task-pv-volume   25Gi       RWO            Retain           Available           manual                  13s\n" +
		"[root@master ~]#  kubectl get pvc\n" +
		"NAME                                         STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   AGE\n" +
		"datadir-0-my-confluent-oss-cp-kafka-0        Pending                                                     2d19h\n" +
		"datadir-my-confluent-oss-cp-zookeeper-0      Pending                                                     2d19h\n" +
		"\n" +
		"[root@master ~]# kubectl describe pvc hub-db-dir -n jhub\n" +
		"Name:          hub-db-dir\n" +
		"Namespace:     jhub\n" +
		"StorageClass:\n" +
		"Status:        Pending\n" +
		"Volume:\n" +
		"Labels:        app=jupyterhub\n" +
		"               component=hub\n" +
		"Finalizers:    [kubernetes.io/pvc-protection]\n" +
		"Capacity:\n" +
		"Access Modes:\n" +
		"VolumeMode:    Filesystem\n" +
		"Events:\n" +
		"  Type    Reason         Age                From                         Message\n" +
		"  ----    ------         ----               ----                         -------\n" +
		"  Normal  FailedBinding  3m (x303 over 1h)  persistentvolume-controller  no persistent volumes available for this claim and no storage class is set\n"
	b, rep := importDir(t, map[string][]byte{"kubectl.txt": []byte(paste)}, FormatLoose)
	var pvs []corev1.PersistentVolume
	for _, raw := range readList(t, b, bundle.ClusterResourcePath(bundle.KindPVs)) {
		var pv corev1.PersistentVolume
		if err := json.Unmarshal(raw, &pv); err != nil {
			t.Fatal(err)
		}
		pvs = append(pvs, pv)
	}
	if len(pvs) != 1 || pvs[0].Name != "task-pv-volume" || pvs[0].Status.Phase != corev1.VolumeAvailable ||
		pvs[0].Spec.StorageClassName != "manual" || pvs[0].Spec.Capacity.Storage().String() != "25Gi" ||
		pvs[0].Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("volumes: %+v (report %+v)", pvs, rep.Files)
	}
	claims := map[string]corev1.PersistentVolumeClaim{}
	for _, ns := range []string{"default", "jhub"} {
		for _, raw := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindPVCs, ns)) {
			var c corev1.PersistentVolumeClaim
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			claims[c.Namespace+"/"+c.Name] = c
		}
	}
	for _, name := range []string{"default/datadir-0-my-confluent-oss-cp-kafka-0", "default/datadir-my-confluent-oss-cp-zookeeper-0", "jhub/hub-db-dir"} {
		c, ok := claims[name]
		if !ok || c.Status.Phase != corev1.ClaimPending || c.Spec.StorageClassName != nil {
			t.Errorf("claim %s: %+v (found %v)", name, c, ok)
		}
	}
	if c := claims["jhub/hub-db-dir"]; c.Labels["component"] != "hub" || c.Spec.VolumeMode == nil || *c.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("described claim: %+v", c)
	}
	var bound bool
	for _, raw := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, "jhub")) {
		var ev corev1.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		bound = bound || ev.Reason == "FailedBinding" && ev.InvolvedObject.Kind == "PersistentVolumeClaim" && ev.InvolvedObject.Name == "hub-db-dir" && ev.Count == 303
	}
	if !bound {
		t.Error("the claim's FailedBinding event was not kept")
	}
	if data, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "jhub")); err == nil && len(data) > 0 {
		t.Error("the claim's describe block was read as a pod")
	}
}

// A YAML list of objects at the margin, as a ticket pastes `-o yaml` items without their
// List (kb8or#68), is read object by object.
func TestYAMLSequenceOfObjects(t *testing.T) {
	paste := "- apiVersion: v1\n  count: 61\n  involvedObject:\n    fieldPath: spec.containers{registry}\n    kind: Pod\n    name: registry-v1-j6noi\n    namespace: srrs-ci\n" +
		"  kind: Event\n  message: 'Failed to pull image \"quay.io/x/y:v2\": not found'\n  metadata:\n    name: registry-v1-j6noi.142de30bef3dc23b\n    namespace: srrs-ci\n  reason: Failed\n" +
		"- apiVersion: v1\n  kind: Event\n  involvedObject:\n    kind: Pod\n    name: registry-v1-j6noi\n    namespace: srrs-ci\n  metadata:\n    name: registry-v1-j6noi.1\n    namespace: srrs-ci\n  reason: BackOff\n  message: Back-off pulling image\n"
	b, rep := importDir(t, map[string][]byte{"event.yaml": []byte(paste)}, FormatLoose)
	evs := readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, "srrs-ci"))
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 (report %+v)", len(evs), rep.Files)
	}
}

// Describe event rows after `kubectl describe pvc NAME -n NS` (cut by grep, without the
// Name line) are the claim's events (cdk-eks-blueprints#561).
func TestDescribePVCCommandOwnsEventRows(t *testing.T) {
	paste := "kubectl describe pvc kubecost-cost-analyzer -n kubecost | grep \"ebs.csi.aws.com\"\n" +
		"               volume.kubernetes.io/storage-provisioner: ebs.csi.aws.com\n" +
		"  Normal  ExternalProvisioning  2m7s (x2222 over 9h)  persistentvolume-controller  waiting for a volume to be created, either by external provisioner \"ebs.csi.aws.com\" or manually created by system administrator\n"
	b, rep := importDir(t, map[string][]byte{"describe-pvc.txt": []byte(paste)}, FormatLoose)
	evs := readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, "kubecost"))
	if len(evs) != 1 {
		t.Fatalf("%d events in kubecost, want 1 (report %+v)", len(evs), rep.Files)
	}
	var ev corev1.Event
	if err := json.Unmarshal(evs[0], &ev); err != nil {
		t.Fatal(err)
	}
	if o := ev.InvolvedObject; o.Kind != "PersistentVolumeClaim" || o.Name != "kubecost-cost-analyzer" || ev.Count != 2222 {
		t.Errorf("event: %+v", ev)
	}
}

// A pasted Pod object whose name the paste cut (only generateName shows) is kept, named
// after its generateName and marked as not knowing its name and namespace
// (kubernetes#65569).
func TestUnnamedPodObject(t *testing.T) {
	paste := "apiVersion: v1\nkind: Pod\nmetadata:\n  deletionGracePeriodSeconds: 0\n  deletionTimestamp: \"2020-08-17T03:01:04Z\"\n" +
		"  finalizers:\n  - foregroundDeletion\n  generateName: webhook-test-79fbccfb66-\n  labels:\n    app: webhook-test\n"
	b, rep := importDir(t, map[string][]byte{"pod.yaml": []byte(paste)}, FormatLoose)
	items := readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, "default"))
	if len(items) != 1 {
		t.Fatalf("%d pods, want 1 (report %+v)", len(items), rep.Files)
	}
	var p corev1.Pod
	if err := json.Unmarshal(items[0], &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "webhook-test-79fbccfb66-unnamed" || p.DeletionTimestamp == nil || len(p.Finalizers) != 1 ||
		p.Annotations[bundle.PartialAnnotation] != "name,namespace,spec,status" {
		t.Errorf("pod: %s %v %v %q", p.Name, p.DeletionTimestamp, p.Finalizers, p.Annotations[bundle.PartialAnnotation])
	}
}
