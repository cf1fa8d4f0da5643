package importer

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/bundle"
)

// Must-gather and sosreport exports of the recorded podflow bundles, laid out as
// `oc adm must-gather` and `sos report` write them, so an import can be compared with the
// podflow bundle of the same cluster state.

// mustGatherGroups places podflow's lists at namespaces/<ns>/<group>/<plural>.yaml and
// cluster-scoped-resources/<group>/<plural>/<name>.yaml, group "core" for the empty group
// (oc adm inspect, pkg/cli/admin/inspect).
var mustGatherGroups = map[string]string{
	bundle.KindPods: "core/pods", bundle.KindDeployments: "apps/deployments", bundle.KindReplicaSets: "apps/replicasets",
	bundle.KindStatefulSets: "apps/statefulsets", bundle.KindDaemonSets: "apps/daemonsets", bundle.KindJobs: "batch/jobs",
	bundle.KindCronJobs: "batch/cronjobs", bundle.KindServices: "core/services",
	bundle.KindEndpointSlices: "discovery.k8s.io/endpointslices", bundle.KindEvents: "core/events",
	bundle.KindPVCs: "core/persistentvolumeclaims", bundle.KindResourceQuotas: "core/resourcequotas",
	bundle.KindLimitRanges: "core/limitranges", bundle.KindServiceAccounts: "core/serviceaccounts",
	bundle.KindConfigMaps: "core/configmaps", bundle.KindSecrets: "core/secrets", bundle.KindLeases: "coordination.k8s.io/leases",
	bundle.KindPodDisruptionBudgets: "policy/poddisruptionbudgets", bundle.KindNetworkPolicies: "networking.k8s.io/networkpolicies",
	bundle.KindNodes: "core/nodes", bundle.KindPVs: "core/persistentvolumes", bundle.KindStorageClasses: "storage.k8s.io/storageclasses",
	bundle.KindPriorityClasses:    "scheduling.k8s.io/priorityclasses",
	bundle.KindValidatingWebhooks: "admissionregistration.k8s.io/validatingwebhookconfigurations",
	bundle.KindMutatingWebhooks:   "admissionregistration.k8s.io/mutatingwebhookconfigurations",
	bundle.KindCSIDrivers:         "storage.k8s.io/csidrivers", bundle.KindRuntimeClasses: "node.k8s.io/runtimeclasses",
}

func toYAML(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

type exportList struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

func readList(t testing.TB, b *bundle.Bundle, name string) []json.RawMessage {
	t.Helper()
	data, _ := b.ReadFile(name)
	var l exportList
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l.Items
}

func objectName(t testing.TB, raw json.RawMessage) string {
	var o struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.Name
}

// mustGatherExport lays a podflow bundle out as a must-gather: YAML lists per namespace,
// one file per pod and per cluster-scoped object, logs per container, and the kubelet
// journal as the masters' host service log. It holds no CRI state, kubelet config or dmesg.
func mustGatherExport(t testing.TB, scenario string) map[string][]byte {
	t.Helper()
	b := openScenario(t, scenario)
	root := "must-gather.local.5318008/quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0c5e/"
	files := map[string][]byte{}
	if b.Manifest != nil {
		at := b.Manifest.CollectedAt.UTC()
		files[root+"timestamp"] = []byte(fmt.Sprintf("%s m=+0.041\n%s m=+38.112\n", at.Add(-38*time.Second).Format("2006-01-02 15:04:05.999999999 -0700 MST"), at.Format("2006-01-02 15:04:05.999999999 -0700 MST")))
	}
	for _, name := range b.Names() {
		data, _ := b.ReadFile(name)
		info := bundle.ParsePath(name)
		switch {
		case info.Area == "namespaced" && mustGatherGroups[info.Kind] != "":
			items := readList(t, b, name)
			files[root+path.Join("namespaces", info.Namespace, mustGatherGroups[info.Kind]+".yaml")] = toYAML(t, exportList{"v1", "List", items})
			if info.Kind == bundle.KindPods {
				for _, it := range items {
					n := objectName(t, it)
					files[root+path.Join("namespaces", info.Namespace, "pods", n, n+".yaml")] = toYAML(t, it)
				}
			}
		case info.Area == "cluster" && info.Kind == bundle.KindNamespaces:
			for _, it := range readList(t, b, name) {
				n := objectName(t, it)
				files[root+path.Join("namespaces", n, n+".yaml")] = toYAML(t, it)
			}
		case info.Area == "cluster" && info.Kind == bundle.KindNodeLeases:
			files[root+"namespaces/kube-node-lease/coordination.k8s.io/leases.yaml"] = toYAML(t, exportList{"v1", "List", readList(t, b, name)})
		case info.Area == "cluster" && mustGatherGroups[info.Kind] != "":
			for _, it := range readList(t, b, name) {
				files[root+path.Join("cluster-scoped-resources", mustGatherGroups[info.Kind], objectName(t, it)+".yaml")] = toYAML(t, it)
			}
		case info.Area == "log":
			which := "current.log"
			if info.Previous {
				which = "previous.log"
			}
			files[root+path.Join("namespaces", info.Namespace, "pods", info.Pod, info.Container, info.Container, "logs", which)] = data
		case info.Area == "node" && info.NodeFile == bundle.NodeKubeletLog:
			files[root+"host_service_logs/masters/kubelet_service.log"] = shortJournal(t, data)
		}
	}
	files[root+"version"] = []byte("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0c5e\n")
	return files
}

// shortJournal rewrites journal lines recorded with `journalctl -o short-iso` in the
// default short form `journalctl --no-pager` prints (month, day, time; local time is UTC
// on the test bed).
func shortJournal(t testing.TB, data []byte) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		ts, rest, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05-0700", ts)
		if err != nil {
			continue
		}
		lines[i] = at.UTC().Format("Jan 02 15:04:05") + " " + rest
	}
	return []byte(strings.Join(lines, ""))
}

// collection is what the export needs of a node's collection.json.
type collection struct {
	Node     string    `json:"node"`
	Clock    time.Time `json:"clock"`
	BootTime time.Time `json:"bootTime"`
}

// forEachNodeCollection calls fn with each node's name and collection.json in b, in the
// bundle's order.
func forEachNodeCollection(t testing.TB, b *bundle.Bundle, fn func(nodeName string, c collection)) {
	t.Helper()
	for _, name := range b.Names() {
		info := bundle.ParsePath(name)
		if info.Area != "node" || info.NodeFile != bundle.NodeCollection {
			continue
		}
		var c collection
		data, _ := b.ReadFile(name)
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		fn(info.Node, c)
	}
}

// sosreportExport lays a podflow bundle's node evidence out as `sos report` writes it on
// that node: journals from the kubernetes and containerd plugins, crictl tables and
// inspect output from the crio plugin, the kubelet config at its original path, dmesg
// with boot-relative times. It holds no API objects.
func sosreportExport(t testing.TB, scenario string) map[string][]byte {
	t.Helper()
	b := openScenario(t, scenario)
	files := map[string][]byte{}
	forEachNodeCollection(t, b, func(nodeName string, c collection) {
		root := "sosreport-" + nodeName + "-2026-11-29-qwkzbfn/"
		node := func(f string) []byte { d, _ := b.ReadFile(bundle.NodePath(nodeName, f)); return d }
		// A node without --hostname-override registers under its host name.
		files[root+sosHostname] = []byte(nodeName + "\n")
		files[root+"sos_commands/kubernetes/journalctl_--no-pager_--unit_kubelet"] = shortJournal(t, node(bundle.NodeKubeletLog))
		files[root+"sos_commands/containerd/journalctl_--no-pager_--unit_containerd"] = shortJournal(t, node(bundle.NodeRuntimeLog))
		files[root+"sos_commands/crio/crictl_ps_-a"] = renderCrictlPs(t, node(bundle.NodeCRIContainers), c.Clock)
		files[root+"sos_commands/crio/crictl_pods"] = renderCrictlPods(t, node(bundle.NodeCRIPods), c.Clock)
		files[root+"sos_commands/kernel/dmesg"] = uptimeDmesg(t, node(bundle.NodeDmesg), c.BootTime)
		files[root+"sos_commands/kernel/uname_-a"] = []byte("Linux " + nodeName + " 6.18.44 #1 SMP PREEMPT x86_64 GNU/Linux\n")
		files[root+sosKubeletConfig] = node(bundle.NodeKubeletConfig)
		files[root+"etc/os-release"] = []byte("NAME=\"Debian GNU/Linux\"\n")
		for _, n := range b.Names() {
			d, _ := b.ReadFile(n)
			switch {
			case strings.HasPrefix(n, bundle.NodePath(nodeName, "crictl/inspect")+"/"):
				files[root+"sos_commands/crio/containers/crictl_inspect_"+strings.TrimSuffix(path.Base(n), ".json")] = d
			case strings.HasPrefix(n, bundle.NodePath(nodeName, "crictl/inspectp")+"/"):
				files[root+"sos_commands/crio/pods/crictl_inspectp_"+strings.TrimSuffix(path.Base(n), ".json")] = d
			}
		}
	})
	return files
}

// humanDuration is github.com/docker/go-units HumanDuration, which crictl prints CREATED with.
func humanDuration(d time.Duration) string {
	if seconds := int(d.Seconds()); seconds < 1 {
		return "Less than a second"
	} else if seconds == 1 {
		return "1 second"
	} else if seconds < 60 {
		return fmt.Sprintf("%d seconds", seconds)
	} else if minutes := int(d.Minutes()); minutes == 1 {
		return "About a minute"
	} else if minutes < 60 {
		return fmt.Sprintf("%d minutes", minutes)
	} else if hours := int(d.Hours() + 0.5); hours == 1 {
		return "About an hour"
	} else if hours < 48 {
		return fmt.Sprintf("%d hours", hours)
	}
	return fmt.Sprintf("%d days", int(d.Hours()+0.5)/24)
}

func nanoTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func trunc13(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// crictlTable writes rows as crictl's table display does: a tabwriter with minimum width
// 20, tab width 1, padding 3 and spaces (cmd/crictl/display.go newDefaultTableDisplay).
func crictlTable(rows [][]string) []byte {
	var out strings.Builder
	w := tabwriter.NewWriter(&out, 20, 1, 3, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
	return []byte(out.String())
}

// renderCrictlPs renders recorded `crictl ps -a -o json` as the table `crictl ps -a`
// prints at the collection time (cmd/crictl/container.go ListContainers).
func renderCrictlPs(t testing.TB, data []byte, now time.Time) []byte {
	t.Helper()
	var doc struct {
		Containers []struct {
			ID, PodSandboxID string
			Metadata         struct {
				Name    string
				Attempt int
			}
			Image     struct{ Image string }
			State     string
			CreatedAt string
			Labels    map[string]string
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rows := [][]string{{"CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD", "NAMESPACE"}}
	for _, c := range doc.Containers {
		state := strings.TrimPrefix(c.State, "CONTAINER_")
		state = state[:1] + strings.ToLower(state[1:])
		rows = append(rows, []string{trunc13(c.ID), trunc13(c.Image.Image), humanDuration(now.Sub(nanoTime(c.CreatedAt))) + " ago",
			state, c.Metadata.Name, fmt.Sprint(c.Metadata.Attempt), trunc13(c.PodSandboxID),
			c.Labels[criLabelPodName], c.Labels[criLabelPodNamespace]})
	}
	return crictlTable(rows)
}

// renderCrictlPods renders recorded `crictl pods -o json` as `crictl pods` prints it
// (cmd/crictl/sandbox.go ListPodSandboxes).
func renderCrictlPods(t testing.TB, data []byte, now time.Time) []byte {
	t.Helper()
	var doc struct {
		Items []struct {
			ID       string
			Metadata struct {
				Name, Namespace string
				Attempt         int
			}
			State, CreatedAt, RuntimeHandler string
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rows := [][]string{{"POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT", "RUNTIME"}}
	for _, s := range doc.Items {
		state := map[string]string{"SANDBOX_READY": "Ready", "SANDBOX_NOTREADY": "NotReady"}[s.State]
		rt := s.RuntimeHandler
		if rt == "" {
			rt = "(default)"
		}
		rows = append(rows, []string{trunc13(s.ID), humanDuration(now.Sub(nanoTime(s.CreatedAt))) + " ago", state,
			s.Metadata.Name, s.Metadata.Namespace, fmt.Sprint(s.Metadata.Attempt), rt})
	}
	return crictlTable(rows)
}

// uptimeDmesg rewrites `dmesg --time-format iso` lines as plain `dmesg` prints them:
// seconds since boot in brackets.
func uptimeDmesg(t testing.TB, data []byte, boot time.Time) []byte {
	t.Helper()
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		ts, rest, ok := strings.Cut(l, " ")
		at, err := time.Parse("2006-01-02T15:04:05,000000-07:00", ts)
		if !ok || err != nil {
			out.WriteString(l)
			continue
		}
		up := at.Sub(boot)
		fmt.Fprintf(&out, "[%5d.%06d] %s", int64(up/time.Second), int64(up%time.Second/time.Microsecond), rest)
	}
	return []byte(out.String())
}

// clusterPart is a podflow bundle without its node evidence: what a cluster collection
// gives, to be analyzed together with a node's sosreport.
func clusterPart(t testing.TB, scenario string) *bundle.Bundle {
	t.Helper()
	b := openScenario(t, scenario)
	files := map[string][]byte{}
	for _, name := range b.Names() {
		if bundle.ParsePath(name).Area != "node" {
			files[name], _ = b.ReadFile(name)
		}
	}
	out, err := bundle.New("cluster", files)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
