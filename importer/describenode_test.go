package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"podflow.dev/podflow/bundle"
)

// renderDescribeNode prints a recorded node as `kubectl describe node` does
// (k8s.io/kubectl pkg/describe describeNode and describeNodeResource: one tabwriter of
// padding 2, "  " per level, labels and taints continued on lines that start with a tab),
// with the pods bound to it among the recorded pods as its non-terminated pods. Ages are
// taken at the bundle's collection time.
func renderDescribeNode(t testing.TB, node corev1.Node, pods []corev1.Pod, events []corev1.Event, now time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "Name:\t%s\n", node.Name)
	var roles []string
	for k := range node.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	if len(roles) == 0 {
		roles = []string{"<none>"}
	}
	fmt.Fprintf(w, "Roles:\t%s\n", strings.Join(roles, ","))
	multiline := func(title string, kv map[string]string, sep string) {
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "%s:\t", title)
		if len(keys) == 0 {
			fmt.Fprintln(w, "<none>")
		}
		for i, k := range keys {
			if i > 0 {
				fmt.Fprint(w, "\t")
			}
			fmt.Fprintf(w, "%s%s%s\n", k, sep, kv[k])
		}
	}
	multiline("Labels", node.Labels, "=")
	// printAnnotationsMultiline: "key: value" (values over 140 characters are folded, which
	// the recorded annotations never are).
	multiline("Annotations", node.Annotations, ": ")
	fmt.Fprintf(w, "CreationTimestamp:\t%s\n", node.CreationTimestamp.Format(time.RFC1123Z))
	fmt.Fprint(w, "Taints:\t")
	if len(node.Spec.Taints) == 0 {
		fmt.Fprintln(w, "<none>")
	}
	taints := append([]corev1.Taint(nil), node.Spec.Taints...)
	sort.Slice(taints, func(i, j int) bool {
		return string(taints[i].Effect)+","+taints[i].Key < string(taints[j].Effect)+","+taints[j].Key
	})
	for i, tt := range taints {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprintf(w, "%s\n", tt.ToString())
	}
	fmt.Fprintf(w, "Unschedulable:\t%v\n", node.Spec.Unschedulable)
	if len(node.Status.Conditions) > 0 {
		fmt.Fprint(w, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
		fmt.Fprint(w, "  ----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range node.Status.Conditions {
			fmt.Fprintf(w, "  %v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status, c.LastHeartbeatTime.Format(time.RFC1123Z),
				c.LastTransitionTime.Format(time.RFC1123Z), c.Reason, c.Message)
		}
	}
	fmt.Fprint(w, "Addresses:\n")
	for _, a := range node.Status.Addresses {
		fmt.Fprintf(w, "  %s:\t%s\n", a.Type, a.Address)
	}
	resources := func(title string, l corev1.ResourceList) {
		if len(l) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		names := make([]string, 0, len(l))
		for n := range l {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			q := l[corev1.ResourceName(n)]
			fmt.Fprintf(w, "  %s:\t%s\n", n, q.String())
		}
	}
	resources("Capacity", node.Status.Capacity)
	resources("Allocatable", node.Status.Allocatable)
	i := node.Status.NodeInfo
	fmt.Fprintf(w, "System Info:\n  Machine ID:\t%s\n  System UUID:\t%s\n  Boot ID:\t%s\n  Kernel Version:\t%s\n  OS Image:\t%s\n  Operating System:\t%s\n  Architecture:\t%s\n  Container Runtime Version:\t%s\n  Kubelet Version:\t%s\n",
		i.MachineID, i.SystemUUID, i.BootID, i.KernelVersion, i.OSImage, i.OperatingSystem, i.Architecture, i.ContainerRuntimeVersion, i.KubeletVersion)
	if node.Spec.PodCIDR != "" {
		fmt.Fprintf(w, "PodCIDR:\t%s\n", node.Spec.PodCIDR)
	}
	if len(node.Spec.PodCIDRs) > 0 {
		fmt.Fprintf(w, "PodCIDRs:\t%s\n", strings.Join(node.Spec.PodCIDRs, ","))
	}
	alloc := node.Status.Allocatable
	if len(alloc) == 0 {
		alloc = node.Status.Capacity
	}
	pct := func(q resource.Quantity, of resource.Quantity, milli bool) int64 {
		if milli {
			if of.MilliValue() == 0 {
				return 0
			}
			return int64(float64(q.MilliValue()) / float64(of.MilliValue()) * 100)
		}
		if of.Value() == 0 {
			return 0
		}
		return int64(float64(q.Value()) / float64(of.Value()) * 100)
	}
	var bound []corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == node.Name && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			bound = append(bound, p)
		}
	}
	fmt.Fprintf(w, "Non-terminated Pods:\t(%d in total)\n", len(bound))
	fmt.Fprint(w, "  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	fmt.Fprint(w, "  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	sums := map[string]*resource.Quantity{}
	add := func(k string, q resource.Quantity) {
		if sums[k] == nil {
			z := resource.Quantity{Format: q.Format}
			sums[k] = &z
		}
		sums[k].Add(q)
	}
	for _, p := range bound {
		var cr, cl, mr, ml resource.Quantity
		for _, c := range p.Spec.Containers {
			cr.Add(c.Resources.Requests[corev1.ResourceCPU])
			cl.Add(c.Resources.Limits[corev1.ResourceCPU])
			mr.Add(c.Resources.Requests[corev1.ResourceMemory])
			ml.Add(c.Resources.Limits[corev1.ResourceMemory])
		}
		add("cr", cr)
		add("cl", cl)
		add("mr", mr)
		add("ml", ml)
		fmt.Fprintf(w, "  %s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n", p.Namespace, p.Name,
			cr.String(), pct(cr, alloc[corev1.ResourceCPU], true), cl.String(), pct(cl, alloc[corev1.ResourceCPU], true),
			mr.String(), pct(mr, alloc[corev1.ResourceMemory], false), ml.String(), pct(ml, alloc[corev1.ResourceMemory], false),
			humanAge(now.Sub(p.CreationTimestamp.Time)))
	}
	get := func(k string) resource.Quantity {
		if sums[k] == nil {
			return resource.Quantity{}
		}
		return *sums[k]
	}
	fmt.Fprint(w, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	fmt.Fprint(w, "  Resource\tRequests\tLimits\n  --------\t--------\t------\n")
	fmt.Fprintf(w, "  cpu\t%s (%d%%)\t%s (%d%%)\n", ptr(get("cr")), pct(get("cr"), alloc[corev1.ResourceCPU], true), ptr(get("cl")), pct(get("cl"), alloc[corev1.ResourceCPU], true))
	fmt.Fprintf(w, "  memory\t%s (%d%%)\t%s (%d%%)\n", ptr(get("mr")), pct(get("mr"), alloc[corev1.ResourceMemory], false), ptr(get("ml")), pct(get("ml"), alloc[corev1.ResourceMemory], false))
	fmt.Fprint(w, "  ephemeral-storage\t0 (0%)\t0 (0%)\n")
	if len(events) == 0 {
		fmt.Fprint(w, "Events:\t<none>\n")
	} else {
		fmt.Fprint(w, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n  ----\t------\t----\t----\t-------\n")
		for _, e := range events {
			age := humanAge(now.Sub(e.LastTimestamp.Time))
			if e.Count > 1 {
				age = fmt.Sprintf("%s (x%d over %s)", age, e.Count, humanAge(now.Sub(e.FirstTimestamp.Time)))
			}
			fmt.Fprintf(w, "  %v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, age, e.Source.Component, strings.TrimSpace(e.Message))
		}
	}
	w.Flush()
	return buf.Bytes()
}

func ptr(q resource.Quantity) string { return q.String() }

// humanAge is k8s.io/apimachinery duration.HumanDuration for the short spans a test bed has.
func humanAge(d time.Duration) string {
	switch s := int(d.Round(time.Second).Seconds()); {
	case s < 0:
		return "<invalid>"
	case s < 60*2:
		return fmt.Sprintf("%ds", s)
	case s < 60*10:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 3600*3:
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// renderNodeScheduling writes what a user pastes about a pod that does not schedule:
// `kubectl get pod -o yaml` of the scenario's pods, `kubectl get events -o yaml` of its
// namespace and `kubectl describe node` of every node.
func renderNodeScheduling(t testing.TB, scenario string) []byte {
	t.Helper()
	b := openScenario(t, scenario)
	var out bytes.Buffer
	var all []corev1.Pod
	for _, ns := range scenarioNamespaces(b) {
		for _, it := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, ns)) {
			var p corev1.Pod
			if err := json.Unmarshal(it, &p); err != nil {
				t.Fatal(err)
			}
			all = append(all, p)
			fmt.Fprintf(&out, "```\n$ kubectl get pod -n %s %s -o yaml\n%s```\n\n", ns, p.Name, toYAML(t, it))
		}
		if evs := readList(t, b, bundle.NamespacedResourcePath(bundle.KindEvents, ns)); len(evs) > 0 {
			fmt.Fprintf(&out, "```\n$ kubectl get events -n %s -o yaml\n%s```\n\n", ns, toYAML(t, exportList{"v1", "List", evs}))
		}
	}
	for _, it := range readList(t, b, bundle.ClusterResourcePath(bundle.KindNodes)) {
		var n corev1.Node
		if err := json.Unmarshal(it, &n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "```\n$ kubectl describe node %s\n%s```\n\n", n.Name, renderDescribeNode(t, n, all, nil, b.Manifest.CollectedAt))
	}
	return out.Bytes()
}

var describeNodeTickets = []string{"untolerated-taint", "node-selector-mismatch", "insufficient-cpu"}

func TestLooseDescribeNode(t *testing.T) {
	for _, s := range describeNodeTickets {
		t.Run(s, func(t *testing.T) {
			dir := looseDir("describe-node-" + s)
			checkRenderedFixture(t, filepath.Join(dir, "ticket.md"), renderNodeScheduling(t, s))
			b, rep, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if f := rep.File("ticket.md"); f == nil || f.Status != StatusUsed || f.Reason != "" || !strings.Contains(f.Detected, segDescribeNode) {
				t.Errorf("ticket.md: %+v", f)
			}
			got := diagnosis(analyzeBundles(t, b))
			want := diagnosis(analyzeBundles(t, openScenario(t, s)))
			if podDiagnosis(got) != podDiagnosis(want) {
				t.Errorf("diagnosis differs\nimport:\n%s\npodflow bundle:\n%s", got, want)
			}
			// The nodes come from describe alone and keep what the scheduling rules read.
			var nodes struct{ Items []corev1.Node }
			nd, _ := b.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
			if err := json.Unmarshal(nd, &nodes); err != nil {
				t.Fatal(err)
			}
			var rec struct{ Items []corev1.Node }
			rd, _ := openScenario(t, s).ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
			if err := json.Unmarshal(rd, &rec); err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != len(rec.Items) {
				t.Fatalf("%d nodes imported, %d recorded", len(nodes.Items), len(rec.Items))
			}
			for i, n := range nodes.Items {
				r := rec.Items[i]
				if fmt.Sprint(n.Labels, n.Spec.Taints, n.Spec.Unschedulable, n.Status.Allocatable.Cpu(), n.Status.Allocatable.Memory(), len(n.Status.Conditions)) !=
					fmt.Sprint(r.Labels, r.Spec.Taints, r.Spec.Unschedulable, r.Status.Allocatable.Cpu(), r.Status.Allocatable.Memory(), len(r.Status.Conditions)) {
					t.Errorf("node %s: imported %v %v %v, recorded %v %v %v", n.Name, n.Labels, n.Spec.Taints, n.Status.Allocatable, r.Labels, r.Spec.Taints, r.Status.Allocatable)
				}
			}
		})
	}
}

// Parts of `kubectl describe node` pasted without the Name line (the test bed's
// untolerated-taint capture, cut as users cut it): a Node named by the command, by the
// only node the pods name, or not at all, marked with what the fragment does not show.
func TestDescribeNodeFragment(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "captured", "untolerated-taint", "ticket.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "Taints:             node.kubernetes.io/unreachable:NoExecute")
	j := strings.Index(text, "Addresses:")
	if i < 0 || j < i {
		t.Fatal("the capture changed")
	}
	frag := text[i:j]
	cond := frag[strings.Index(frag, "  Type "):]
	for _, tc := range []struct{ name, paste, node, partial string }{
		{"named by the command", "$ kubectl describe node podflow-gpu-node | grep -A12 Taints\n" + frag, "podflow-gpu-node", "labels,allocatable"},
		{"conditions alone", cond, "unnamed-node-t-txt", "name,labels,taints,allocatable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, rep := importDir(t, map[string][]byte{"t.txt": []byte(tc.paste)}, FormatLoose)
			if f := rep.Files[0]; f.Status != StatusUsed || f.Detected != segDescribeNodeFrag {
				t.Errorf("%s %q: %s", f.Status, f.Detected, f.Reason)
			}
			var nodes []corev1.Node
			for _, raw := range readList(t, b, bundle.ClusterResourcePath(bundle.KindNodes)) {
				var n corev1.Node
				if err := json.Unmarshal(raw, &n); err != nil {
					t.Fatal(err)
				}
				nodes = append(nodes, n)
			}
			if len(nodes) != 1 {
				t.Fatalf("nodes: %+v", nodes)
			}
			n := nodes[0]
			if n.Name != tc.node || n.Annotations[bundle.PartialAnnotation] != tc.partial || len(n.Status.Conditions) != 4 ||
				n.Status.Conditions[0].Type != corev1.NodeReady || n.Status.Conditions[0].Status != corev1.ConditionUnknown {
				t.Errorf("node %s %v %+v", n.Name, n.Annotations, n.Status.Conditions)
			}
			if tc.partial == "labels,allocatable" && len(n.Spec.Taints) != 3 {
				t.Errorf("taints %+v", n.Spec.Taints)
			}
			if got := diagnosis(analyzeBundles(t, b)); !strings.HasPrefix(got, "node node-not-ready [Node /"+tc.node+"]") {
				t.Errorf("diagnosis %s", got)
			}
		})
	}
}

// A describe node pasted as its resources and Events only: the kubelet's events about
// its node (the eviction manager's EvictionThresholdMet, the status setters' NodeHas…)
// make it a node's, named by "Node NAME status is now" or by the host the events were
// recorded from ("kubelet, NODE" before 1.14), and the eviction is a finding about it.
func TestDescribeNodeFragmentOfEventsOnly(t *testing.T) {
	head := "Allocated resources:\n" +
		"  (Total limits may be over 100 percent, i.e., overcommitted.)\n" +
		"  Resource           Requests    Limits\n" +
		"  --------           --------    ------\n" +
		"  cpu                250m (12%)  0 (0%)\n" +
		"  memory             64Mi (1%)   0 (0%)\n" +
		"Events:\n" +
		"  Type     Reason                 Age   From               Message\n" +
		"  ----     ------                 ----  ----               -------\n"
	for _, tc := range []struct{ name, events string }{
		{"named by its status event", "  Warning  EvictionThresholdMet   2m    kubelet            Attempting to reclaim memory\n" +
			"  Normal   NodeHasMemoryPressure  2m    kubelet            Node worker-7 status is now: NodeHasMemoryPressure\n"},
		{"named by the events' host", "  Warning  EvictionThresholdMet   2m    kubelet, worker-7  Attempting to reclaim memory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{"t.txt": []byte(head + tc.events)}
			_, rep := importDir(t, files, FormatLoose)
			if f := rep.Files[0]; f.Status != StatusUsed || f.Detected != segDescribeNodeFrag {
				t.Errorf("%s %q: %s", f.Status, f.Detected, f.Reason)
			}
			f := firstRoot(analyzePaste(t, files))
			if f == nil || f.Rule != "node-pod-evicted" || len(f.Subjects) != 1 || f.Subjects[0].Kind != "Node" || f.Subjects[0].Name != "worker-7" ||
				!strings.Contains(f.Cause, "node worker-7 crossed an eviction threshold") {
				t.Errorf("root %+v", f)
			}
		})
	}
	// A pod's Events table is not a node's.
	pod := "Events:\n  Type     Reason   Age  From     Message\n  ----     ------   ---- ----     -------\n" +
		"  Warning  BackOff  2m   kubelet  Back-off restarting failed container\n"
	if _, rep := importDir(t, map[string][]byte{"t.txt": []byte(pod)}, FormatLoose); rep.Files[0].Detected == segDescribeNodeFrag {
		t.Errorf("a pod's events read as a node's")
	}
}
