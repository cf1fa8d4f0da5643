package importer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

// TestMustGatherCitations checks that findings on a must-gather cite its own files, and
// that a cited line holds what the excerpt quotes.
func TestMustGatherCitations(t *testing.T) {
	for _, s := range []string{"oom-killed", "image-pull-dns", "crash-exit-1"} {
		t.Run(s, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, mustGatherExport(t, s))
			b, _, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "must-gather.local.5318008")
			checked := 0
			for _, f := range analyzeBundles(t, b).Findings {
				for _, e := range f.Evidence {
					if strings.HasPrefix(e.Path, bundle.ClusterResources) || strings.HasPrefix(e.Path, bundle.NodesDir+"/") {
						t.Errorf("evidence cites produced path %s, want the must-gather's file", e.Location)
						continue
					}
					if e.Line == 0 {
						continue
					}
					if line := originalLine(t, root, e.Path, e.Line); strings.TrimSpace(line) == "" {
						t.Errorf("%s:%d is blank, excerpt %q", e.Path, e.Line, e.Excerpt)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no evidence with a line: nothing checked")
			}
		})
	}
}

func TestMustGatherLogsAndHostJournals(t *testing.T) {
	node := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n")
	}
	mg := "must-gather.local.1/image/"
	files := map[string][]byte{
		mg + "timestamp": []byte("2026-11-29 20:25:00 +0000 UTC m=+0.1\n"),
		mg + "cluster-scoped-resources/core/nodes/master-0.yaml":                         node("master-0"),
		mg + "cluster-scoped-resources/core/nodes/master-1.yaml":                         node("master-1"),
		mg + "cluster-scoped-resources/config.openshift.io/clusterversions/version.yaml": []byte("apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata:\n  name: version\n"),
		mg + "namespaces/shop/core/pods.yaml":                                            []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web\n    namespace: shop\n  spec:\n    nodeName: master-1\n    containers:\n    - name: app\n      image: app\n"),
		mg + "namespaces/shop/pods/web/app/app/logs/current.log":                         []byte("2026-11-29T20:24:58.123456789Z starting\n2026-11-29T20:24:59.000000001Z panic: boom\n"),
		mg + "namespaces/shop/pods/web/app/app/logs/previous.log":                        []byte("not stamped\n"),
		mg + "host_service_logs/masters/kubelet_service.log": []byte(
			"Nov 29 20:24:58 master-0 kubelet[11]: I1129 20:24:58.000000      11 kubelet.go:1] \"zero\"\n" +
				"Nov 29 20:24:58 master-1 kubelet[12]: E1129 20:24:58.000000      12 kubelet.go:1] \"one\" pod=\"shop/web\"\n" +
				"Nov 29 20:24:59 master-0 kubelet[11]: I1129 20:24:59.000000      11 kubelet.go:1] \"zero again\"\n"),
	}
	b, rep := importDir(t, files, FormatAuto)
	if Format(rep.Format) != FormatMustGather {
		t.Fatalf("detected %s", rep.Format)
	}
	read := func(name string) string {
		data, err := b.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(bundle.LogPath("shop", "web", "app", false)); got != "starting\npanic: boom\n" {
		t.Errorf("current log %q: oc's timestamps not cut", got)
	}
	if got := read(bundle.LogPath("shop", "web", "app", true)); got != "not stamped\n" {
		t.Errorf("previous log %q", got)
	}
	m0, m1 := read(bundle.NodePath("master-0", bundle.NodeKubeletLog)), read(bundle.NodePath("master-1", bundle.NodeKubeletLog))
	if lines := strings.Split(strings.TrimSuffix(m1, "\n"), "\n"); len(lines) != 3 || lines[0] != "" || !strings.Contains(lines[1], `"one"`) || lines[2] != "" {
		t.Errorf("master-1 journal does not keep line numbers: %q", m1)
	}
	if strings.Contains(m0, `"one"`) || !strings.Contains(m0, "zero again") {
		t.Errorf("master-0 journal: %q", m0)
	}
	f := rep.File("image/cluster-scoped-resources/config.openshift.io/clusterversions/version.yaml")
	if f == nil || f.Status != StatusIgnored || !strings.Contains(f.Reason, "ClusterVersion") {
		t.Errorf("unknown kind not listed with its reason: %+v", f)
	}
	if f := rep.File("image/timestamp"); f == nil || f.Status != StatusUsed {
		t.Errorf("timestamp not accounted for: %+v", f)
	}
	// The gathering's time is the collection time ages are measured against.
	if want := time.Date(2026, 11, 29, 20, 25, 0, 0, time.UTC); rep.CollectedAt == nil || !rep.CollectedAt.Equal(want) ||
		b.Manifest == nil || !b.Manifest.CollectedAt.Equal(want) {
		t.Errorf("collection time = %v (manifest %+v), want %v", rep.CollectedAt, b.Manifest, want)
	}
}

// TestCoverageNamesWhatTheFormatLacks checks that an analysis of an import says what
// the format cannot hold: a must-gather no node runtime state, a sosreport no API objects.
func TestCoverageNamesWhatTheFormatLacks(t *testing.T) {
	mg, _ := importDir(t, mustGatherExport(t, "oom-killed"), FormatAuto)
	sos, _ := importDir(t, sosreportExport(t, "oom-killed"), FormatAuto)
	for _, c := range []struct {
		b    *bundle.Bundle
		want string
	}{{mg, "must-gather; evidence this input does not hold: CRI state"}, {sos, "sosreport; evidence this input does not hold: API objects"}} {
		found := false
		for _, w := range analyzeBundles(t, c.b).Warnings {
			found = found || strings.Contains(w.Message, c.want)
		}
		if !found {
			t.Errorf("no warning containing %q", c.want)
		}
	}
}

// withoutNodeState is a scenario's podflow bundle without what a must-gather cannot hold:
// CRI state, the runtime journal, kubelet config and dmesg.
func withoutNodeState(t testing.TB, scenario string) *bundle.Bundle {
	t.Helper()
	b := openScenario(t, scenario)
	files := map[string][]byte{}
	for _, name := range b.Names() {
		if info := bundle.ParsePath(name); info.Area == "node" && info.NodeFile != bundle.NodeKubeletLog {
			continue
		}
		files[name], _ = b.ReadFile(name)
	}
	out, err := bundle.New("podflow", files)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustGatherCannotTell lists scenarios whose findings rest on a cluster-scoped kind having
// no objects at all, which a must-gather (one file per object) cannot show: the finding
// stays, with less said.
var mustGatherCannotTell = map[string]string{
	"pvc-unbound": "no StorageClass exists",
}

// TestMustGatherFindings compares every finding, its cause and the excerpts of its
// evidence, with podflow's bundle of the same scenario cut to what a must-gather holds.
func TestMustGatherFindings(t *testing.T) {
	for _, s := range scenarios(t) {
		t.Run(s, func(t *testing.T) {
			podflow := analyzeBundles(t, withoutNodeState(t, s))
			want := findingsText(podflow)
			b, _ := importDir(t, mustGatherExport(t, s), FormatAuto)
			got := analyzeBundles(t, b)
			if _, ok := mustGatherCannotTell[s]; ok {
				if diagnosis(got) != diagnosis(podflow) {
					t.Errorf("diagnosis differs\nmust-gather:\n%s\npodflow bundle:\n%s", diagnosis(got), diagnosis(podflow))
				}
				return
			}
			if got := findingsText(got); got != want {
				t.Errorf("findings differ\nmust-gather:\n%s\n\npodflow bundle without node state:\n%s", got, want)
			}
		})
	}
}
