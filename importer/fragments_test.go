package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// Rows as each kubectl generation printed them (k8s.io/kubectl describe and get
// printers; kubernetes v1.5 pkg/kubectl/resource_printer.go for the old columns), without
// their headers.
func TestHeaderlessEventRows(t *testing.T) {
	tests := []struct {
		name, line                     string
		typ, reason, kind, obj, ns, fp string
		msg, source                    string
		count                          int32
		known                          bool
	}{
		{name: "current", line: "3m39s       Warning   Failed    pod/app   Error: couldn't find key password in Secret shop/db",
			typ: "Warning", reason: "Failed", kind: "Pod", obj: "app", msg: "Error: couldn't find key password in Secret shop/db", count: 1, known: true},
		{name: "all namespaces", line: "shop        12s         Normal    Scheduled   pod/web-1   Successfully assigned shop/web-1 to node-1",
			typ: "Normal", reason: "Scheduled", kind: "Pod", obj: "web-1", ns: "shop", msg: "Successfully assigned shop/web-1 to node-1", count: 1, known: true},
		{name: "old get events", line: "1m        1m        3         web-1     Pod       spec.containers{app}   Warning   Failed    {kubelet node-1}   Failed to pull image \"nginx:nope\": not found",
			typ: "Warning", reason: "Failed", kind: "Pod", obj: "web-1", fp: "spec.containers{app}", source: "kubelet", msg: "Failed to pull image \"nginx:nope\": not found", count: 3, known: true},
		{name: "old get events without subobject", line: "5s        5s        1         web-1     Pod                 Warning   FailedScheduling   {default-scheduler }   No nodes are available that match all of the following predicates:: Insufficient cpu (1).",
			typ: "Warning", reason: "FailedScheduling", kind: "Pod", obj: "web-1", source: "default-scheduler", msg: "No nodes are available that match all of the following predicates:: Insufficient cpu (1).", count: 1, known: true},
		{name: "describe", line: "  Warning  BackOff    2m (x21 over 133m)  kubelet  Back-off restarting failed container app in pod web-1_shop(0c6d)",
			typ: "Warning", reason: "BackOff", source: "kubelet", msg: "Back-off restarting failed container app in pod web-1_shop(0c6d)", count: 21},
		{name: "describe invalid age", line: "  Normal   Pulled     <invalid>           kubelet, node-1  Container image \"nginx\" already present on machine",
			typ: "Normal", reason: "Pulled", source: "kubelet, node-1", msg: "Container image \"nginx\" already present on machine", count: 1},
		{name: "describe combined", line: "  Warning  FailedCreatePodSandBox  1s (x3 over 10s)  kubelet  (combined from similar events): Failed to create pod sandbox: rpc error: code = Unknown",
			typ: "Warning", reason: "FailedCreatePodSandBox", source: "kubelet", msg: "Failed to create pod sandbox: rpc error: code = Unknown", count: 3},
		{name: "kubectl events", line: "12s (x13 over 2m1s)     Warning   Unhealthy               Pod/api-64d4cb6467-mzcr2                             (combined from similar events): Readiness probe errored: exec: \"wget\": executable file not found in $PATH",
			typ: "Warning", reason: "Unhealthy", kind: "Pod", obj: "api-64d4cb6467-mzcr2", msg: "Readiness probe errored: exec: \"wget\": executable file not found in $PATH", count: 13, known: true},
		{name: "describe from its reason", line: "FailedScheduling   2m21s (x42 over 60m)  default-scheduler  0/3 nodes are available: 3 node(s) had untolerated taint {gpu: present}",
			typ: "Warning", reason: "FailedScheduling", source: "default-scheduler", msg: "0/3 nodes are available: 3 node(s) had untolerated taint {gpu: present}", count: 42},
		{name: "describe from its reason, kubelet's node", line: "Pulled     3m    kubelet, node-1  Container image \"nginx\" already present on machine",
			typ: "Normal", reason: "Pulled", source: "kubelet, node-1", msg: "Container image \"nginx\" already present on machine", count: 1},
		{name: "1.3 describe", line: "  1m\t\t1m\t\t1\t{kubelet node-1}\tspec.containers{app}\tWarning\t\tFailed\t\tFailed to pull image \"x\": not found",
			typ: "Warning", reason: "Failed", fp: "spec.containers{app}", source: "kubelet", msg: "Failed to pull image \"x\": not found", count: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, known, _, ok := headerlessEvent(tt.line)
			if !ok {
				t.Fatalf("not read as an event row")
			}
			o := ev.InvolvedObject
			if ev.Type != tt.typ || ev.Reason != tt.reason || o.Kind != tt.kind || o.Name != tt.obj || ev.Namespace != tt.ns ||
				o.FieldPath != tt.fp || ev.Message != tt.msg || ev.Count != tt.count || known != tt.known {
				t.Errorf("got %+v known=%v", ev, known)
			}
			if tt.source != "" && ev.Source.Component != tt.source && ev.Source.Component+", "+ev.Source.Host != tt.source {
				t.Errorf("source %+v, want %q", ev.Source, tt.source)
			}
		})
	}
	for _, line := range []string{
		"customer says it worked yesterday", "NAME   READY   STATUS", "Normal operation resumed at 10:00",
		"web-1   1/1     Running   0          5m",
		"ReadMe   5m   see the notes   below", "CrashLoopBackOff   5m   my-app   it restarts",
	} {
		if _, _, _, ok := headerlessEvent(line); ok {
			t.Errorf("%q read as an event row", line)
		}
	}
}

func TestHeaderlessPodRows(t *testing.T) {
	tests := []struct {
		line, ns, name, node string
		phase                corev1.PodPhase
	}{
		{line: "app    0/1     ImagePullBackOff   0          2m27s   10.213.0.11   podflow-node   <none>           <none>", name: "app", node: "podflow-node"},
		{line: "shop   web-1   1/1   Running   3 (2m ago)   10m", ns: "shop", name: "web-1", phase: corev1.PodRunning},
		{line: "calico-node-mxtr9                             0/1     Init:CrashLoopBackOff", name: "calico-node-mxtr9", phase: corev1.PodPending},
		// Column gaps squeezed to one space by the paste, the row indented.
		{line: "      payments   ledger-0 0/2 Pending 0 41m <none> worker-7 <none> <none>", ns: "payments", name: "ledger-0", node: "worker-7", phase: corev1.PodPending},
		{line: "  web-6d4cf56db6-8xk2p 0/1 CrashLoopBackOff 12 (3m12s ago) 40m", name: "web-6d4cf56db6-8xk2p"},
		// A paste that left out the RESTARTS column: the AGE follows the STATUS.
		{line: "kube-system  coredns-7c9d5b8f4-2v7sc  0/1  Pending  2m30s", ns: "kube-system", name: "coredns-7c9d5b8f4-2v7sc", phase: corev1.PodPending},
	}
	for _, tt := range tests {
		p, _, ok := headerlessPod(tt.line)
		if !ok || p.Namespace != tt.ns || p.Name != tt.name || p.Spec.NodeName != tt.node || p.Status.Phase != tt.phase {
			t.Errorf("%q: %v %+v", tt.line, ok, p)
		}
	}
	// kubectl get pods --show-labels | grep …: the row's last cell is its labels.
	p, _, ok := headerlessPod("web-75769fb64-vr97f    1/1     Running   1          2m32s   app.kubernetes.io/name=web,pod-template-hash=75769fb64")
	if !ok || p.Name != "web-75769fb64-vr97f" || p.Labels["app.kubernetes.io/name"] != "web" || p.Labels["pod-template-hash"] != "75769fb64" || len(p.Labels) != 2 {
		t.Errorf("--show-labels row: %v %+v", ok, p.ObjectMeta)
	}
	for _, prose := range []string{"the pod web-1 is 0/1 ready", "we saw 1/2 pods Running 3 times 5m",
		"  web-1 0/1 Pending since the node went away"} {
		if _, _, ok := headerlessPod(prose); ok {
			t.Errorf("prose read as a pod row: %q", prose)
		}
	}
}

func podsIn(t *testing.T, b *bundle.Bundle, ns string) map[string]corev1.Pod {
	t.Helper()
	out := map[string]corev1.Pod{}
	for _, raw := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, ns)) {
		var p corev1.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		out[p.Name] = p
	}
	return out
}

// TestFragmentsOfOnePod reads a ticket that holds only pieces: event rows without their
// header, the State block of a describe, a journal without prefix host and prose.
func TestFragmentsOfOnePod(t *testing.T) {
	ticket := strings.Join([]string{
		"Hi, our pod keeps crashing since the upgrade.",
		"",
		"LAST SEEN   TYPE      REASON    OBJECT      MESSAGE",
		"",
		"2m          Warning   BackOff   pod/web-1   Back-off restarting failed container app in pod web-1_shop(0c6d)",
		"",
		"    State:          Waiting",
		"      Reason:       CrashLoopBackOff",
		"    Last State:     Terminated",
		"      Reason:       Error",
		"      Exit Code:    137",
		"    Ready:          False",
		"    Restart Count:  7",
		"",
		"E0831 04:12:41.868086    3570 pod_workers.go:1301] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\"\" pod=\"shop/web-1\"",
	}, "\r\n")
	b, rep := importDir(t, map[string][]byte{"ticket": []byte(ticket)}, FormatAuto)
	if Format(rep.Format) != FormatLoose {
		t.Fatalf("format %s", rep.Format)
	}
	pods := podsIn(t, b, "default")
	p, ok := pods["web-1"]
	if !ok {
		t.Fatalf("no pod web-1 in %v", pods)
	}
	if got := p.Annotations[bundle.PartialAnnotation]; got != "namespace,spec" {
		t.Errorf("partial = %q", got)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("statuses %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.RestartCount != 7 ||
		cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("status %+v", cs)
	}
	f := rep.File("ticket")
	var whats []string
	for _, bl := range f.Blocks {
		whats = append(whats, bl.What)
	}
	if len(f.Blocks) < 4 || f.Blocks[0].What != "text" || f.Blocks[0].First != 1 {
		t.Errorf("blocks %+v", f.Blocks)
	}
	// The bare klog line names no node: it is kept as a journal fragment at its line.
	var frag string
	for _, bl := range f.Blocks {
		if strings.HasPrefix(bl.Fragment, bundle.FragmentsDir+"/"+bundle.FragmentJournal) {
			frag = bl.Fragment
		}
	}
	o, ok := rep.Origins[frag]
	if !ok || o.Path != "ticket" || o.LineOffset != 14 {
		t.Fatalf("journal fragment %q origin %+v (blocks %q)", frag, o, whats)
	}
	data, _ := b.ReadFile(frag)
	if !strings.HasPrefix(string(data), "E0831 04:12:41.868086") {
		t.Errorf("fragment %q", data)
	}
	// Prose stays available as text, cited at line 1.
	if o := rep.Origins[bundle.FragmentPath(bundle.FragmentText, "ticket-L1.txt")]; o.Path != "ticket" || o.LineOffset != 0 {
		t.Errorf("text origin %+v", o)
	}
}

// TestDescribeFragmentKeepsBlankCommandLine reads a describe pasted from its Containers
// section on, whose command's last argument ends in a newline: describe prints the empty
// line after it, and the paste kept it without its indentation. The container's state
// under that line belongs to the same container.
func TestDescribeFragmentKeepsBlankCommandLine(t *testing.T) {
	paste := strings.Join([]string{
		"Containers:",
		"  migrate:",
		"    Container ID:  containerd://5e0c",
		"    Image:         example.com/tools/migrate:2.1",
		"    Command:",
		"      /bin/bash",
		"      -c",
		"      migrate up \\",
		"        --all",
		"",
		"    State:          Terminated",
		"      Reason:       StartError",
		"      Message:      failed to start: exec: \"/bin/bash\": stat /bin/bash: no such file or directory",
		"      Exit Code:    128",
		"    Ready:          False",
		"    Restart Count:  0",
	}, "\n")
	b, _ := importDir(t, map[string][]byte{"describe.txt": []byte(paste)}, FormatLoose)
	pods := podsIn(t, b, "default")
	if len(pods) != 1 {
		t.Fatalf("pods %v, want the one pod of the fragment", pods)
	}
	for _, p := range pods {
		if len(p.Status.ContainerStatuses) != 1 {
			t.Fatalf("statuses %+v", p.Status.ContainerStatuses)
		}
		cs := p.Status.ContainerStatuses[0]
		if cs.Name != "migrate" || cs.State.Terminated == nil || cs.State.Terminated.Reason != "StartError" ||
			cs.State.Terminated.ExitCode != 128 {
			t.Errorf("status %+v, want migrate terminated with StartError, exit code 128", cs)
		}
	}
}

// TestJournalNodeFromHost places journal lines at the node their prefix names.
func TestJournalNodeFromHost(t *testing.T) {
	j := "Apr 05 05:33:40 master kubelet[4759]: F0405 05:33:40.511159    4759 server.go:274] failed to run Kubelet: misconfiguration\n" +
		"Apr 05 05:33:40 master systemd[1]: kubelet.service: main process exited, code=exited, status=255/n/a\n"
	b, rep := importDir(t, map[string][]byte{"journal.txt": []byte(j)}, FormatAuto)
	out := bundle.NodePath("master", bundle.NodeKubeletLog)
	if data, err := b.ReadFile(out); err != nil || string(data) != j {
		t.Fatalf("%s: %q %v", out, data, err)
	}
	if o := rep.Origins[out]; o.Path != "journal.txt" || o.LineOffset != 0 {
		t.Errorf("origin %+v", o)
	}
}

// TestCapturedPastesWithoutHeaders drops every table header and prompt line from the
// captured pastes: the pods and events they show must still be read.
func TestCapturedPastesWithoutHeaders(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "captured", "*", "ticket.txt"))
	if len(dirs) == 0 {
		t.Fatal("no captured pastes")
	}
	for _, p := range dirs {
		scenario := filepath.Base(filepath.Dir(p))
		t.Run(scenario, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, l := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "NAME ") || strings.HasPrefix(l, "LAST SEEN") ||
					strings.HasPrefix(l, "CONTAINER ") || strings.HasPrefix(l, "POD ID") {
					continue
				}
				kept = append(kept, l)
			}
			full, _ := importDir(t, map[string][]byte{"ticket.txt": data}, FormatLoose)
			bare, rep := importDir(t, map[string][]byte{"ticket.txt": []byte(strings.Join(kept, "\n"))}, FormatLoose)
			want := podsIn(t, full, scenario)
			got := podsIn(t, bare, scenario)
			for name := range want {
				if _, ok := got[name]; !ok {
					t.Errorf("pod %s lost without headers (report %+v)", name, rep.File("ticket.txt").Blocks)
				}
			}
			ne := func(b *bundle.Bundle) int {
				return len(readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, scenario)))
			}
			if ne(bare) < ne(full) {
				t.Errorf("%d events without headers, %d with", ne(bare), ne(full))
			}
		})
	}
}

// TestRowsTakeTheNamespaceTheFileShows: event rows without a namespace belong to the
// pod of that name a describe in the same file shows.
func TestRowsTakeTheNamespaceTheFileShows(t *testing.T) {
	ticket := "Name:         web-1\nNamespace:    shop\nStatus:       Pending\n\n" +
		"5m          Warning   FailedScheduling   pod/web-1   0/3 nodes are available: 3 Insufficient cpu.\n"
	b, _ := importDir(t, map[string][]byte{"t.txt": []byte(ticket)}, FormatAuto)
	evs := readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, "shop"))
	if len(evs) != 1 || !strings.Contains(string(evs[0]), "Insufficient cpu") {
		t.Errorf("events in shop: %s", evs)
	}
	if p, ok := podsIn(t, b, "shop")["web-1"]; !ok || p.Annotations[bundle.PartialAnnotation] != "" {
		t.Errorf("pod %+v", p)
	}
}

// TestYAMLStatusFragment reads a container's state pasted from -o yaml alone.
func TestYAMLStatusFragment(t *testing.T) {
	paste := "state:\n  waiting:\n    message: 'container has runAsNonRoot and image will run as root'\n    reason: CreateContainerConfigError\n"
	b, rep := importDir(t, map[string][]byte{"pod-status.yaml": []byte(paste)}, FormatLoose)
	pods := podsIn(t, b, "default")
	if len(pods) != 1 {
		t.Fatalf("pods %v (report %+v)", pods, rep.Files)
	}
	for _, p := range pods {
		if p.Annotations[bundle.PartialAnnotation] != "name,namespace,spec" || len(p.Status.ContainerStatuses) != 1 ||
			p.Status.ContainerStatuses[0].State.Waiting == nil || p.Status.ContainerStatuses[0].State.Waiting.Reason != "CreateContainerConfigError" {
			t.Errorf("pod %+v", p)
		}
	}
}

// TestUnanalyzedObjectKeepsText: an object of a kind the bundle keeps but analysis does
// not read (a HorizontalPodAutoscaler) is kept in its list and its lines also stay
// available as text, so the messages of its status conditions are read.
func TestUnanalyzedObjectKeepsText(t *testing.T) {
	hpa := "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  namespace: shop\n" +
		"status:\n  conditions:\n  - message: 'the HPA was unable to compute the replica count: failed to get cpu utilization:\n" +
		"      missing request for cpu in container web of Pod web-5cdb678c48-8bgbm'\n    reason: FailedGetResourceMetric\n" +
		"    status: \"False\"\n    type: ScalingActive\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: shop\nspec:\n  containers:\n  - name: web\n    image: web:1\n"
	b, _ := importDir(t, map[string][]byte{"hpa.yaml": []byte(hpa), "pod.yaml": []byte(pod)}, FormatAuto)
	if _, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindHPAs, "shop")); err != nil {
		t.Fatalf("HPA list: %v", err)
	}
	text, err := b.ReadFile(bundle.FragmentPath(bundle.FragmentText, "hpa.yaml-L1.txt"))
	if err != nil || !strings.Contains(string(text), "missing request for cpu in container web") {
		t.Fatalf("HPA lines as text: %q %v", text, err)
	}
	// A pod, which analysis reads, is not also kept as text.
	if _, err := b.ReadFile(bundle.FragmentPath(bundle.FragmentText, "pod.yaml-L1.txt")); err == nil {
		t.Error("pod object also kept as text")
	}
}

// TestNamespaceDescribeIsNoPod: the describe of a namespace stuck in deletion makes no
// pod; its condition lines stay text, where the namespace controller's messages are read.
func TestNamespaceDescribeIsNoPod(t *testing.T) {
	ns := "Name:         kusk-system\nLabels:       name=kusk-system\nAnnotations:  <none>\nStatus:       Terminating\nConditions:\n" +
		"  Type                                         Status  LastTransitionTime               Reason                Message\n" +
		"  ----                                         ------  ------------------               ------                -------\n" +
		"  NamespaceContentRemaining                    True    Thu, 11 Aug 2022 00:02:46 +0200  SomeResourcesRemain   Some resources are remaining: staticroutes.gateway.kusk.io has 1 resource instances\n"
	b, _ := importDir(t, map[string][]byte{"describe-ns.txt": []byte(ns)}, FormatAuto)
	if _, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "default")); err == nil {
		t.Error("a namespace describe made a pod")
	}
	found := false
	for _, name := range b.Names() {
		if strings.HasPrefix(name, bundle.FragmentsDir+"/"+bundle.FragmentText) {
			data, _ := b.ReadFile(name)
			found = found || strings.Contains(string(data), "Some resources are remaining: staticroutes.gateway.kusk.io")
		}
	}
	if !found {
		t.Fatalf("the namespace's conditions are not kept as text: %q", b.Names())
	}
}
