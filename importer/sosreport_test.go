package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mholt/archiver/v3"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// findingsText renders every finding with its cause and the excerpts of its evidence, so
// evidence taken from node files is compared too, whatever file it is cited from.
func findingsText(rep *analyze.Report) string {
	var out []string
	for _, f := range rep.Findings {
		var ex []string
		for _, e := range f.Evidence {
			ex = append(ex, "  "+e.Excerpt)
		}
		sort.Strings(ex)
		out = append(out, fmt.Sprintf("%s root=%t: %s\n%s", f.Rule, f.Root, f.Cause, strings.Join(ex, "\n")))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestSosreportDiagnosis analyzes each scenario's cluster evidence together with a
// sosreport of its node instead of podflow's node bundle: every finding, its cause and
// the excerpts of its evidence must be the same.
func TestSosreportDiagnosis(t *testing.T) {
	for _, s := range scenarios(t) {
		t.Run(s, func(t *testing.T) {
			want := findingsText(analyzeBundles(t, openScenario(t, s)))
			sos, rep := importDir(t, sosreportExport(t, s), FormatAuto)
			if Format(rep.Format) != FormatSosreport {
				t.Fatalf("detected %s, want %s", rep.Format, FormatSosreport)
			}
			for _, f := range rep.Files {
				if f.Status == StatusUnreadable || (f.Status == StatusIgnored && strings.HasPrefix(f.Path, sosCommands+"/crio/")) || (f.Status == StatusUsed && f.Reason != "" && f.Detected != "host name") {
					t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
				}
			}
			got := findingsText(analyzeBundles(t, clusterPart(t, s), sos))
			if got != want {
				t.Errorf("findings differ\ncluster + sosreport:\n%s\n\npodflow bundle:\n%s", got, want)
			}
		})
	}
}

// writeLinkedSosreport writes the scenario's sosreport export under a new directory and
// links its top-level hostname into sos_commands/, as sos does. It returns the directory
// and the name of the sosreport-<host>-... folder in it.
func writeLinkedSosreport(t *testing.T, scenario string) (dir, root string) {
	t.Helper()
	dir = t.TempDir()
	files := sosreportExport(t, scenario)
	writeTree(t, dir, files)
	for name := range files {
		root, _, _ = strings.Cut(name, "/")
	}
	if err := os.Symlink("sos_commands/host/hostname", filepath.Join(dir, root, "hostname")); err != nil {
		t.Fatal(err)
	}
	return dir, root
}

// TestSosreportLinks reads a sosreport as sos writes it, with its top-level files linked
// into sos_commands/: the links are listed, not followed, and the rest is imported.
func TestSosreportLinks(t *testing.T) {
	dir, root := writeLinkedSosreport(t, "command-not-found")
	if err := os.Symlink("/etc/shadow", filepath.Join(dir, root, "etc", "shadow")); err != nil {
		t.Fatal(err)
	}
	b, rep, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hostname", "etc/shadow"} {
		if f := rep.File(name); f == nil || f.Status != StatusIgnored || !strings.Contains(f.Reason, "not followed") {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if !b.Has(bundle.NodePath("podflow-node", bundle.NodeKubeletLog)) {
		t.Error("the rest of the sosreport was not imported")
	}
	if got := rep.NotCarried[0]; !strings.Contains(got, "API objects") {
		t.Errorf("coverage does not say a sosreport has no API objects: %q", got)
	}
}

func TestSosreportNodeName(t *testing.T) {
	tests := []struct {
		files map[string][]byte
		want  string
	}{
		{map[string][]byte{"sosreport-x/sos_commands/host/hostname": []byte("Worker-1\n"), "sosreport-x/etc/hostname": []byte("other\n")}, "worker-1"},
		{map[string][]byte{"sosreport-x/etc/hostname": []byte("worker-2\n"), "sosreport-x/sos_commands/a/b": nil}, "worker-2"},
		{map[string][]byte{"sosreport-worker-3-2026-11-29-qwkzbfn/sos_commands/a/b": nil}, "worker-3"},
		{map[string][]byte{"report/sos_commands/a/b": nil}, "unknown-host"},
	}
	for _, tt := range tests {
		b, err := bundle.New("in", tt.files)
		if err != nil {
			t.Fatal(err)
		}
		if got, how := sosNode(b); got != tt.want {
			t.Errorf("node %q (%s), want %q", got, how, tt.want)
		}
	}
}

// TestSosreportTarXz reads a sosreport as sos ships it: one .tar.xz holding a
// sosreport-<host>-... directory, with links among its files.
func TestSosreportTarXz(t *testing.T) {
	dir, root := writeLinkedSosreport(t, "oom-killed")
	archive := filepath.Join(t.TempDir(), root+".tar.xz")
	if err := archiver.NewTarXz().Archive([]string{filepath.Join(dir, root)}, archive); err != nil {
		t.Fatal(err)
	}
	b, rep, err := Open(archive, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if Format(rep.Format) != FormatSosreport {
		t.Fatalf("detected %s", rep.Format)
	}
	if f := rep.File("hostname"); f == nil || !strings.Contains(f.Reason, "not followed") {
		t.Errorf("link: %+v", f)
	}
	want := findingsText(analyzeBundles(t, openScenario(t, "oom-killed")))
	if got := findingsText(analyzeBundles(t, clusterPart(t, "oom-killed"), b)); got != want {
		t.Errorf("findings differ\ncluster + sosreport:\n%s\n\npodflow bundle:\n%s", got, want)
	}
}
