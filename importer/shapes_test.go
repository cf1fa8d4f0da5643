package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// primaryRoot runs the rules on one loose file and returns the first root a rule,
// signature or the catalog explains, else the first root.
func primaryRoot(t *testing.T, files map[string]string) *analyze.Finding {
	t.Helper()
	in := map[string][]byte{}
	for k, v := range files {
		in[k] = []byte(v)
	}
	rep := analyzePaste(t, in)
	var first *analyze.Finding
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		if f.Rule != analyze.UnexplainedRule {
			return f
		}
		if first == nil {
			first = f
		}
	}
	if first == nil {
		var got []string
		for _, f := range rep.Findings {
			got = append(got, f.Rule+" "+string(f.Stage))
		}
		t.Fatalf("no root finding; findings %v", got)
	}
	return first
}

// TestEvidenceShapes: shapes of evidence whose meaning a component prints, read at the
// stage that component holds and with the words that decide the cause.
func TestEvidenceShapes(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string
		rule     string
		stage    analyze.Stage
		mentions []string
	}{
		{"describe hpa: a False condition is the autoscaler's trouble, not a pod's",
			map[string]string{"describe-hpa.txt": `Name:                                                  web
Namespace:                                             shop
Labels:                                                <none>
Reference:                                             Deployment/web
Metrics:                                               ( current / target )
  resource memory on pods  (as a percentage of request):  <unknown> / 70%
Min replicas:                                          2
Max replicas:                                          8
Deployment pods:                                       2 current / 0 desired
Conditions:
  Type           Status  Reason                   Message
  ----           ------  ------                   -------
  AbleToScale    True    SucceededGetScale        the HPA controller was able to get the target's current scale
  ScalingActive  False   FailedGetResourceMetric  the HPA was unable to compute the replica count: unable to get metrics for resource memory: unable to fetch metrics from resource metrics API: the server is currently unable to handle the request (get pods.metrics.k8s.io)
Events:           <none>
`},
			"controller-hpa-metrics-unavailable", analyze.StageController, []string{"pods.metrics.k8s.io"}},
		{"image GC failure on the node explains a refusal for taints the message does not name",
			map[string]string{"events.txt": `  Warning  FailedScheduling  2m  default-scheduler  0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate.
  Warning  ImageGCFailed     5m  kubelet, worker-0  failed to garbage collect required amount of images. Wanted to free 4213567488 bytes, but freed 0 bytes
`},
			"node-image-gc-failed", analyze.StageNode, []string{"failed to garbage collect required amount of images"}},
		{"a signature's reading of a mount error comes before the catalog's outer message",
			map[string]string{"share-manager.log": `E0502 18:41:18.508590       1 mount_linux.go:140] Mount failed: exit status 32
Mounting command: mount
Mounting arguments: -t ext4 -o defaults /host/dev/longhorn/pvc-3f2a /export/pvc-3f2a
Output: mount: /export/pvc-3f2a: /host/dev/longhorn/pvc-3f2a already mounted or mount point busy.
`},
			"volume-mount-device-busy", analyze.StageVolume, nil},
		{"the catalog quotes the label that wraps the innermost reason",
			map[string]string{"events.txt": `  Warning  FailedMount  15s  kubelet, aks-nodepool1-0  MountVolume.SetUp failed for volume "pvc-9a" : mount failed: exit status 32
Mounting command: systemd-run
Mounting arguments: --scope -- mount -t cifs -o vers=3.0 //acct.file.core.windows.net/share /var/lib/kubelet/pods/1/volumes/kubernetes.io~azure-file/pvc-9a
Output: Running scope as unit run-r1.scope.
mount error(115): Operation now in progress
Refer to the mount.cifs(8) manual page (e.g. man mount.cifs)
`},
			"", analyze.StageVolume, []string{"mount error(115): Operation now in progress"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := primaryRoot(t, tc.files)
			if tc.rule != "" && root.Rule != tc.rule || root.Stage != tc.stage {
				t.Fatalf("root %s at %s (%s), want %s at %s", root.Rule, root.Stage, root.Cause, tc.rule, tc.stage)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(root.Cause, m) {
					t.Errorf("cause %q does not name %q", root.Cause, m)
				}
			}
		})
	}
}
