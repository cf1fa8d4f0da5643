package importer

import (
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

// rootOf analyzes a one-file paste and returns its root findings' stage, pods and
// causes, one line each.
func rootsOf(t *testing.T, paste string) (*analyze.Report, []string) {
	t.Helper()
	b, _ := importDir(t, map[string][]byte{"ticket.txt": []byte(paste)}, FormatLoose)
	// As podflow analyze runs: the evidence no rule explains is reported too.
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Unexplained: true})
	var out []string
	for _, f := range rep.Findings {
		if f.Root {
			var pods []string
			for _, p := range f.Pods() {
				pods = append(pods, p.NamespacedName())
			}
			out = append(out, string(f.Stage)+" "+strings.Join(pods, ",")+": "+f.Cause)
		}
	}
	return rep, out
}

func TestAPasteNamesItsPod(t *testing.T) {
	for _, tc := range []struct{ name, paste, pod string }{
		{"kubelet back-off event", "Events:\n" +
			"  Warning  BackOff  2m (x7 over 5m)  kubelet  Back-off restarting failed container api in pod api-7d9f-abc12_shop(1234-5678)\n",
			"shop/api-7d9f-abc12"},
		{"structured kubelet key", "Events:\n" +
			"  Warning  FailedMount  1m (x3 over 4m)  kubelet  MountVolume.SetUp failed for volume \"cfg\" : configmap \"cfg\" not found pod=\"payments/ledger-0\"\n",
			"payments/ledger-0"},
		{"scheduler's assignment", "Events:\n" +
			"  Normal   Scheduled  5m                 default-scheduler  Successfully assigned shop/web-5d8f-a1 to node-3\n" +
			"  Warning  BackOff    2m (x7 over 5m)    kubelet            Back-off restarting failed container web in pod web-5d8f-a1_shop(9)\n",
			"shop/web-5d8f-a1"},
		{"prompt behind a pipe", "$ kubectl describe pod -n shop web-7d9f-x2 | grep -A4 Events\n" +
			"Events:\n" +
			"  Type     Reason   Age                From     Message\n" +
			"  ----     ------   ----               ----     -------\n" +
			"  Warning  BackOff  2m (x7 over 5m)    kubelet  Back-off restarting failed container web\n",
			"shop/web-7d9f-x2"},
		{"grep names the pod", "$ kubectl get pods -n shop | grep web-7d9f\n" +
			"web-7d9f-x2   0/1     CrashLoopBackOff   7 (30s ago)   20m\n",
			"shop/web-7d9f-x2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, roots := rootsOf(t, tc.paste)
			if len(roots) == 0 {
				t.Fatal("no finding")
			}
			for _, r := range roots {
				if !strings.Contains(r, " "+tc.pod+": ") {
					t.Errorf("finding %q is not about %s", r, tc.pod)
				}
				if strings.Contains(r, "unnamed") || strings.Contains(r, "default/") {
					t.Errorf("finding %q names an invented pod", r)
				}
			}
			for _, f := range rep.Findings {
				for _, c := range f.Confirm {
					if strings.Contains(c, " -n ") && !strings.Contains(c, "-n "+strings.Split(tc.pod, "/")[0]) {
						t.Errorf("confirm command %q is not in the paste's namespace", c)
					}
				}
			}
		})
	}
}

func TestKubectlStatusWordsGoToTheirStage(t *testing.T) {
	paste := "$ kubectl get pods -n shop\n" +
		"NAME                     READY   STATUS                  RESTARTS      AGE\n" +
		"api-6c9f7d-x1            0/1     Init:0/2                0             5m\n" +
		"api-6c9f7d-x2            0/1     Init:CrashLoopBackOff   4 (30s ago)   5m\n" +
		"api-6c9f7d-x3            0/1     Init:Error              2             5m\n" +
		"web-5d8f-a1              0/1     ContainerCreating       0             10m\n" +
		"web-5d8f-a2              0/1     PodInitializing         0             10m\n" +
		"batch-1-xyz              0/1     Completed               0             1h\n" +
		"old-7f-q                 0/1     Terminating             0             2d\n" +
		"cache-0                  0/1     Evicted                 0             3h\n" +
		"worker-9-k               0/1     OutOfcpu                0             1h\n" +
		"pin-1                    0/1     NodeAffinity            0             1h\n" +
		"queue-0                  0/1     Pending                 0             1h\n"
	_, roots := rootsOf(t, paste)
	want := map[string]string{
		"shop/api-6c9f7d-x1": "start", "shop/api-6c9f7d-x2": "start", "shop/api-6c9f7d-x3": "start",
		"shop/web-5d8f-a1": "sandbox", "shop/web-5d8f-a2": "volume", "shop/old-7f-q": "termination",
		"shop/cache-0": "node", "shop/worker-9-k": "node", "shop/pin-1": "node", "shop/queue-0": "scheduling",
	}
	got := map[string]string{}
	for _, r := range roots {
		stage, rest, _ := strings.Cut(r, " ")
		pod, cause, _ := strings.Cut(rest, ": ")
		got[pod] = stage
		if pod != "shop/queue-0" && (strings.Contains(cause, "not scheduled") || strings.Contains(cause, "no node")) {
			t.Errorf("%s: kubectl shows it past scheduling, the cause says %q", pod, cause)
		}
		if strings.Contains(cause, `it says ""`) {
			t.Errorf("%s: quotes an empty message: %q", pod, cause)
		}
	}
	for pod, stage := range want {
		if got[pod] != stage {
			t.Errorf("%s: stage %q, want %q (roots %q)", pod, got[pod], stage, roots)
		}
	}
	if s, ok := got["shop/batch-1-xyz"]; ok {
		t.Errorf("a Completed pod has a root cause at %s", s)
	}
}

func TestAPastedEvictionMessageIsRead(t *testing.T) {
	paste := "$ kubectl describe pod cache-0 -n shop | grep -A3 Status\n" +
		"Status:           Failed\n" +
		"Reason:           Evicted\n" +
		"Message:          The node was low on resource: memory. Threshold quantity: 100Mi, available: 91Mi. Container redis was using 1Gi, request is 256Mi, has larger consumption of memory.\n"
	_, roots := rootsOf(t, paste)
	if len(roots) != 1 || !strings.HasPrefix(roots[0], "node shop/cache-0: ") || !strings.Contains(roots[0], "low on memory") && !strings.Contains(roots[0], "ran low on memory") {
		t.Errorf("roots = %q, want the eviction of shop/cache-0 for memory", roots)
	}
}

// Event rows copied from their Reason cell on, without the pod's name, are the events of
// the one pod whose STATUS in the pasted pods table shows their trouble.
func TestEventRowsGoToThePodWhoseStatusShowsThem(t *testing.T) {
	files := map[string][]byte{
		"get-pods.txt": []byte("$ kubectl get pod\n" +
			"NAME                           READY   STATUS             RESTARTS       AGE\n" +
			"model-api-688778dd76-wzwmg     0/1     CrashLoopBackOff   13 (68s ago)   65m\n" +
			"model-cache-7c984cdff8-xq5pk   0/1     Pending            0              65m\n" +
			"model-cache-etcd-0             1/1     Running            0              65m\n"),
		"events.txt": []byte("FailedScheduling   2m21s (x42 over 60m)  default-scheduler  0/2 nodes are available: 2 node(s) had untolerated taint {gpu: present}\n"),
	}
	b, _ := importDir(t, files, FormatLoose)
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Unexplained: true})
	var roots []string
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		var pods []string
		for _, p := range f.Pods() {
			pods = append(pods, p.Name)
		}
		roots = append(roots, string(f.Stage)+" "+f.Rule+" "+strings.Join(pods, ","))
	}
	want := "scheduling scheduling-untolerated-taint model-cache-7c984cdff8-xq5pk"
	if !slices.Contains(roots, want) {
		t.Errorf("roots = %q, want %q among them", roots, want)
	}
}

// A log pasted under `kubectl logs POD -c CONTAINER` is evidence about that pod even when
// nothing else shows it, and the STATUS the reporter's sentence puts it in is its status.
func TestALoggedPodTakesTheStatusTheTicketGivesIt(t *testing.T) {
	paste := "Deployment failure - the first db pod gets into Init:CrashLoopBackOff\n\n" +
		"$ kubectl logs db-0 -c prepare-data-dir\n" +
		"chown: changing ownership of '/var/lib/db': Permission denied\n"
	if _, roots := rootsOf(t, paste); !hasRoot(roots, "start db-0: ", "Init:CrashLoopBackOff") {
		t.Errorf("roots = %q, want the pod db-0 at the start stage in Init:CrashLoopBackOff", roots)
	}
	if got := proseStatuses([]textLine{{s: "web-1   0/1   CrashLoopBackOff   3   1m"}, {s: "I restarted it into the night"}}); len(got) != 0 {
		t.Errorf("a pods table row or a sentence without a STATUS word gave %q", got)
	}
}

// The one container a ticket shows the log of, for a pod its sentence puts "in an
// `Init:CrashLoopBackOff` state", is the failing init container, though the pod the
// import builds lists it among its containers; its Java exception says what on the
// line after its colon, past the stack frames the log ends with.
func TestALoggedInitContainerOfAPodInInitCrashLoop(t *testing.T) {
	paste := "The init-container of the main pod does produce an error on start-up, and leads to an `Init:CrashLoopBackOff` state.\n\n" +
		"```bash\n$ kubectl logs jenkins-0 -c init\n" +
		"Will install new plugin workflow-api 1106.v6a04bac22f47\n" +
		"io.jenkins.tools.pluginmanager.impl.AggregatePluginPrerequisitesNotMetException: Multiple plugin prerequisites not met:\n" +
		"Plugin git:4.10.0 (via credentials:1055.v1346ba467ba1) depends on configuration-as-code:1.55, but there is an older version defined on the top level - configuration-as-code:1.54\n" +
		"\tat io.jenkins.tools.pluginmanager.impl.PluginManager.start(PluginManager.java:222)\n" +
		"\tat io.jenkins.tools.pluginmanager.cli.Main.main(Main.java:70)\n```\n"
	rep, roots := rootsOf(t, paste)
	if !hasRoot(roots, "start jenkins-0: ", "configuration-as-code:1.54") {
		t.Errorf("roots = %q, want the init container's failure at the start stage, with the plugin it names", roots)
	}
	if f := firstRoot(rep); f == nil || f.Rule != "start-init-container-failed" {
		t.Errorf("first root = %+v, want start-init-container-failed", f)
	}
}

// A container that runs again after a run the runtime could not start, with nothing
// that shows it ready, is not "No finding": the failed start is all the evidence says.
func TestAFailedStartBeforeARunIsStillSaid(t *testing.T) {
	paste := "From describe pod what I found is :\n```\n" +
		"    State:          Running\n" +
		"      Started:      Mon, 01 Apr 2019 20:29:10 +0000\n" +
		"    Last State:     Terminated\n" +
		"      Reason:       ContainerCannotRun\n" +
		"      Message:      OCI runtime create failed: container_linux.go:348: starting container process caused \"process_linux.go:402: container init caused \\\"process_linux.go:367: setting cgroup config for procHooks process caused \\\\\\\"failed to write 10485760 to memory.limit_in_bytes: device or resource busy\\\\\\\"\\\"\": unknown\n" +
		"      Exit Code:    128\n```\n"
	rep, _ := rootsOf(t, paste)
	if len(rep.Findings) == 0 {
		t.Fatal("no finding about a container whose last start failed")
	}
	f := rep.Findings[0]
	if f.Stage != analyze.StageStart || !strings.Contains(f.Cause, "memory.limit_in_bytes") {
		t.Errorf("finding = %s %s: %s, want the failed start and its message", f.Stage, f.Rule, f.Cause)
	}
}

// A program's line at fatal level is where it exits, whatever its words are about: the
// manager that checks for a node's iSCSI client stops there, at the runtime stage.
func TestAFatalLogLineIsTheProgramsExit(t *testing.T) {
	paste := "### Result\n\n```\nkubectl logs -f longhorn-manager-g4l77 -n longhorn-system\n" +
		`time="2024-09-25T16:09:15Z" level=fatal msg="Error starting manager: Failed environment check, please make sure you have iscsiadm/open-iscsi installed on the host: failed to execute: nsenter [--mount=/host/proc/7920/ns/mnt iscsiadm --version], output , stderr nsenter: failed to execute iscsiadm: No such file or directory\n: exit status 127" func=main.main.DaemonCmd.func3 file="daemon.go:84"` +
		"\n```\n"
	rep, roots := rootsOf(t, paste)
	if !hasRoot(roots, "runtime longhorn-system/longhorn-manager-g4l77: ", "iscsiadm") {
		t.Errorf("roots = %q, want the manager's exit at the runtime stage", roots)
	}
	if f := firstRoot(rep); f == nil || f.Rule != "runtime-crash-exit" {
		t.Errorf("first root = %+v, want runtime-crash-exit", f)
	}
}

// The container a pasted log was printed for is named in the cause when the pod has
// others: "1/2" in its row, and the log of one of them.
func TestTheLoggedContainerOfAPodOfTwoIsNamed(t *testing.T) {
	paste := "Envoy DaemonSet pod is stuck with `CrashLoopBackOff`:\n\n```\n# kubectl -n edge get po\n" +
		"NAME          READY   STATUS             RESTARTS   AGE\n" +
		"envoy-f7482   1/2     CrashLoopBackOff   7          12m\n\n" +
		"# kubectl -n edge logs envoy-f7482 -c shutdown-manager\n" +
		"time=\"2021-04-12T11:11:56Z\" level=info msg=\"started envoy shutdown manager\"\n" +
		"2021/04/12 11:11:56 listen tcp :8090: bind: address already in use\n```\n"
	f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(paste)}))
	if f == nil || f.Rule != "runtime-address-in-use" || !strings.Contains(f.Cause, "shutdown-manager") {
		t.Errorf("first root = %+v, want the address in use, naming the container shutdown-manager", f)
	}
}

// An object a program looks for in one namespace, that the ticket shows in another, is
// said where it is.
func TestAnObjectNotFoundThatIsInAnotherNamespace(t *testing.T) {
	paste := "it is failing. error is:\n\n" +
		"> $ kubectl logs nginx-ingress-controller-274765827-gt5zf\n" +
		"F0216 01:05:47.691687       1 main.go:121] no service with name default/default-http-backend found: services \"default-http-backend\" not found\n\n" +
		"and yet:\n\n" +
		"> $ kubectl describe svc default-http-backend\n" +
		"Name:\t\t\tdefault-http-backend\n" +
		"Namespace:\t\tkube-auth\n" +
		"Selector:\t\tapp=default-http-backend\n" +
		"Type:\t\t\tClusterIP\n" +
		"IP:\t\t\t10.43.198.193\n" +
		"Port:\t\t\t<unset>\t80/TCP\n" +
		"Endpoints:\t\t10.129.176.5:8080\n"
	f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(paste)}))
	if f == nil || !strings.Contains(f.Cause, "Service default-http-backend in namespace kube-auth, not in default") {
		t.Errorf("first root = %+v, want it to say the Service is in kube-auth", f)
	}
}

// A program's fatal line is its exit even beside a table of the ticket's own that says
// "fails".
func TestAFatalLineBesideATicketsTable(t *testing.T) {
	files := map[string][]byte{
		"message.txt": []byte("Every node that came up on 7.2.0-1-default lost cilium-agent:\n\n```\n" +
			"7.2.0-1-default   1.19.4 fails    1.19.7 fails\n" +
			"7.1.8-1-default   1.19.4 ok       1.19.7 ok\n```\n"),
		"logs.txt": []byte("```\n" + `level=fatal msg="failed to probe helper" error="detect support for FnSetRetval for program type CGroupSock: load program: invalid argument" subsys=daemon` + "\n```\n"),
	}
	f := firstRoot(analyzePaste(t, files))
	if f == nil || f.Rule != "runtime-crash-exit" || !strings.Contains(f.Cause, "FnSetRetval") || !strings.Contains(f.Cause, "7.2.0-1-default") {
		t.Errorf("first root = %+v, want the agent's fatal exit, with the kernel the ticket names", f)
	}
}

// A replica that cannot bind its host network port beside the same Deployment's running
// pod of another ReplicaSet on its node: the rolling update met the old pod's port.
func TestAPortHeldByTheOldReplicaOnTheNode(t *testing.T) {
	files := map[string][]byte{
		"logs.txt": []byte("```\npanic: listen tcp4 0.0.0.0:3998: bind: address already in use\n```\n"),
		"pods.txt": []byte("```\n" +
			"dns-controller-5f88fdd576-d8d6m     0/1     CrashLoopBackOff   11         35m   172.16.45.40        ip-172-16-45-40.us-west-2.compute.internal    <none>           <none>\n" +
			"dns-controller-68f76b5848-kdfhm     1/1     Running            0          51m   172.16.45.40        ip-172-16-45-40.us-west-2.compute.internal    <none>           <none>\n```\n"),
	}
	f := firstRoot(analyzePaste(t, files))
	if f == nil || f.Rule != "runtime-address-in-use" || !strings.Contains(f.Cause, "dns-controller-68f76b5848-kdfhm on ip-172-16-45-40") {
		t.Errorf("first root = %+v, want the address in use and the old replica on the node", f)
	}
}

// A ticket that says its failing container is an init container, and shows the error,
// is the init container's failure at the start stage, not a runtime crash.
func TestATicketsInitContainerFailure(t *testing.T) {
	paste := "The `cp` command in the `copyutil` initcontainer returns error code 1 and goes into `init:CrashLoopBackOff` when deployed.\n\n" +
		"copyutil container returns the message \"cp: cannot create regular file '/shared/argocd-util': Text file busy\"\n"
	f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(paste)}))
	if f == nil || f.Rule != "start-init-container-failed" || f.Stage != analyze.StageStart || !strings.Contains(f.Cause, "Text file busy") {
		t.Errorf("first root = %+v, want the init container's failure with its error", f)
	}
}

// A program's last line at fatal level, or log15's lvl=eror, is its exit, beside a
// reporter's sentence that quotes the kubelet; a plugin manager's "prerequisites not
// met" is trouble, not silence.
func TestProgramsLevelsAndRefusals(t *testing.T) {
	for name, c := range map[string]struct{ paste, rule, text string }{
		"fatal": {"the deployment keeps showing up with \"Back-off restarting failed container\".  This happens when nothing else deployed to the cluster.\n" +
			"Here is the last message in the log for the deployment:\n" +
			`time="2019-05-09T14:43:09Z" level=fatal msg="failed to sync cache: timed out waiting for the condition"` + "\n", "runtime-crash-exit", "failed to sync cache"},
		"log15": {"With datasources set the grafana pod crash-loops. The logs show:\n```\n" +
			`t=2020-05-29T18:43:46+0000 lvl=eror msg="Server shutdown" logger=server reason="Service init failed: Datasource provisioning error: read /etc/grafana/provisioning/datasources/datasources.yaml: is a directory"` + "\n```\n", "runtime-crash-exit", "datasources.yaml: is a directory"},
		"not met": {"$ kubectl logs pod/jenkins-0 init\ndownload plugins\nMultiple plugin prerequisites not met:\n" +
			"Plugin git:4.7.1 depends on configuration-as-code:1.51, but there is an older version defined on the top level - configuration-as-code:1.47\n", "", "prerequisites not met"},
	} {
		f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(c.paste)}))
		if f == nil || c.rule != "" && f.Rule != c.rule || !strings.Contains(f.Cause, c.text) {
			t.Errorf("%s: first root = %+v, want %s saying %q", name, f, c.rule, c.text)
		}
	}
}

// "The logs for the init container show the following": the error line below is the
// init container's, however the catalog would place it alone.
func TestTheInitContainersLinesATicketShows(t *testing.T) {
	paste := "When trying to run a simple workflow, the pod is terminating with ` Init:Error`.\n" +
		"The logs for the init container show the following\n```\n" +
		"Error: unknown command \"init\" for \"argoexec\"\nRun 'argoexec --help' for usage.\n```\n"
	f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(paste)}))
	if f == nil || f.Rule != "start-init-container-failed" || !strings.Contains(f.Cause, "argoexec") {
		t.Errorf("first root = %+v, want the init container's failure with its error", f)
	}
}

// The LimitRanger's refusal says which limit, and the LimitRange the ticket shows says
// whose.
func TestTheLimitRangeARefusalComesFrom(t *testing.T) {
	paste := "my project had a `LimitRange` with the following specifications:\n```\n" +
		"apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: core-resource-limits\n  namespace: pipelines\nspec:\n  limits:\n  - min:\n      memory: 6Mi\n    type: Container\n```\n" +
		"and the pod is refused:\n```\n" +
		"pods \"build-pod\" is forbidden: minimum memory usage per Container is 6Mi, but request is 0\n```\n"
	f := firstRoot(analyzePaste(t, map[string][]byte{"ticket.txt": []byte(paste)}))
	if f == nil || f.Rule != "admission-limitrange-violated" || !strings.Contains(f.Cause, "core-resource-limits") {
		t.Errorf("first root = %+v, want the LimitRange's refusal naming it", f)
	}
}

// A message pasted after a pods table and a blank line is read, not dropped as a row that
// is not one.
func TestAParagraphAfterAPodsTableIsRead(t *testing.T) {
	paste := "NAME    READY   STATUS              RESTARTS   AGE\n" +
		"db-0    0/1     ContainerCreating   0          3d14h\n\n" +
		"networkPlugin cni failed to set up pod \"db-0_shop\" network: request ip return 500 route is not ready for pod shop/db-0 provider ovn\n"
	if _, roots := rootsOf(t, paste); !hasRoot(roots, "sandbox ", "route is not ready") {
		t.Errorf("roots = %q, want the sandbox failure the message states", roots)
	}
}

// hasRoot reports whether one of rootsOf's lines starts with prefix and holds text.
func hasRoot(roots []string, prefix, text string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return strings.HasPrefix(r, prefix) && strings.Contains(r, text) })
}
