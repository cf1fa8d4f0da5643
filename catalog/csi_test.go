package catalog

import "testing"

// TestCSIDriverLines reads lines that CSI drivers the proxy does not serve print when a
// pod cannot get its volume (the curated entries of catalog/gen/curated.yaml): the
// kubelet's MountDevice, SetUp and attach events around the driver's error, the
// provisioner's ProvisioningFailed, the drivers' own logs. Each driver's entry that reads
// the line carries the stage where it is printed.
func TestCSIDriverLines(t *testing.T) {
	c := Default()
	cases := []struct{ msg, component, stage string }{
		{"MountVolume.MountDevice failed for volume \"pvc-4f1c2a9e-2b7d-4c8e-9a51-3e0f6d7b8c21\" : rpc error: code = Internal desc = rbd: map failed with error an error (exit status 110) occurred while running rbd args: [--id csi-rbd-node -m 10.0.0.11:6789,10.0.0.12:6789,10.0.0.13:6789 --keyfile=***stripped*** map replicapool/csi-vol-5e1a8b9c-0d2f-11ef-9a3b-0a580a8100a4 --device-type krbd --options noudev], rbd error output: rbd: sysfs write failed rbd: map failed: (110) Connection timed out", "ceph-csi", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-0c5e7d1a-93b2-4f0e-8d6c-1a2b3c4d5e6f\" : rpc error: code = Internal desc = failed to get user credentials from node stage secrets: missing ID field 'userID' in secrets", "ceph-csi", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-7a8b9c0d-1e2f-4a5b-9c6d-7e8f9a0b1c2d\" : rpc error: code = Internal desc = an error (exit status 32) occurred while running mount args: [-t ceph 10.0.0.11:6789,10.0.0.12:6789:/volumes/csi/csi-vol-2b3c4d5e-6f70-11ee-8c99-0242ac120002/4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8 /var/lib/kubelet/plugins/kubernetes.io/csi/cephfs.csi.ceph.com/9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e/globalmount -o name=csi-cephfs-node,secretfile=/tmp/csi/keys/keyfile-3094852211,mds_namespace=myfs,_netdev] stderr: mount error 110 = Connection timed out", "ceph-csi", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-9e2d1c3b-5a4f-4e6d-8c7b-0a1f2e3d4c5b\" : rpc error: code = Internal desc = an error occurred while running (2735) modprobe [ceph]: exit status 1: modprobe: FATAL: Module ceph not found in directory /lib/modules/5.4.0-1045-aws", "ceph-csi", "volume"},
		{"failed to provision volume with StorageClass \"rook-ceph-block\": rpc error: code = Internal desc = failed to get connection: connecting failed: rados: ret=-110, Connection timed out", "ceph-csi", "scheduling"},
		{"E0412 08:13:55.402118       1 utils.go:210] ID: 31 Req-ID: 0001-0009-rook-ceph-0000000000000002-5e1a8b9c-0d2f-11ef-9a3b-0a580a8100a4 GRPC error: rpc error: code = Internal desc = rbd image replicapool/csi-vol-5e1a8b9c-0d2f-11ef-9a3b-0a580a8100a4 is still being used", "ceph-csi", "volume"},
		{"failed to provision volume with StorageClass \"csi-cephfs-sc\": rpc error: code = InvalidArgument desc = failed to fetch monitor list using clusterID (b9127830-b0cc-4e34-aa47-9d1a2e9949a8): missing configuration for cluster ID \"b9127830-b0cc-4e34-aa47-9d1a2e9949a8\"", "ceph-csi", "scheduling"},
		{"MountVolume.SetUp failed for volume \"efs-pv\" : rpc error: code = Internal desc = Could not mount \"fs-0a1b2c3d4e5f67890:/\" at \"/var/lib/kubelet/pods/6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/volumes/kubernetes.io~csi/efs-pv/mount\": mount failed: exit status 1 Mounting command: mount Mounting arguments: -t efs -o tls fs-0a1b2c3d4e5f67890:/ /var/lib/kubelet/pods/6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/volumes/kubernetes.io~csi/efs-pv/mount Output: Failed to resolve \"fs-0a1b2c3d4e5f67890.efs.us-east-1.amazonaws.com\" - check that your file system ID is correct, and ensure that the VPC has an EFS mount target for this file system ID. See https://docs.aws.amazon.com/console/efs/mount-dns-name for more detail. Attempting to lookup mount target ip address using botocore. Failed to import necessary dependency botocore, please install botocore first.", "efs-utils", "volume"},
		{"failed to provision volume with StorageClass \"efs-sc\": rpc error: code = Unauthenticated desc = Access Denied. Please ensure you have the right AWS permissions: Access denied", "csi-aws-efs", "scheduling"},
		{"MountVolume.SetUp failed for volume \"pvc-1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a\" : rpc error: code = InvalidArgument desc = volume ID 'fs-0a1b2c3d::fsap-0123' has an invalid access point ID 'fsap-0123': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'", "csi-aws-efs", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d\" : rpc error: code = Internal desc = volume(MC_myrg_myaks_eastus#f1a2b3c4d5e6f7a8b9c0d1e#pvc-3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d###default) mount //f1a2b3c4d5e6f7a8b9c0d1e.file.core.windows.net/pvc-3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d on /var/lib/kubelet/plugins/kubernetes.io/csi/file.csi.azure.com/0f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a/globalmount failed with mount failed: exit status 32 Mounting command: mount Mounting arguments: -t cifs -o mfsymlinks,actimeo=30,nosharesock,file_mode=0777,dir_mode=0777,<masked> //f1a2b3c4d5e6f7a8b9c0d1e.file.core.windows.net/pvc-3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d /var/lib/kubelet/plugins/kubernetes.io/csi/file.csi.azure.com/0f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a/globalmount Output: mount error(13): Permission denied Refer to the mount.cifs(8) manual page (e.g. man mount.cifs) and kernel log messages (dmesg)", "csi-azurefile", "volume"},
		{"MountVolume.MountDevice failed for volume \"azurefile-pv\" : rpc error: code = InvalidArgument desc = GetAccountInfo(myrg#mystorageacct#myshare) failed with error: could not get secret(azure-secret): secrets \"azure-secret\" not found", "csi-azurefile", "volume"},
		{"failed to provision volume with StorageClass \"azurefile-csi\": rpc error: code = Internal desc = failed to ensure storage account: failed to create storage account f1a2b3c4d5e6f7a8b9c0d1e, error: Retriable: false, RetryAfter: 0s, HTTPStatusCode: 403, RawError: {\"error\":{\"code\":\"AuthorizationFailed\",\"message\":\"The client does not have authorization to perform action 'Microsoft.Storage/storageAccounts/write'\"}}", "csi-azurefile", "scheduling"},
		{"AttachVolume.Attach failed for volume \"pvc-8c9d0e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f\" : rpc error: code = Internal desc = Attach volume /subscriptions/12345678-90ab-cdef-1234-567890abcdef/resourceGroups/MC_myrg_myaks_westeurope/providers/Microsoft.Compute/disks/pvc-8c9d0e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f to instance aks-nodepool1-12345678-vmss000002 failed with Retriable: false, RetryAfter: 0s, HTTPStatusCode: 409, RawError: {\"error\": {\"code\": \"OperationNotAllowed\", \"message\": \"The maximum number of data disks allowed to be attached to a VM of this size is 4.\"}}", "csi-azuredisk", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-2f3a4b5c-6d7e-4f8a-9b0c-1d2e3f4a5b6c\" : rpc error: code = Internal desc = failed to find disk on lun 0. azureDisk - findDiskByLun(0) failed within timeout", "csi-azuredisk", "volume"},
		{"MountVolume.SetUp failed for volume \"secrets-store-inline\" : rpc error: code = Unknown desc = failed to get secretproviderclass default/azure-kvname, error: secretproviderclasses.secrets-store.csi.x-k8s.io \"azure-kvname\" not found", "secrets-store-csi-driver", "volume"},
		{"MountVolume.SetUp failed for volume \"secrets-store-inline\" : rpc error: code = Unknown desc = failed to mount secrets store objects for pod default/nginx-deployment-5b9d8c7f6d-x2k4q, err: error connecting to provider \"aws\": provider not found: provider \"aws\"", "secrets-store-csi-driver", "volume"},
		{"AttachVolume.Attach failed for volume \"pvc-5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a\" : rpc error: code = Aborted desc = volume pvc-5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a is not ready for workloads", "longhorn", "volume"},
		{"MountVolume.MountDevice failed for volume \"pvc-5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a\" : rpc error: code = InvalidArgument desc = volume pvc-5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a hasn't been attached yet", "longhorn", "volume"},
		{"AttachVolume.Attach failed for volume \"pvc-6e7f8a9b-0c1d-4e2f-9a3b-4c5d6e7f8a9b\" : rpc error: code = DeadlineExceeded desc = volume pvc-6e7f8a9b-0c1d-4e2f-9a3b-4c5d6e7f8a9b failed to attach to node worker-2 with attachmentID csi-3f0b8e2c9d1a7b6e5f4c3d2e1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b", "longhorn", "volume"},
		{"AttachVolume.Attach failed for volume \"pvc-7f8a9b0c-1d2e-4f3a-8b4c-5d6e7f8a9b0c\" : rpc error: code = Internal desc = failed to attach disk: \"6c8d1f2e-3a4b-4c5d-9e6f-7a8b9c0d1e2f\" with node: \"k8s-worker-3\" err ServerFaultCode: Failed to add disk 'scsi0:4'.", "csi-vsphere", "volume"},
		{"failed to provision volume with StorageClass \"vsphere-sc\": rpc error: code = Internal desc = failed to get shared datastores in kubernetes cluster. Error: ServerFaultCode: Permission to perform this operation was denied.", "csi-vsphere", "scheduling"},
		{"MountVolume.MountDevice failed for volume \"pvc-8a9b0c1d-2e3f-4a4b-9c5d-6e7f8a9b0c1d\" : rpc error: code = NotFound desc = disk: 6000c29a1b2c3d4e5f60718293a4b5c6 not attached to node", "csi-vsphere", "volume"},
		{"failed to provision volume with StorageClass \"nfs-client\": unable to create directory to provision new pv: mkdir /persistentvolumes/default-data-postgres-0-pvc-9b0c1d2e-3f4a-4b5c-8d6e-7f8a9b0c1d2e: permission denied", "nfs-subdir-provisioner", "scheduling"},
	}
	for _, tc := range cases {
		m := firstOf(c, tc.msg, tc.component)
		if m == nil {
			t.Errorf("%q: no %s entry (read: %v)", tc.msg, tc.component, components(c.Read(tc.msg)))
			continue
		}
		// An entry the driver prints both while provisioning and on the node has no
		// stage of its own: the wrapper around it (the kubelet's, the provisioner's)
		// places the line, so the reading's outermost stage is what is checked.
		stage := m.Entry.Stage
		if stage == "" {
			for _, o := range c.Read(tc.msg) {
				if o.Entry.Stage != "" {
					stage = o.Entry.Stage
					break
				}
			}
		}
		if stage != tc.stage {
			t.Errorf("%q: %s entry %s (%q) reads at stage %q, want %q", tc.msg, tc.component, m.Entry.ID, m.Entry.Template, stage, tc.stage)
		}
	}
}

// TestCSIDriverEntriesCurated: each driver's entries are curated and cite their
// repository's file and function.
func TestCSIDriverEntriesCurated(t *testing.T) {
	least := map[string]int{"ceph-csi": 20, "longhorn": 15, "secrets-store-csi-driver": 15, "csi-aws-efs": 15,
		"csi-vsphere": 15, "csi-azuredisk": 15, "csi-azurefile": 15, "efs-utils": 5, "nfs-subdir-provisioner": 5}
	n := map[string]int{}
	for _, e := range Default().Entries() {
		if _, ok := least[e.Component]; !ok || e.Source != "curated" {
			continue
		}
		n[e.Component]++
		if e.Module == "" || e.File == "" || e.Function == "" {
			t.Errorf("%s (%q): does not cite its module, file and function", e.ID, e.Template)
		}
	}
	for comp, want := range least {
		if n[comp] < want {
			t.Errorf("%d %s entries, want at least %d", n[comp], comp, want)
		}
	}
}
