package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// TestTicketShapes reads tickets the way their writers paste them (a reporter's words, a
// log under the command that printed it, a describe or a table beside it) and checks the
// first root: its rule and stage where they are certain, and the values it must say.
func TestTicketShapes(t *testing.T) {
	cases := []struct {
		name  string
		rule  string
		stage analyze.Stage
		says  []string
		files map[string]string
	}{
		// The one container a ticket shows the log of, for a pod its sentence puts "in
		// an `Init:CrashLoopBackOff` state", is the failing init container, though the
		// pod the import builds lists it among its containers; its Java exception says
		// what on the line after its colon, past the stack frames the log ends with.
		{name: "logged init container of a pod in Init:CrashLoopBackOff", rule: "start-init-container-failed", stage: analyze.StageStart,
			says: []string{"configuration-as-code:1.54", "jenkins-0"},
			files: map[string]string{"ticket.txt": "The init-container of the main pod does produce an error on start-up, and leads to an `Init:CrashLoopBackOff` state.\n\n" +
				"```bash\n$ kubectl logs jenkins-0 -c init\n" +
				"Will install new plugin workflow-api 1106.v6a04bac22f47\n" +
				"io.jenkins.tools.pluginmanager.impl.AggregatePluginPrerequisitesNotMetException: Multiple plugin prerequisites not met:\n" +
				"Plugin git:4.10.0 (via credentials:1055.v1346ba467ba1) depends on configuration-as-code:1.55, but there is an older version defined on the top level - configuration-as-code:1.54\n" +
				"\tat io.jenkins.tools.pluginmanager.impl.PluginManager.start(PluginManager.java:222)\n" +
				"\tat io.jenkins.tools.pluginmanager.cli.Main.main(Main.java:70)\n```\n"}},
		// A container that runs again after a run the runtime could not start, with
		// nothing that shows it ready, is not "No finding": the failed start is all the
		// evidence says.
		{name: "failed start before a run", stage: analyze.StageStart, says: []string{"memory.limit_in_bytes"},
			files: map[string]string{"ticket.txt": "From describe pod what I found is :\n```\n" +
				"    State:          Running\n" +
				"      Started:      Mon, 01 Apr 2019 20:29:10 +0000\n" +
				"    Last State:     Terminated\n" +
				"      Reason:       ContainerCannotRun\n" +
				"      Message:      OCI runtime create failed: container_linux.go:348: starting container process caused \"process_linux.go:402: container init caused \\\"process_linux.go:367: setting cgroup config for procHooks process caused \\\\\\\"failed to write 10485760 to memory.limit_in_bytes: device or resource busy\\\\\\\"\\\"\": unknown\n" +
				"      Exit Code:    128\n```\n"}},
		// A program's line at fatal level is where it exits, whatever its words are
		// about: the manager that checks for a node's iSCSI client stops there.
		{name: "fatal line is the program's exit", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"iscsiadm", "longhorn-manager-g4l77"},
			files: map[string]string{"ticket.txt": "### Result\n\n```\nkubectl logs -f longhorn-manager-g4l77 -n longhorn-system\n" +
				`time="2024-09-25T16:09:15Z" level=fatal msg="Error starting manager: Failed environment check, please make sure you have iscsiadm/open-iscsi installed on the host: failed to execute: nsenter [--mount=/host/proc/7920/ns/mnt iscsiadm --version], output , stderr nsenter: failed to execute iscsiadm: No such file or directory\n: exit status 127" func=main.main.DaemonCmd.func3 file="daemon.go:84"` +
				"\n```\n"}},
		// A program's fatal line is its exit even beside a table of the ticket's own
		// that says "fails"; the kernel the ticket names by its release is said.
		{name: "fatal line beside the ticket's table", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"FnSetRetval", "7.2.0-1-default"},
			files: map[string]string{
				"message.txt": "Every node that came up on 7.2.0-1-default lost cilium-agent:\n\n```\n" +
					"7.2.0-1-default   1.19.4 fails    1.19.7 fails\n" +
					"7.1.8-1-default   1.19.4 ok       1.19.7 ok\n```\n",
				"logs.txt": "```\n" + `level=fatal msg="failed to probe helper" error="detect support for FnSetRetval for program type CGroupSock: load program: invalid argument" subsys=daemon` + "\n```\n",
			}},
		// The container a pasted log was printed for is named in the cause when the pod
		// has others: "1/2" in its row, and the log of one of them.
		{name: "logged container of a pod of two", rule: "runtime-address-in-use", stage: analyze.StageRuntime, says: []string{"shutdown-manager"},
			files: map[string]string{"ticket.txt": "Envoy DaemonSet pod is stuck with `CrashLoopBackOff`:\n\n```\n# kubectl -n edge get po\n" +
				"NAME          READY   STATUS             RESTARTS   AGE\n" +
				"envoy-f7482   1/2     CrashLoopBackOff   7          12m\n\n" +
				"# kubectl -n edge logs envoy-f7482 -c shutdown-manager\n" +
				"time=\"2021-04-12T11:11:56Z\" level=info msg=\"started envoy shutdown manager\"\n" +
				"2021/04/12 11:11:56 listen tcp :8090: bind: address already in use\n```\n"}},
		// A replica that cannot bind its host network port beside the same Deployment's
		// running pod of another ReplicaSet on its node: the rolling update met the old
		// pod's port.
		{name: "port held by the old replica on the node", rule: "runtime-address-in-use", stage: analyze.StageRuntime, says: []string{"dns-controller-68f76b5848-kdfhm on ip-172-16-45-40"},
			files: map[string]string{
				"logs.txt": "```\npanic: listen tcp4 0.0.0.0:3998: bind: address already in use\n```\n",
				"pods.txt": "```\n" +
					"dns-controller-5f88fdd576-d8d6m     0/1     CrashLoopBackOff   11         35m   172.16.45.40        ip-172-16-45-40.us-west-2.compute.internal    <none>           <none>\n" +
					"dns-controller-68f76b5848-kdfhm     1/1     Running            0          51m   172.16.45.40        ip-172-16-45-40.us-west-2.compute.internal    <none>           <none>\n```\n",
			}},
		// An object a program looks for in one namespace, that the ticket shows in
		// another, is said where it is.
		{name: "object not found, shown in another namespace", says: []string{"Service default-http-backend in namespace kube-auth, not in default"},
			files: map[string]string{"ticket.txt": "it is failing. error is:\n\n" +
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
				"Endpoints:\t\t10.129.176.5:8080\n"}},
		// A ticket that says its failing container is an init container, and shows the
		// error, is the init container's failure at the start stage, not a runtime crash.
		{name: "init container the ticket names", rule: "start-init-container-failed", stage: analyze.StageStart, says: []string{"Text file busy"},
			files: map[string]string{"ticket.txt": "The `cp` command in the `copyutil` initcontainer returns error code 1 and goes into `init:CrashLoopBackOff` when deployed.\n\n" +
				"copyutil container returns the message \"cp: cannot create regular file '/shared/argocd-util': Text file busy\"\n"}},
		// "The logs for the init container show the following": cobra's "unknown
		// command" is the binary's own refusal of what it was told to run (the image's
		// argoexec and the controller's release differ), which names the cause better
		// than the init container's failure would; a line no rule or signature knows is
		// the init container's (the case above).
		{name: "init container's lines the ticket shows", rule: "runtime-flag-not-defined", stage: analyze.StageRuntime, says: []string{"argoexec", "init"},
			files: map[string]string{"ticket.txt": "When trying to run a simple workflow, the pod is terminating with ` Init:Error`.\n" +
				"The logs for the init container show the following\n```\n" +
				"Error: unknown command \"init\" for \"argoexec\"\nRun 'argoexec --help' for usage.\n```\n"}},
		// The LimitRanger's refusal says which limit, and the LimitRange the ticket shows
		// says whose.
		{name: "LimitRange a refusal comes from", rule: "admission-limitrange-violated", stage: analyze.StageAdmission, says: []string{"core-resource-limits"},
			files: map[string]string{"ticket.txt": "my project had a `LimitRange` with the following specifications:\n```\n" +
				"apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: core-resource-limits\n  namespace: pipelines\nspec:\n  limits:\n  - min:\n      memory: 6Mi\n    type: Container\n```\n" +
				"and the pod is refused:\n```\n" +
				"pods \"build-pod\" is forbidden: minimum memory usage per Container is 6Mi, but request is 0\n```\n"}},
		// A program's last line at fatal level is its exit beside a reporter's sentence
		// that quotes the kubelet.
		{name: "logrus fatal beside the kubelet's words", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"failed to sync cache"},
			files: map[string]string{"ticket.txt": "the deployment keeps showing up with \"Back-off restarting failed container\".  This happens when nothing else deployed to the cluster.\n" +
				"Here is the last message in the log for the deployment:\n" +
				`time="2019-05-09T14:43:09Z" level=fatal msg="failed to sync cache: timed out waiting for the condition"` + "\n"}},
		// log15's lvl=eror is an error level.
		{name: "log15 error level", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"datasources.yaml: is a directory"},
			files: map[string]string{"ticket.txt": "With datasources set the grafana pod crash-loops. The logs show:\n```\n" +
				`t=2020-05-29T18:43:46+0000 lvl=eror msg="Server shutdown" logger=server reason="Service init failed: Datasource provisioning error: read /etc/grafana/provisioning/datasources/datasources.yaml: is a directory"` + "\n```\n"}},
		// A plugin manager's "prerequisites not met" is trouble, not silence.
		{name: "prerequisites not met", says: []string{"prerequisites not met"},
			files: map[string]string{"ticket.txt": "$ kubectl logs pod/jenkins-0 init\ndownload plugins\nMultiple plugin prerequisites not met:\n" +
				"Plugin git:4.7.1 depends on configuration-as-code:1.51, but there is an older version defined on the top level - configuration-as-code:1.47\n"}},
		// fluentd's "TIME +0000 [error]:" lines are a program's log, not a node
		// journal, and their words ("failed to read data from plugin storage file")
		// only begin like a CNI plugin's short message: the crash is the runtime's.
		{name: "fluentd error lines under a crash sentence", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"/var/log/td-agent-pos.json"},
			files: map[string]string{"ticket.txt": "Our log shipper pod keeps crashing and shows the following error:\n\n" +
				"2021-03-04 10:11:12 +0000 [info]: parsing config file is succeeded path=\"/fluentd/etc/fluent.conf\"\n" +
				"2021-03-04 10:11:12 +0000 [error]: [in_tail_containers] failed to read data from plugin storage file path=\"/var/log/td-agent-pos.json\" error_class=Fluent::ConfigError error=\"Invalid contents (not object) in plugin storage file: '/var/log/td-agent-pos.json'\"\n"}},
		// A `kubectl get events` row without its header: the reason column before the
		// hook's message.
		{name: "headerless event row of a failed preStop hook", rule: "termination-prestop-hook-failed", stage: analyze.StageTermination, says: []string{"Authentication failure"},
			files: map[string]string{"events.txt": "0s          Normal    Killing                  pod/pg-0    Stopping container pg\n" +
				"0s          Warning   FailedPreStopHook        pod/pg-0    Exec lifecycle hook ([/bin/sh -c su postgres -c 'pg_ctl stop']) for Container \"pg\" in Pod \"pg-0_db(07d50216-a65f-4bca-823a-a9b055c74529)\" failed - error: command '/bin/sh -c su postgres -c 'pg_ctl stop'' exited with 1: Password: su: Authentication failure\n"}},
		// A sentence that says a Secret is not found is no "pod %s not found" with a
		// run of the sentence for its name, nor a claim the scheduler misses.
		{name: "a missing Secret in a sentence is config", stage: analyze.StageConfig,
			files: map[string]string{"ticket.txt": "When a pod is launched to run a task it is stuck waiting with a CreateContainerConfigError and message: secret \"worker-envs\" not found. I am using the default pod template of the chart.\n"}},
		// A sentence that only announces the paste below it is no trouble of its own
		// beside what the paste says: the runtime's sandbox failure is the root.
		{name: "a sentence announcing the paste", stage: analyze.StageSandbox, says: []string{"cannot create sandbox"},
			files: map[string]string{"ticket.txt": "Pod creation fails with:\n\n```\n" +
				"W0222 17:53:26.864233    2953 util.go:64] FATAL ERROR: creating container: cannot create sandbox: cannot create sandbox process: starting sandbox: fork/exec /proc/self/exe: no space left on device\n" +
				"W0222 17:53:26.870159    2953 main.go:261] Failure to execute command, err: 1\n```\n"}},
		// A Java program's first error under its time and level says why; the summary it
		// logs after ("Failed to build bookie server") and the exception's frames do not.
		{name: "logback error before the summary", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"is not stored in metadata store"},
			files: map[string]string{"ticket.txt": "After restarting the pod it is always in CrashLoopBackOff:\n```\n" +
				"09:15:54.921 [main] DEBUG org.apache.zookeeper.ZooWorker - Stopped executing getData after 1 attempts.\n" +
				"09:15:54.978 [main] ERROR org.example.store.CookieValidation - Cookie for this node is not stored in metadata store. Node failing to come up\n" +
				"09:15:54.979 [main] ERROR org.example.server.Main - Failed to build storage server\n" +
				"org.example.store.InvalidCookieException:\n" +
				"        at org.example.store.CookieValidation.check(CookieValidation.java:122)\n```\n"}},
		// A Go panic the kubelet quotes after "Readiness probe failed:" is the probe
		// command's, and the probe is what fails, even in a reporter's sentence.
		{name: "a panic a readiness probe printed", rule: "probe-readiness-failing", stage: analyze.StageProbe, says: []string{"is forbidden"},
			files: map[string]string{"ticket.txt": "With the new init image I saw this error\n\n" +
				"`Readiness probe failed: panic: secrets \"db-config\" is forbidden: User \"appdb\" cannot get resource \"secrets\" in API group \"\"`\n"}},
		// A manifest's initContainers key says the pod has init containers, not that
		// the failing one is: the program's fatal line stays the app's exit.
		{name: "an initContainers key is no init failure", rule: "runtime-crash-exit", stage: analyze.StageRuntime,
			files: map[string]string{"ticket.txt": "The pod crash-loops:\n```\n" +
				`time="2024-01-02T10:00:00Z" level=fatal msg="cannot open database: open /data/app.db: no such file or directory"` + "\n```\n" +
				"The manifest:\n```\n      initContainers:\n        - name: migrate\n          image: app:1.2\n```\n"}},
		// A log that runs, then ends at an error its program wrote at its error level:
		// those are its last words, the reason it stops. One error line alone is a
		// quote and stays the floor's.
		{name: "a log's last words at error level", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"already exists"},
			files: map[string]string{"logs.txt": "```\n" +
				`time="2018-10-19T11:02:19Z" level=info msg="Go Version: go1.11"` + "\n" +
				`time="2018-10-19T11:02:19Z" level=info msg="operator namespace: auth"` + "\n" +
				`time="2018-10-19T11:02:19Z" level=info msg="Connected to the identity server"` + "\n" +
				`time="2018-10-19T11:02:19Z" level=error msg="failed to create the operator handler: storing the operator config in a secret: secrets \"op-config\" already exists"` + "\n```\n"}},
		// An exception's report is a program's line however much it reads like a
		// sentence ("… from '…': Unable to parse … to a broker endpoint"), and "I get
		// below error on startup" says the container dies as it starts.
		{name: "an exception under a sentence about startup", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"IllegalArgumentException", "fails as it starts"},
			files: map[string]string{"ticket.txt": "I want to expose the advertised listeners with the pod IP, but I get below error on broker startup logs.\n\n```\n" +
				"java.lang.IllegalArgumentException: Error creating broker listeners from 'PLAINTEXT://$POD_IP:9092': Unable to parse PLAINTEXT://$POD_IP:9092 to a broker endpoint\n```\n"}},
		// An exception's report that says the program failed to start is its exit,
		// its tag and class before the words; the class alone with its stack frames
		// after it says less than the error logged before it.
		{name: "an exception that says the program failed to start", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"database is locked"},
			files: map[string]string{"logs.txt": "[v0.4.6.1969] App.Core.Datastore.CorruptDatabaseException: App failed to start: Database file: code = Busy (5), message = System.Data.SQLite.SQLiteException (0x800007AF): database is locked\n" +
				"database is locked\n   at System.Data.SQLite.SQLite3.Step(SQLiteStatement stmt)\n   at System.Data.SQLite.SQLiteDataReader.NextResult()\n"}},
		{name: "an exception's bare class after the error that says why", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"not stored in metadata store"},
			files: map[string]string{"ticket.txt": "After restarting the pod it is always in the CrashLoopBackOff state:\n```\n" +
				"09:15:54.978 [main] ERROR org.example.store.CookieValidation - Cookie for this member is not stored in metadata store. Member failing to come up\n" +
				"09:15:54.979 [main] ERROR org.example.server.Main - Failed to build member server\n" +
				"org.example.store.MemberException$InvalidCookieException:\n" +
				"        at org.example.store.CookieValidation.checkCookies(CookieValidation.java:122)\n" +
				"        at org.example.server.Main.buildMemberServer(Main.java:422)\n```\n"}},
		// A program's error a reporter's sentence quotes in a code span is the
		// program's line, and its words, not the sentence's, are quoted.
		{name: "an error quoted inline in a sentence", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"Unknown container runtime"},
			files: map[string]string{"ticket.txt": "When run on the containerd runtime, the controller pods enter a crash loop due to `|ERRO|CTL|main.main: Failed to initialize - error=Unknown container runtime`. The other pods start.\n"}},
		{name: "an error a sentence names before its code span", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"cookie_secret must be 16, 24, or 32 bytes"},
			files: map[string]string{"ticket.txt": "The proxy pod failed to stand up because of this error `cookie_secret must be 16, 24, or 32 bytes to create an AES cipher when pass_access_token == true or cookie_refresh != 0, but is 15 bytes.`\n"}},
		// zerolog's console writer: "TIME ERR …" is its error level, the log's last words.
		{name: "zerolog's ERR as a log's last words", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"not a directory"},
			files: map[string]string{"logs.txt": "2024-05-15T10:27:57.901Z INF Starting cost model\n" +
				"2024-05-15T10:27:58.010Z INF Loading pricing configuration\n" +
				"2024-05-15T10:27:58.127Z ERR error accessing cloud provider configuration: stat /tmp/custom-config/default.json: not a directory\n"}},
		// A script's log that ends in a plain complaint after its info lines: its last
		// words, not the retries logged at info before them; the reporter's bullet
		// list of what fails is theirs.
		{name: "a script's last words after its info lines", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"should be an emptyDir mount"},
			files: map[string]string{
				"logs.txt": "[Wed Jan 27 13:04:45 UTC 2021] [INFO] [/usr/local/bin/startup.sh] Starting supervisor\n" +
					"[Wed Jan 27 13:04:45 UTC 2021] [INFO] [/usr/local/bin/startup.sh] Process dockerd is not running yet. Retrying in 1 seconds\n" +
					"[Wed Jan 27 13:04:47 UTC 2021] [INFO] [/usr/local/bin/startup.sh] dockerd is running\n" +
					"/work should be an emptyDir mount. Please fix the pod spec.\n",
				"message.txt": "the latest runner images keep crashing pods:\n\n- example/runner:v2.274.2 (OK)\n- example/runner:v2.275.1 or latest (FAILS)\n"}},
		// Ruby's frame before its message ("…/definition.rb:481:in `materialize': Could not
		// find …") is the program's line under a sentence about its crash loop.
		{name: "a Ruby exception under a sentence about a crash loop", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"Could not find rspec-3.10.0"},
			files: map[string]string{"ticket.txt": "We made some upgrades to the Gemfile and now have crash looping pods:\n\n```\nkubectl -n reports logs reports-65786666d9-8kb99\n\n" +
				"/usr/local/bundle/gems/bundler-2.3.7/lib/bundler/definition.rb:481:in `materialize': Could not find rspec-3.10.0, pry-byebug-3.9.0 in any of the sources (Bundler::GemNotFound)\n```\n"}},
		// A command a reporter names as the label of its output on the same line, the
		// output set off as inline code with " - " between its columns: the event is
		// read, not dropped with the command.
		{name: "output after its command on one line", rule: "start-poststart-hook-failed", stage: analyze.StageStart, says: []string{"app", "register.sh: not found"},
			files: map[string]string{"ticket.txt": "The pod restarts all the time.\n\n" +
				"kubectl describe pod: `Warning - FailedPostStartHook - 3s - kubelet - Exec lifecycle hook ([/bin/sh -c /opt/register.sh]) for Container \"app\" in Pod \"app-0_shop(6f1c2a9e-0d4b-4c55-9b7e-2a1d3c4b5e6f)\" failed - error: command '/bin/sh -c /opt/register.sh' exited with 127: , message: \"/bin/sh: /opt/register.sh: not found\\n\"`\n"}},
		// A message a terminal UI's pane wrapped, copied from inside the pane: its
		// edges are taken off and the message reads on.
		{name: "message wrapped in a pane", rule: "start-poststart-hook-failed", stage: analyze.StageStart, says: []string{"Unknown option --log-global-size-max"},
			files: map[string]string{"ticket.txt": "```\nWarning  FailedPostStartHook  2m  kubelet  Exec lifecycle hook ([/init.sh]) for Container \"agent\" in Pod \"agent-x2_kube-system(0b1c)\" failed - error: rpc error: code = Unknown desc = command error: EOF, │\n" +
				"│  stdout: conmon: option parsing failed: Unknown option --log-global-size-max\n```\n"}},
		// A probe's message pasted under a heading, its container named only by the
		// reporter's sentence: the heading is no trouble, and the cause names the
		// container.
		{name: "probe message under a heading", rule: "probe-readiness-failing", stage: analyze.StageProbe, says: []string{"of container billing-api"},
			files: map[string]string{"ticket.txt": "## Describe your Issue\nThe pod never becomes ready because the readiness probe of the billing-api container keeps failing.\n\n### Logs and Errors\n\n" +
				"```\nReadiness probe failed: Get \"http://10.42.0.17:8080/health\": dial tcp 10.42.0.17:8080: connect: connection refused\n```\n"}},
		// What `docker run` prints is the container's program's output, not the CLI's:
		// a reproduction of the pod's failure outside the cluster reads as its log.
		{name: "a docker run reproduction", stage: analyze.StageRuntime, says: []string{"/opt/app/var/cache"},
			files: map[string]string{"ticket.txt": "Running the image as the pod does:\n\n```\n$ docker run --rm --user 1000650000 example/app:2.4 serve\n" +
				"Preparing runtime directories\nUnable to create /opt/app/var/cache/sessions: No such file or directory at /opt/app/lib/Setup.pm line 88.\nBEGIN failed--compilation aborted at /opt/app/bin/serve line 5.\n```\n"}},
		// A Docker json-file log, one of its lines cut by a terminal inside the JSON
		// string: read as the container's lines, the cut line whole, not left out as
		// broken JSON.
		{name: "a json-file log with a cut line", stage: analyze.StageRuntime, says: []string{"10.0.3.7:5432: connect: connection refused"},
			files: map[string]string{"app.log": `{"log":"time=\"2024-01-02T03:04:05Z\" level=info msg=\"starting\"\n","stream":"stdout","time":"2024-01-02T03:04:05.0Z"}` + "\n" +
				`{"log":"time=\"2024-01-02T03:04:05Z\" level=fatal msg=\"failed to connect to database: dial tcp 10.0.3.7:5432: connect: connection re` + "\n" +
				`fused\"\n","stream":"stderr","time":"2024-01-02T03:04:05.1Z"}` + "\n"}},
		// A fatal klog line inside an inline code span the reporter opened on its line
		// and closed lines later: the program's exit, read past the span's marks.
		{name: "a fatal line in a code span over lines", rule: "runtime-crash-exit", stage: analyze.StageRuntime, says: []string{"UnauthorizedOperation"},
			files: map[string]string{"ticket.txt": "The autoscaler pod restarts with:\n\n`F0302 10:11:12.123456       1 cloud_provider.go:386] Failed to generate instance types: UnauthorizedOperation: You are not authorized to perform this operation.\n\tstatus code: 403, request id: 1c2d3e4f\n`\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{}
			for name, text := range c.files {
				files[name] = []byte(text)
			}
			f := firstRoot(analyzePaste(t, files))
			switch {
			case f == nil:
				t.Fatal("no root")
			case c.rule != "" && f.Rule != c.rule, c.stage != "" && f.Stage != c.stage:
				t.Errorf("first root is %s at %s, want %s at %s: %s", f.Rule, f.Stage, c.rule, c.stage, f.Cause)
			}
			for _, v := range c.says {
				if !strings.Contains(f.Cause, v) {
					t.Errorf("first root's cause does not say %q: %s", v, f.Cause)
				}
			}
		})
	}
}
