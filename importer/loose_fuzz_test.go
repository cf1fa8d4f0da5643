package importer

import (
	"os"
	"path/filepath"
	"testing"
)

func addLooseSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "loose", "*", "*"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("Name: x\nNamespace: y\nContainers:\n  c:\n    State: Terminated\n      Exit Code: x\nEvents:\n  Type  Reason\n  Normal\n"))
	f.Add([]byte("LAST SEEN   TYPE\n5m   Warning   x\n"))
	f.Add([]byte("$ crictl ps -a\r\nCONTAINER   IMAGE   CREATED   STATE   NAME   ATTEMPT   POD ID   POD\r\n- abc   img   2 minutes ago   Exited   app   x\n"))
	f.Add([]byte("Name: n1\nRoles: <none>\nTaints: a=b:NoSchedule\n\tc:Bogus\nConditions:\n  Ready  True  Sun, 29 Nov\nCapacity:\n  cpu: 2x\n"))
	f.Add([]byte("```\n$ kubectl logs -n a -c\n```\n$ oc logs pod/x c -p\nline\n"))
	f.Add([]byte(`{"status":{"id":"x","labels":{"io.kubernetes.pod.name":"p"}},"info":{}}`))
	f.Add([]byte("5m   Warning   Failed   pod/a   boom\n  wrapped\n1m  1m  2  a  Pod  spec.containers{c}  Warning  Failed  {kubelet n}  x\n"))
	f.Add([]byte("  Warning  BackOff  2m (x21 over 133m)  kubelet  (combined from similar events): x\n    State:  Waiting\n      Reason:  X\n    Ready:  False\n"))
	f.Add([]byte("a   0/1   Init:CrashLoopBackOff\nshop  b  1/1  Running  3 (2m ago)  1m\nEvents:\n  Type  Reason  Age  From  Message\n"))
	f.Add([]byte("[root@m ~]# systemctl status kubelet\n● kubelet.service - x\n   Active: failed\n\nApr 05 05:33:40 m kubelet[1]: F0405 05:33:40.5 1 s.go:1] x\n[ 12.5] oom-kill:task=j,pid=1\n"))
	f.Add([]byte("Name: c\nNamespace: n\nStorageClass:\nStatus: Pending\nCapacity: 1Zi\nAccess Modes: RWO,X\nEvents:\n  Type  Reason  Age  From  Message\n  Normal  FailedBinding  3m (x3 over 1h)  pv  no\n"))
	f.Add([]byte("NAME   STATUS   VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   AGE\nc/x   Pending\nNAME  CAPACITY  ACCESS MODES  RECLAIM POLICY  STATUS  CLAIM  STORAGECLASS\np  1Gi  RWX  Retain  Bound  a/  m\n- kind: Event\n  x: [\n"))
	f.Add([]byte(describeServicesTargetPort))
	f.Add([]byte("$ kubectl describe node n1\nTaints: a=b:NoSchedule\n  c:Bogus\n\nConditions:\n  Type  Status  LastHeartbeatTime  LastTransitionTime  Reason  Message\n  Ready  Unknown  x  y  z  w\n  Type Status LastHeartbeatTime LastTransitionTime\nAllocatable:\n  cpu: 2x\n"))
	f.Add([]byte("Nov 29 20:24:58 n1 kubelet[12]: E1129 20:24:58.000000 12 k.go:1] \"x\" pod=\"a/b\"\n5s  Warning  NodeNotReady  pod/b  Node is not ready\nName: b\nNamespace: a\nNode: n1/10.0.0.1\nStatus: Terminating (lasts 3d4h)\nTermination Grace Period: 30s\n"))
	f.Add([]byte("Name: s\nNamespace: n\nSelector: a=b,c\nType: NodePort\nPort: <unset>  x/TCP\nTargetPort: /\nNodePort: <unset>  3/UDP\nEndpoints: [::1]:80,1.2.3.4 + 9 more...\nEvents:\n  Type  Reason  Age  From  Message\n  Warning  X  1s  c  m\n"))
	f.Add([]byte("    Port:  80/TCP (web), 9/UDP, x\n    Host Port:  0/TCP (web), 70000\n    Readiness:  http-get http://[::1:x/ delay=0s timeout=1s period=2s successThreshold=1 failureThreshold=3\n"))
	f.Add([]byte("│ ```x y```\n│ time=\"2025-01-01T00:00:00Z\" level=error msg=\"x\"\nkubectl get pods -n a\nERRO[0001] x\n"))
}

// FuzzLooseImport runs every loose parser over arbitrary text: it must never panic.
func FuzzLooseImport(f *testing.F) {
	addLooseSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReport(FormatLoose, "fuzz")
		li := newLooseImport(r)
		li.file("f.txt", data)
		files := map[string][]byte{}
		li.resolveUnnamed()
		li.adoptWorkloadStatus()
		li.podsFromOwners()
		li.eventPods()
		li.resolveNodeFrags()
		li.journalPods()
		li.notReadyNodes()
		li.layoutEvents()
		li.layoutLists(files)
		li.layoutJournals(files)
		li.layoutCrictl(files)
		li.layoutLogs(files)
	})
}

// FuzzDescribe feeds arbitrary lines to the describe reader directly.
func FuzzDescribe(f *testing.F) {
	addLooseSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range splitChunks(data) {
			if len(c.lines) > 0 {
				parseDescribe(c.lines)
				parseEventsTable(c.lines, "ns")
				parsePodsTable(c.lines, "ns")
				parseDescribeNode(c.lines)
				parseDescribeService(c.lines).endpointSlices()
				parseCRIContainers(c.lines)
				parseCRISandboxes(c.lines)
				_, _ = parseObjects(c.lines)
			}
		}
	})
}

// FuzzNodeFormats feeds arbitrary bytes to the must-gather and sosreport readers: object
// files, per-host journals, crictl tables and inspect output. They must never panic.
func FuzzNodeFormats(f *testing.F) {
	addLooseSeeds(f)
	f.Add([]byte("Nov 29 20:24:58 master-0 kubelet[11]: I1129 x\nNov 29 20:24:58 m1 kubelet[12]: E1129 pod=\"a/b\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReport(FormatMustGather, "fuzz")
		li := newLooseImport(r)
		if !li.objectFile("namespaces/a/core/pods.yaml", data) {
			mustGatherEmptyList("namespaces/a/core/pods.yaml", "namespaces/a/core/pods.yaml", map[string]string{}, r)
		}
		li.layoutEvents()
		li.layoutLists(li.files)
		splitJournal("host_service_logs/masters/kubelet_service.log", data, []string{"m1", "m2"}, map[string]string{"a/b": "m2"}, li.files, r)
		mustGatherLog("namespaces/a/pods/b/c/c/logs/current.log", data, "a", "b", "c", false, li.files, r)
		parseCRIInspect(data)
		parseLogsCommand(string(data))
		podLogFile("var/log/pods/a_b_0c6d6f0e-1b1e-4c55-9f43-3a3f7f4c9a10/c/0.log", data)
		files := map[string][]byte{}
		join := criJoin{docs: []criInspectDoc{{ID: "abcdef0123456789", UID: "u"}}}
		sosCRITable(sosFile{"sos_commands/crio/crictl_ps_-a", data}, "n", join, files, r, map[string]bool{}, true)
		sosCRITable(sosFile{"sos_commands/crio/crictl_pods", data}, "n", join, files, r, map[string]bool{}, false)
	})
}
