package rules

import "testing"

// Families of messages the components on the pod path print, read in the shapes a
// ticket brings them: klog lines with and without their header, lines cut at the start
// ("proxier.go:1909] ..."), a node's journal where a structured line is read as its
// message and err, kube-proxy's logrus lines of the IPVS netlink library, and messages
// quoted in prose or in kubectl create's output. Each case is one evidence file whose one
// root must be the family's signature, holding the value that decides the cause.
type familyCase struct {
	name, file, text, rule string
	holds                  []string
}

func runFamilyCases(t *testing.T, cases []familyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantOneRoot(t, catalogRoots(t, map[string]string{c.file: c.text + "\n"}), c.rule, c.holds...)
		})
	}
}

// kube-proxy in IPVS mode on a node without the IPVS kernel support. The IPVS netlink
// library kube-proxy links (docker/libnetwork ipvs to 1.18, moby/ipvs since) runs
// modprobe ip_vs itself and logs, in logrus format, why it failed; its own exec of
// modprobe failing is kube-proxy's helper missing, not a container whose command is
// missing. The proxier's syncs print the kernel's ENOENT without a file name
// (pkg/proxy/ipvs/proxier.go, glog to 1.22, structured since).
func TestKubeProxyIPVSKernelSupportFamily(t *testing.T) {
	runFamilyCases(t, []familyCase{
		{"modprobe not in the image", "kube-proxy.log",
			`time="2017-10-12T17:28:13Z" level=warning msg="Running modprobe ip_vs failed with message: ` + "``" + `, error: exec: \"modprobe\": executable file not found in $PATH"`,
			"service-kube-proxy-ipvs-modprobe-failed", []string{"ip_vs", "modprobe", "not in its image"}},
		{"lib modules not mounted", "kube-proxy.log",
			`time="2017-12-13T20:39:34Z" level=warning msg="Running modprobe ip_vs failed with message: ` + "`modprobe: ERROR: ../libkmod/libkmod.c:557 kmod_search_moddep() could not open moddep file '/lib/modules/4.13.0-19-lowlatency/modules.dep.bin'`" + `, error: exit status 1"`,
			"service-kube-proxy-ipvs-modprobe-failed", []string{"/lib/modules/4.13.0-19-lowlatency/modules.dep.bin"}},
		{"module not in the kernel's modules", "kube-proxy.log",
			`time="2020-05-22T22:31:30Z" level=warning msg="Running modprobe ip_vs failed with message: ` + "`modprobe: FATAL: Module ip_vs not found in directory /lib/modules/5.4.0-1036-raspi`" + `, error: exit status 1"`,
			"service-kube-proxy-ipvs-modprobe-failed", []string{"/lib/modules/5.4.0-1036-raspi"}},
		{"no IPVS family", "kube-proxy.log",
			`time="2018-03-01T21:18:44Z" level=error msg="Could not get ipvs family information from the kernel. It is possible that ipvs is not enabled in your kernel. Native loadbalancing will not work until this is fixed."`,
			"service-kube-proxy-ipvs-unavailable", []string{"Could not get ipvs family information"}},
		{"add IPVS service, cut at the start", "kube-proxy.log",
			`proxier.go:1909] Failed to add IPVS service "kube-system/kube-dns:dns": no such file or directory`,
			"service-kube-proxy-ipvs-unavailable", []string{"kube-system/kube-dns:dns", "no IPVS netlink family"}},
		{"sync service with its klog header", "kube-proxy.log",
			`E0611 10:05:40.011872       1 proxier.go:1195] Failed to sync service: 10.96.0.1:443/TCP, err: no such file or directory`,
			"service-kube-proxy-ipvs-unavailable", []string{"10.96.0.1:443/TCP"}},
		// A structured line is read as its message and err (the svcName field is not
		// part of that reading), so the cause says what failed without the Service.
		{"structured add", "kube-proxy.log",
			`E1007 13:57:26.145840       1 proxier.go:2016] "Failed to add IPVS service" err="no such file or directory" svcName="kube-system/metrics-server"`,
			"service-kube-proxy-ipvs-unavailable", []string{"Failed to add IPVS service", "no IPVS netlink family"}},
		{"structured sync in a node journal", "journal.txt",
			`Oct 07 13:57:26 n1 kube-proxy[812]: E1007 13:57:26.145807       1 proxier.go:1242] "Failed to sync service" err="no such file or directory" service="123.123.252.197:8989/TCP"`,
			"service-kube-proxy-ipvs-unavailable", []string{"no such file or directory"}},
		{"quoted in prose", "ticket.txt",
			"Since the upgrade kube-proxy keeps logging `Failed to add IPVS service \"default/kubernetes:https\": no such file or directory` and no Service works.",
			"service-kube-proxy-ipvs-unavailable", []string{"default/kubernetes:https"}},
		{"kubeadm preflight", "kubeadm.txt",
			`	[WARNING RequiredIPVSKernelModulesAvailable]: the IPVS proxier will not be used, because the following required kernel modules are not loaded: [ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh] or no builtin kernel ipvs support: map[ip_vs:{} ip_vs_rr:{} ip_vs_wrr:{} ip_vs_sh:{} nf_conntrack_ipv4:{}]`,
			"service-kube-proxy-ipvs-unavailable", []string{"[ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh]"}},
	})
}

// The ServiceAccount admission plugin of 1.0 to 1.21 refuses a pod whose ServiceAccount
// has no token Secret (plugin/pkg/admission/serviceaccount/admission.go
// mountServiceAccountToken): Forbidden with NS/NAME to 1.2, ServerTimeout with the
// quoted name from 1.3.
func TestServiceAccountTokenMissingFamily(t *testing.T) {
	runFamilyCases(t, []familyCase{
		{"kubectl create, Forbidden", "kubectl.txt",
			`Error from server (Forbidden): error when creating "pod.yaml": pods "nginx" is forbidden: no API token found for service account default/default, retry after the token is automatically created and added to the service account`,
			"admission-serviceaccount-token-missing", []string{"default/default", "service-account-private-key-file"}},
		{"kubectl create, ServerTimeout", "kubectl.txt",
			`Error from server (ServerTimeout): error when creating "pod-nginx.yaml": No API token found for service account "default", retry after the token is automatically created and added to the service account`,
			"admission-serviceaccount-token-missing", []string{"ServiceAccount default "}},
		{"controller manager journal", "journal.txt",
			`Jan 26 13:17:03 fws0250 kube-controller-manager: E0126 13:17:03.300315    8514 replication_controller.go:324] unable to create pod replica: Pod "redis-master-" is forbidden: no API token found for service account default/default, retry after the token is automatically created and added to the service account`,
			"admission-serviceaccount-token-missing", []string{"default/default"}},
		{"FailedCreate event row", "events.txt",
			`Warning   FailedCreate   replicationcontroller/kube-dns-v11   Error creating: pods "kube-dns-v11-" is forbidden: no API token found for service account kube-system/default, retry after the token is automatically created and added to the service account`,
			"admission-serviceaccount-token-missing", []string{"kube-system/default"}},
	})
}

// The kubelet exits at start when the client CA file of its authentication config
// cannot be loaded (cmd/kubelet/app/server.go InitializeTLS to 1.35,
// pkg/kubelet/kubelet.go since): read at the node stage naming the file, also when the
// ticket's prose around it speaks of certificates.
func TestKubeletClientCAFileFamily(t *testing.T) {
	runFamilyCases(t, []familyCase{
		{"syslog line of 1.8", "messages.txt",
			`Oct 13 12:25:26 master kubelet: error: unable to load client CA file /etc/kubernetes/pki/ca.crt: open /etc/kubernetes/pki/ca.crt: no such file or directory`,
			"node-kubelet-client-ca-missing", []string{"/etc/kubernetes/pki/ca.crt"}},
		{"klog fatal cut at the start", "journal.txt",
			`server.go:218] unable to load client CA file /etc/kubernetes/pki/ca.crt: open /etc/kubernetes/pki/ca.crt: no such file`,
			"node-kubelet-client-ca-missing", []string{"/etc/kubernetes/pki/ca.crt"}},
		{"structured command failed", "journal.txt",
			`Dec 24 20:54:46 os2-capi-02 kubelet[79904]: E1224 20:54:46.845906   79904 run.go:74] "command failed" err="failed to construct kubelet dependencies: unable to load client CA file /etc/kubernetes/ssl/ca.crt: open /etc/kubernetes/ssl/ca.crt: no such file or directory"`,
			"node-kubelet-client-ca-missing", []string{"/etc/kubernetes/ssl/ca.crt"}},
		{"quoted in prose about certificates", "ticket.txt",
			`After installing kubeadm the kubelet keeps restarting and journalctl says "unable to load client CA file /etc/kubernetes/pki/ca.crt: open /etc/kubernetes/pki/ca.crt: no such file or directory". The client certificate is not expired, I checked the certificates.`,
			"node-kubelet-client-ca-missing", []string{"/etc/kubernetes/pki/ca.crt"}},
	})
}

// The kubelet's hostPath type check (pkg/volume/hostpath/host_path.go checkTypeInternal,
// pkg/volume/host_path before 1.16): each expected type in the 1.8 to 1.36 wording and
// the 1.37 one, in an events table, a describe, and quoted in prose.
func TestHostPathTypeCheckFamily(t *testing.T) {
	runFamilyCases(t, []familyCase{
		{"socket in an events table", "events.txt",
			`58s         Warning   FailedMount               pod/runner-7c9f   MountVolume.SetUp failed for volume "docker-sock" : hostPath type check failed: /var/run/docker.sock is not a socket file`,
			"volume-hostpath-type-mismatch", []string{"/var/run/docker.sock", "socket file", "docker-sock"}},
		{"directory in a describe", "describe.txt",
			"Events:\n  Type     Reason       Age                From     Message\n  ----     ------       ----               ----     -------\n" +
				`  Warning  FailedMount  3m (x8 over 3m)    kubelet  MountVolume.SetUp failed for volume "cert-volume" : hostPath type check failed: /var/ability/certs is not a directory`,
			"volume-hostpath-type-mismatch", []string{"/var/ability/certs", "directory"}},
		{"file", "events.txt",
			`18m         Warning   FailedMount               pod/health-check-deployment-57c65cf5db-gbqf4            MountVolume.SetUp failed for volume "docker-sock-volume" : hostPath type check failed: /var/run/docker.sock is not a file`,
			"volume-hostpath-type-mismatch", []string{"/var/run/docker.sock", "be a file"}},
		{"character device", "events.txt",
			`2m          Warning   FailedMount   pod/vm-launcher-x   MountVolume.SetUp failed for volume "kvm" : hostPath type check failed: /dev/kvm is not a character device`,
			"volume-hostpath-type-mismatch", []string{"/dev/kvm", "character device"}},
		{"block device, 1.37 wording", "events.txt",
			`2m          Warning   FailedMount   pod/raw-x   MountVolume.SetUp failed for volume "disk" : hostPath type check failed: /dev/sdb is not a block device, it's a directory`,
			"volume-hostpath-type-mismatch", []string{"/dev/sdb", "block device", "it is a directory"}},
		{"quoted in backticks in prose", "ticket.txt",
			"The pod stays in ContainerCreating with `MountVolume.SetUp failed for volume \"containerd-sock\" : hostPath type check failed: /run/containerd/containerd.sock is not a socket file` on k3d.",
			"volume-hostpath-type-mismatch", []string{"/run/containerd/containerd.sock", "socket file"}},
	})
}
