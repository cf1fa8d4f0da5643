package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// The kubelet tears a pod's volumes down only as the pod goes away: a TearDown that
// fails holds the deletion, so the chain breaks at termination even though the inner
// errors are the CSI driver's and mount-utils', which the catalog places at the volume.
// A mount's failure with the same inner error stays the volume's.
func TestAVolumeTearDownIsTheTerminationStage(t *testing.T) {
	journal := "Dec 01 10:00:00 node1 kubelet[1234]: E1201 10:00:00.000000    1234 nestedpendingoperations.go:301] " +
		`Operation for "{volumeName:kubernetes.io/csi/ebs.csi.aws.com^vol-0abc podName:1c0e7a52-5b1d-4c9e-9f3a-2d41e8b0a111 nodeName:}" failed. ` +
		"No retries permitted until 2021-12-01 10:02:02.000000 +0000 UTC m=+100.0 (durationBeforeRetry 2m2s). " +
		`Error: UnmountVolume.TearDown failed for volume "data" (UniqueName: "kubernetes.io/csi/ebs.csi.aws.com^vol-0abc") pod "1c0e7a52-5b1d-4c9e-9f3a-2d41e8b0a111" (UID: "1c0e7a52-5b1d-4c9e-9f3a-2d41e8b0a111") : ` +
		`kubernetes.io/csi: Unmounter.TearDownAt failed: rpc error: code = Internal desc = Could not unmount "/var/lib/kubelet/pods/1c0e7a52-5b1d-4c9e-9f3a-2d41e8b0a111/volumes/kubernetes.io~csi/pvc-1/mount": unmount failed: exit status 32` + "\n"
	rs := catalogRoots(t, map[string]string{"journal.txt": "$ journalctl -u kubelet\n" + journal})
	wantRootAt(t, rs, analyze.StageTermination, "UnmountVolume.TearDown", "Could not unmount")
}
