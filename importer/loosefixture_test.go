package importer

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

var updateFixtures = flag.Bool("update", false, "rewrite rendered loose fixtures from the recorded bundles")

// checkRenderedFixture fails the test unless the fixture at p holds exactly what the
// recording renders to; with -update it first rewrites p with rendered.
func checkRenderedFixture(t *testing.T, p string, rendered []byte) {
	t.Helper()
	if *updateFixtures {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, rendered, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, rendered) {
		t.Fatalf("%s is not what the recording renders to; rerun with -update", p)
	}
}

// renderNodeTicket writes what a user pastes into a ticket about one pod: its
// `kubectl get pod -o yaml`, then `crictl ps -a`, `crictl pods` and `crictl inspect` of
// its containers from the node. The YAML and JSON are the recording's; the crictl tables
// are rendered from the recorded crictl JSON in crictl's table format at the node's
// collection time.
func renderNodeTicket(t testing.TB, scenario string) []byte {
	t.Helper()
	b := openScenario(t, scenario)
	var out bytes.Buffer
	for _, ns := range scenarioNamespaces(b) {
		for _, it := range readList(t, b, bundle.NamespacedResourcePath(bundle.KindPods, ns)) {
			fmt.Fprintf(&out, "Here is the pod:\n\n```\n$ kubectl get pod -n %s %s -o yaml\n%s```\n\n", ns, objectName(t, it), toYAML(t, it))
		}
	}
	forEachNodeCollection(t, b, func(nodeName string, c collection) {
		ps, _ := b.ReadFile(bundle.NodePath(nodeName, bundle.NodeCRIContainers))
		pods, _ := b.ReadFile(bundle.NodePath(nodeName, bundle.NodeCRIPods))
		fmt.Fprintf(&out, "On the node:\n\n```\n$ sudo crictl ps -a\n%s```\n\n```\n$ sudo crictl pods\n%s```\n\n", renderCrictlPs(t, ps, c.Clock), renderCrictlPods(t, pods, c.Clock))
		for _, n := range b.Names() {
			if id, ok := strings.CutPrefix(n, bundle.NodePath(nodeName, "crictl/inspect")+"/"); ok {
				d, _ := b.ReadFile(n)
				fmt.Fprintf(&out, "```\n$ sudo crictl inspect %s\n%s```\n\n", strings.TrimSuffix(id, ".json"), d)
			}
		}
	})
	return out.Bytes()
}

// nodeTickets are fixtures rendered by renderNodeTicket; go test -run TestLooseNodeTicket -update rewrites them.
var nodeTickets = []string{"command-not-found", "oom-killed"}

func TestLooseNodeTicket(t *testing.T) {
	for _, s := range nodeTickets {
		t.Run(s, func(t *testing.T) {
			checkRenderedFixture(t, filepath.Join(looseDir("node-"+s), "ticket.md"), renderNodeTicket(t, s))
			b, rep, err := Open(looseDir("node-"+s), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Files {
				// The prose around the pasted outputs is listed as not recognised; every
				// output is placed.
				if f.Status != StatusUsed || strings.Contains(f.Reason, "not used") || strings.Contains(f.Reason, "no pod UID") {
					t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
				}
			}
			for _, out := range []string{bundle.NodePath("podflow-node", bundle.NodeCRIContainers), bundle.NodePath("podflow-node", bundle.NodeCRIPods)} {
				if !b.Has(out) {
					t.Errorf("no %s from the crictl tables", out)
				}
			}
			got := analyzeBundles(t, b)
			want := analyzeBundles(t, openScenario(t, s))
			if g, w := podDiagnosis(diagnosis(got)), podDiagnosis(diagnosis(want)); g != w {
				t.Errorf("diagnosis differs\nimport:\n%s\npodflow bundle:\n%s", g, w)
			}
			// Whatever the paste's findings quote, the bundle's findings quote too, and the
			// crictl output is among it.
			wantText, crictl := findingsText(want), 0
			for _, f := range got.Findings {
				for _, e := range f.Evidence {
					if !strings.Contains(wantText, e.Excerpt) {
						t.Errorf("%s quotes %q, which the podflow bundle's findings do not", f.Rule, e.Excerpt)
					}
					if strings.HasPrefix(e.Excerpt, "crictl ") && e.Path == "ticket.md" && e.Pointer == "/status" {
						crictl++
					}
				}
			}
			if s == "command-not-found" && crictl == 0 {
				t.Errorf("no finding cites the pasted crictl output:\n%s", findingsText(got))
			}
		})
	}
}
