package importer

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// The Events table of kubectl describe up to Kubernetes 1.9: FirstSeen, LastSeen,
// Count, From, SubObjectPath, Type, Reason, Message, tab-separated so pastes lose the
// alignment (kubernetes v1.5 pkg/kubectl/describe.go DescribeEvents); 1.2 printed no
// Type.
func TestOldDescribeEventRows(t *testing.T) {
	for _, tc := range []struct {
		line, typ, reason, comp, host, fp, msg string
		count                                  int32
	}{
		{"  4m        7s        11    {replicaset-controller }              Warning   FailedCreate  Error creating: pods \"nginx-3137573019-\" is forbidden: quota",
			"Warning", "FailedCreate", "replicaset-controller", "", "", "Error creating: pods \"nginx-3137573019-\" is forbidden: quota", 11},
		{"  1m\t\t21s\t\t26\t{replicaset-controller }\t\t\tWarning\t\tFailedCreate\tError creating: pods \"x-\" is forbidden: maximum cpu usage per Container is 16, but request is 17.",
			"Warning", "FailedCreate", "replicaset-controller", "", "", "Error creating: pods \"x-\" is forbidden: maximum cpu usage per Container is 16, but request is 17.", 26},
		{"  2m\t2m\t1\t{kubelet 10.0.0.4}\tspec.containers{app}\tWarning\tFailed\tFailed to pull image \"x:1\": not found",
			"Warning", "Failed", "kubelet", "10.0.0.4", "spec.containers{app}", "Failed to pull image \"x:1\": not found", 1},
		{"  3m\t3m\t2\tkubelet, node-1\tspec.containers{app}\tNormal\tPulled\tContainer image \"nginx\" already present on machine",
			"Normal", "Pulled", "kubelet", "node-1", "spec.containers{app}", "Container image \"nginx\" already present on machine", 2},
		{"  5m\t5m\t4\t{kubelet node-2}\t\tFailedSync\tError syncing pod, skipping: failed to \"StartContainer\"",
			"Warning", "FailedSync", "kubelet", "node-2", "", "Error syncing pod, skipping: failed to \"StartContainer\"", 4},
	} {
		ev, ok := oldDescribeEventRow(tc.line)
		if !ok {
			t.Errorf("%q: not read", tc.line)
			continue
		}
		if ev.Type != tc.typ || ev.Reason != tc.reason || ev.Source.Component != tc.comp || ev.Source.Host != tc.host ||
			ev.InvolvedObject.FieldPath != tc.fp || ev.Message != tc.msg || ev.Count != tc.count {
			t.Errorf("%q: got %+v", tc.line, ev)
		}
	}
	for _, line := range []string{"  Warning  BackOff  2m (x21 over 133m)  kubelet  Back-off restarting", "Name: web-1", "  4m  7s  FailedCreate"} {
		if _, ok := oldDescribeEventRow(line); ok {
			t.Errorf("%q: read as an old event row", line)
		}
	}
}

// A workload's pasted status block becomes a partial object of that kind.
func TestWorkloadStatusFragment(t *testing.T) {
	for _, tc := range []struct{ file, paste, list, kind string }{
		{"rs.yaml", "status:\n  conditions:\n  - message: 'Internal error occurred: failed calling webhook'\n    reason: FailedCreate\n    status: \"True\"\n    type: ReplicaFailure\n  replicas: 0\n",
			bundle.KindReplicaSets, "ReplicaSet"},
		{"job.yaml", "status:\n    conditions:\n    - message: Job has reached the specified backoff limit\n      reason: BackoffLimitExceeded\n      status: \"True\"\n      type: Failed\n    failed: 5\n",
			bundle.KindJobs, "Job"},
		{"deploy.yaml", "$ kubectl get deploy web -n shop -o yaml\nstatus:\n  conditions:\n  - reason: ProgressDeadlineExceeded\n    status: \"False\"\n    type: Progressing\n  updatedReplicas: 1\n",
			bundle.KindDeployments, "Deployment"},
	} {
		b, rep := importDir(t, map[string][]byte{tc.file: []byte(tc.paste)}, FormatLoose)
		ns := "default"
		if strings.Contains(tc.paste, "-n shop") {
			ns = "shop"
		}
		items := readList(t, b, bundle.NamespacedResourcePath(tc.list, ns))
		if len(items) != 1 {
			t.Fatalf("%s: %d items (report %+v)", tc.file, len(items), rep.Files)
		}
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(items[0], &o); err != nil || o.Kind != tc.kind || o.Metadata.Annotations[bundle.PartialAnnotation] == "" {
			t.Errorf("%s: %s (%v)", tc.file, items[0], err)
		}
		if ns == "shop" && o.Metadata.Name != "web" {
			t.Errorf("%s: name %q, want the command's web", tc.file, o.Metadata.Name)
		}
	}
}

// `kubectl get endpoints` rows and Endpoints objects become EndpointSlices; a pod row's
// READY cell becomes its Ready condition; lines a ticket puts where it cut YAML short
// do not break the object.
func TestEndpointsRowsReadinessAndElisions(t *testing.T) {
	files := map[string][]byte{
		"ep.txt":   []byte("kubectl get endpoints\nNAME                  ENDPOINTS          AGE\npostgres-torus        <none>             48m\nweb                   10.1.0.5:8080,10.1.0.6:8080 + 1 more...   2d\n"),
		"pods.txt": []byte("NAME     READY   STATUS    RESTARTS   AGE\nweb-1    1/1     Running   0          3m\nweb-2    1/2     Running   0          3m\nweb-3    1/1     Running   4          3m\n"),
		"ep.yaml":  []byte("apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: api\n  namespace: default\n  ...\nsubsets:\n- notReadyAddresses:\n  - ip: 10.1.0.9\n    targetRef:\n      kind: Pod\n      name: api-1\n  ports:\n  - port: 80\n    protocol: TCP\n"),
	}
	b, rep := importDir(t, files, FormatLoose)
	slices := map[string]int{}
	partial := map[string]bool{}
	for _, raw := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "default")) {
		var s struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Endpoints []struct {
				Conditions struct {
					Ready bool `json:"ready"`
				} `json:"conditions"`
			} `json:"endpoints"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		slices[s.Metadata.Name] = len(s.Endpoints)
		partial[s.Metadata.Name] = s.Metadata.Annotations[bundle.PartialAnnotation] != ""
		if s.Metadata.Name == "api" && (len(s.Endpoints) != 1 || s.Endpoints[0].Conditions.Ready) {
			t.Errorf("api: %s", raw)
		}
	}
	if slices["postgres-torus"] != 0 || slices["web"] != 2 || slices["api"] != 1 || !partial["postgres-torus"] || partial["api"] {
		t.Errorf("slices %v partial %v (report %+v)", slices, partial, rep.Files)
	}
	pods := podsIn(t, b, "default")
	ready := func(name string) corev1.ConditionStatus {
		for _, c := range pods[name].Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status
			}
		}
		return ""
	}
	if ready("web-1") != corev1.ConditionTrue || ready("web-2") != corev1.ConditionFalse || ready("web-3") != "" {
		t.Errorf("ready: web-1 %q, web-2 %q, web-3 %q", ready("web-1"), ready("web-2"), ready("web-3"))
	}
}

// An input from which nothing is read is an error that says, per file, what it looked
// like and why nothing in it was usable.
func TestNothingReadSaysWhy(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"empty.txt": []byte("\n\n")})
	_, rep, err := Open(dir, Options{Format: FormatLoose})
	if err == nil || !strings.Contains(err.Error(), "no file holds evidence") || !strings.Contains(err.Error(), "empty.txt") {
		t.Fatalf("err %v (report %+v)", err, rep)
	}
}

// A Job's manifest pasted above what became of it (its status block, cut from the
// metadata): the status is the named Job's, so the finding names the Job, its
// backoffLimit and, no failed pod being in the evidence, the command its pods run; two
// named Jobs leave the status to neither.
func TestAJobsStatusPastedBelowItsManifest(t *testing.T) {
	manifest := "```\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nightly-report\nspec:\n  backoffLimit: 1\n" +
		"  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: job\n          image: ubuntu:16.04\n" +
		"          args: [sh, -c, \"sleep 5; false\"]\n```\n\nIt soon fails:\n\n"
	status := "```\n....\nstatus:\n    conditions:\n    - lastProbeTime: 2018-04-11T10:20:31Z\n      lastTransitionTime: 2018-04-11T10:20:31Z\n" +
		"      message: Job has reach the specified backoff limit\n      reason: BackoffLimitExceeded\n      status: \"True\"\n      type: Failed\n" +
		"    failed: 2\n    startTime: 2018-04-11T10:20:00Z\n...\n```\n"
	rep := analyzePaste(t, map[string][]byte{"ticket.md": []byte(manifest + status)})
	root := firstRoot(rep)
	if root == nil || root.Rule != "controller-job-backoff-limit" || !strings.Contains(root.Cause, "Job nightly-report") || !strings.Contains(root.Cause, "(backoffLimit: 1)") ||
		!strings.Contains(root.Cause, "its pods run sh -c sleep 5; false") {
		t.Fatalf("root %+v, want the Job nightly-report refused by its backoffLimit: 1", root)
	}

	second := strings.Replace(manifest, "```\n\nIt soon", "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: weekly-report\nspec:\n  backoffLimit: 3\n```\n\nIt soon", 1)
	rep = analyzePaste(t, map[string][]byte{"ticket.md": []byte(second + status)})
	if root := firstRoot(rep); root == nil || strings.Contains(root.Cause, "nightly-report") || strings.Contains(root.Cause, "weekly-report") {
		t.Fatalf("root %+v: with two Jobs the status is neither's", root)
	}
}

// The StatefulSet of a describe's event rows without a header is named by the command a
// sentence quotes above the fenced output ("`kubectl -n NS describe sts/NAME` resulted
// in:"), or by the controller's message itself, which names it.
func TestAStatefulSetsEventsNameTheirObject(t *testing.T) {
	row := "  Warning  FailedCreate      18s (x23 over 4m)  statefulset-controller  create Pod gk-manager-1 in StatefulSet gk-manager failed error: admission webhook \"validation.gatekeeper.sh\" denied the request: you must provide labels: {\"gatekeeper\"}\n"
	for name, paste := range map[string]string{
		"command": "`kubectl -n gatekeeper-system describe statefulset.apps/gk-manager ` resulted in:\n```\n" + row + "```\n",
		"message": "The StatefulSet's events:\n```\n" + row + "```\n",
	} {
		rep := analyzePaste(t, map[string][]byte{"ticket.md": []byte(paste)})
		root := firstRoot(rep)
		want := "StatefulSet gatekeeper-system/gk-manager"
		if name == "message" {
			want = "StatefulSet default/gk-manager"
		}
		if root == nil || !strings.Contains(root.Cause, want) {
			t.Errorf("%s: root %+v, want one that names %s", name, root, want)
		}
	}
}

// Event rows without their pod beside a pods table of one pod: the events are that
// pod's, unless its row shows it running with every container ready, which a
// FailedMount's pod is not (the paste lists the storage driver's healthy pod).
func TestEventRowsAreNotAHealthyListedPods(t *testing.T) {
	paste := func(row string) map[string][]byte {
		return map[string][]byte{"ticket.md": []byte("```\n  Warning  FailedMount  69s (x12 over 9m27s)  kubelet  MountVolume.SetUp failed for volume \"cfg\" : configmap \"app-config\" not found\n```\n\n" +
			"```\nNAME                      READY   STATUS    RESTARTS   AGE\n" + row + "\n```\n")}
	}
	b, _ := importDir(t, paste("csi-secrets-store-bvgjc   3/3     Running   0          20h"), FormatLoose)
	if txt := bundleText(t, b, "cluster-resources/events/default.json"); strings.Contains(txt, `"name":"csi-secrets-store-bvgjc"`) {
		t.Errorf("a FailedMount is given to a pod whose row shows it running and ready: %s", txt)
	}
	b, _ = importDir(t, paste("web-7d9f8c6b5-x2x9q       0/1     ContainerCreating   0          20h"), FormatLoose)
	if txt := bundleText(t, b, "cluster-resources/events/default.json"); !strings.Contains(txt, `"name":"web-7d9f8c6b5-x2x9q"`) {
		t.Errorf("a FailedMount is not given to the one pod the paste lists: %s", txt)
	}
}
