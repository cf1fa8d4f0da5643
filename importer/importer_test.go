package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// originalLine returns line n (1-based) of an input file.
func originalLine(t *testing.T, dir, name string, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("cited file %s: %v", name, err)
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("%s has %d lines, cited line %d", name, len(lines), n)
	}
	return lines[n-1]
}

func TestCitationsPointAtOriginalFiles(t *testing.T) {
	for _, ext := range []string{"json", "yaml"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, clusterInfoDumpExport(t, "crash-exit-1", ext))
			b, _, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep := analyzeBundles(t, b)
			var cited, items, logLines int
			for _, f := range rep.Findings {
				for _, e := range f.Evidence {
					cited++
					if strings.HasPrefix(e.Path, bundle.ClusterResources) {
						t.Errorf("evidence cites produced path %s, want the original file", e.Location)
						continue
					}
					if e.Line == 0 {
						continue
					}
					line := originalLine(t, dir, e.Path, e.Line)
					switch {
					case e.Pointer != "":
						items++
						// An item starts its own line: "{" in JSON, "- " in YAML.
						if trimmed := strings.TrimSpace(line); trimmed != "{" && !strings.HasPrefix(trimmed, "- ") {
							t.Errorf("%s: line %d is %q, not the start of an item", e.Path, e.Line, line)
						}
						if e.Locator != strconv.Itoa(e.Line)+"#"+e.Pointer {
							t.Errorf("locator %q does not carry line and pointer", e.Locator)
						}
					case strings.HasSuffix(e.Path, "logs.txt"):
						logLines++
						if strings.HasPrefix(line, "==== ") {
							t.Errorf("%s: cited line %d is a marker %q, want log text", e.Path, e.Line, line)
						}
					}
				}
			}
			if cited == 0 || items == 0 {
				t.Fatalf("%d evidence items, %d with item lines: nothing checked", cited, items)
			}
		})
	}
}

func TestLogLinesMapToLogsTxt(t *testing.T) {
	data := []byte("==== START logs for container init of pod shop/web ====\n" +
		"init done\n" +
		"==== END logs for container init of pod shop/web ====\n" +
		"==== START logs for container app of pod shop/web ====\r\n" +
		"starting\r\n" +
		"panic: boom==== END logs for container app of pod shop/web ====\n" +
		"==== START logs for container side of pod shop/web ====\n" +
		"Request log error: container \"side\" in pod \"web\" is waiting to start: ContainerCreating\n" +
		"==== END logs for container side of pod shop/web ====\n")
	files := map[string][]byte{}
	r := newReport(FormatClusterInfoDump, "dump")
	dumpLogs("shop/web/logs.txt", data, "shop", "web", files, r)
	app := bundle.LogPath("shop", "web", "app", false)
	if got := string(files[app]); got != "starting\r\npanic: boom" {
		t.Errorf("app log = %q", got)
	}
	if got := string(files[bundle.LogPath("shop", "web", "init", false)]); got != "init done\n" {
		t.Errorf("init log = %q", got)
	}
	if _, ok := files[bundle.LogPath("shop", "web", "side", false)]; ok {
		t.Error("a log kubectl could not fetch became a log file")
	}
	f := r.File("shop/web/logs.txt")
	if f == nil || f.Status != StatusUsed || !strings.Contains(f.Reason, `container side: kubectl could not fetch the log: container "side"`) {
		t.Fatalf("report entry = %+v", f)
	}
	o, ok := r.Origins[app]
	if l := o.Cite("", 2, 0); !ok || l.Path != "shop/web/logs.txt" || l.Line != 6 {
		t.Errorf("line 2 of the app log maps to %+v, want shop/web/logs.txt:6", l)
	}
}

func TestImportReportAccountsForEveryFile(t *testing.T) {
	files := clusterInfoDumpExport(t, "image-pull-dns", "json")
	files["image-pull-dns/services.json"] = []byte("{\n  \"items\": [\n    {\"metadata\": \n")
	files["README.txt"] = []byte("how this dump was made\n")
	files["image-pull-dns/statefulsets.json"] = []byte(`{"items":[]}`)
	b, rep := importDir(t, files, FormatAuto)
	for name := range files {
		if rep.File(name) == nil {
			t.Errorf("input file %s missing from the import report", name)
		}
	}
	if f := rep.File("image-pull-dns/services.json"); f == nil || f.Status != StatusUnreadable || !strings.Contains(f.Reason, "line 4") {
		t.Errorf("broken services list: %+v", f)
	}
	for _, name := range []string{"README.txt", "image-pull-dns/statefulsets.json", "image-pull-dns/replication-controllers.json"} {
		if f := rep.File(name); f == nil || f.Status != StatusIgnored || f.Reason == "" {
			t.Errorf("%s: %+v, want ignored with a reason", name, f)
		}
	}
	if !b.Has(bundle.NamespacedResourcePath(bundle.KindPods, "image-pull-dns")) || !b.Has(bundle.ImportReportPath) {
		t.Fatalf("import lost the pods or the report: %v", b.Names())
	}
	stored, err := ReadReport(b)
	if err != nil || stored == nil || len(stored.Files) != len(rep.Files) {
		t.Fatalf("stored report: %v, %v", stored, err)
	}
	got := analyzeBundles(t, b)
	if d := diagnosis(got); !strings.Contains(d, "image-pull-dns") {
		t.Errorf("one unreadable file stopped the rest: %q", d)
	}
	found := false
	for _, w := range got.Warnings {
		if w.Path == "image-pull-dns/services.json" && strings.Contains(w.Message, "unreadable") {
			found = true
		}
	}
	if !found {
		t.Errorf("analysis does not warn about the unreadable input: %v", got.Warnings)
	}
}

func TestTroubleshootErrorsAndJournal(t *testing.T) {
	files := troubleshootExport(t, "image-pull-dns")
	root := "support-bundle-2026-11-29T20_07_59/"
	delete(files, root+bundle.NamespacedResourcePath(bundle.KindEvents, "image-pull-dns"))
	files[root+bundle.ErrorsPath(bundle.KindEvents)] = []byte(`["events is forbidden: User \"support\" cannot list resource \"events\""]`)
	b, rep := importDir(t, files, FormatAuto)
	errFile := rep.File(bundle.ErrorsPath(bundle.KindEvents))
	if errFile == nil || errFile.Status != StatusFailed || !strings.Contains(errFile.Reason, "forbidden") {
		t.Fatalf("errors file: %+v", errFile)
	}
	journal := rep.File("host-collectors/journald/kubelet.txt")
	if journal == nil || journal.Status != StatusUsed || len(journal.Produced) != 1 || journal.Produced[0] != bundle.NodePath("podflow-node", bundle.NodeKubeletLog) {
		t.Fatalf("kubelet journal: %+v", journal)
	}
	if f := rep.File("analysis.json"); f == nil || f.Status != StatusIgnored {
		t.Errorf("analysis.json: %+v", f)
	}
	got := analyzeBundles(t, b)
	var missing []string
	for _, g := range got.Gaps {
		for _, m := range g.Missing {
			missing = append(missing, m.Reason)
		}
	}
	if !strings.Contains(strings.Join(missing, "\n"), "events: collection failed (see "+bundle.ErrorsPath(bundle.KindEvents)) {
		t.Errorf("coverage does not say events failed: %q", missing)
	}
	journalCited := false
	for _, f := range got.Findings {
		for _, e := range f.Evidence {
			if e.Path == "host-collectors/journald/kubelet.txt" && e.Line > 0 {
				journalCited = true
			}
		}
	}
	if !journalCited {
		t.Errorf("no finding cites the host collector journal: %s", diagnosis(got))
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files map[string][]byte
		want  Format
	}{
		{"podflow with manifest", nil, FormatPodflow},
		{"troubleshoot", troubleshootExport(t, "oom-killed"), FormatTroubleshoot},
		{"cluster-info dump", clusterInfoDumpExport(t, "oom-killed", "json"), FormatClusterInfoDump},
		{"must-gather", mustGatherExport(t, "oom-killed"), FormatMustGather},
		{"sosreport", sosreportExport(t, "oom-killed"), FormatSosreport},
		{"trimmed podflow bundle", map[string][]byte{"cluster-resources/pods/a.json": []byte(`{"items":[]}`)}, FormatPodflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := scenarioDir("oom-killed")
			if tt.files != nil {
				input = t.TempDir()
				writeTree(t, input, tt.files)
			}
			_, rep, err := Open(input, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := FormatPodflow
			if rep != nil {
				got = Format(rep.Format)
			}
			if got != tt.want {
				t.Errorf("format %s, want %s", got, tt.want)
			}
		})
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"core": {0x7f, 'E', 'L', 'F', 0, 0, 1}, "empty.txt": nil})
	_, _, err := Open(dir, Options{})
	var unknown *UnknownFormatError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "--format") ||
		!strings.Contains(err.Error(), "core: binary data") || !strings.Contains(err.Error(), "empty.txt: empty") {
		t.Errorf("unknown input: %v", err)
	}
	// Text is never refused: lines nothing recognises are kept as text.
	prose := t.TempDir()
	writeTree(t, prose, map[string][]byte{"notes.txt": []byte("kubectl describe pod output\n")})
	if _, rep, err := Open(prose, Options{}); err != nil || Format(rep.Format) != FormatLoose {
		t.Errorf("prose: %v", err)
	}
	if _, err := ParseFormat("supportconfig"); err == nil {
		t.Error("ParseFormat accepted an unsupported format")
	}
}

// An input opened for one read is marked ReadOnce, whatever its format, and reads and
// analyzes as it does otherwise.
func TestReadOnceOpensTheSameEvidence(t *testing.T) {
	inputs := map[string]string{"podflow": scenarioDir("oom-killed")}
	for name, files := range map[string]map[string][]byte{
		"troubleshoot": troubleshootExport(t, "oom-killed"),
		"sosreport":    sosreportExport(t, "oom-killed"),
	} {
		inputs[name] = t.TempDir()
		writeTree(t, inputs[name], files)
	}
	for name, input := range inputs {
		plain, _, err := Open(input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		once, _, err := Open(input, Options{ReadOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		if !once.ReadsOnce() || plain.ReadsOnce() || strings.Join(once.Names(), ",") != strings.Join(plain.Names(), ",") {
			t.Fatalf("%s: read once %v, names %v; opened %v", name, once.ReadsOnce(), once.Names(), plain.Names())
		}
		for _, n := range plain.Names() {
			want, _ := plain.ReadFile(n)
			if got, err := once.ReadFile(n); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s reads differently once: %v", name, n, err)
			}
		}
		want, _ := json.Marshal(analyzeBundles(t, plain))
		got, _ := json.Marshal(analyzeBundles(t, once))
		if string(got) != string(want) {
			t.Errorf("%s: the analysis differs when read once:\n%s\nwant\n%s", name, got, want)
		}
	}
}

func TestJSONItemLines(t *testing.T) {
	data := []byte("{\n  \"kind\": \"PodList\",\n  \"items\": [\n    {\n      \"a\": 1\n    },\n    {\"b\": [1,\n 2]}\n  ],\n  \"metadata\": {}\n}\n")
	lines, err := jsonItemLines(data)
	if err != nil || len(lines) != 2 || lines[0] != 4 || lines[1] != 7 {
		t.Errorf("lines %v, %v; want [4 7]", lines, err)
	}
	bare, err := jsonItemLines([]byte("[\n{},\n\n{}]"))
	if err != nil || len(bare) != 2 || bare[0] != 2 || bare[1] != 4 {
		t.Errorf("bare lines %v, %v; want [2 4]", bare, err)
	}
	for _, bad := range []string{"", "{\"items\": {}}", "{\"items\": [1,]}", "{} {}", "\"x\""} {
		if _, err := jsonItemLines([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzDumpLogs(f *testing.F) {
	f.Add([]byte("==== START logs for container app of pod ns/p ====\nx\n==== END logs for container app of pod ns/p ====\n"))
	f.Add([]byte("==== START logs for container app of pod ns/p ====\nRequest log error: x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files := map[string][]byte{}
		r := newReport(FormatClusterInfoDump, "fuzz")
		dumpLogs("ns/p/logs.txt", data, "ns", "p", files, r)
		if len(r.Files) != 1 {
			t.Fatalf("%d report entries for one file", len(r.Files))
		}
		for name, body := range files {
			if !bytes.Contains(data, body) {
				t.Fatalf("%s holds bytes that are not in the input", name)
			}
		}
	})
}

func FuzzListLines(f *testing.F) {
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"}}]}`))
	f.Add([]byte("items:\n- metadata:\n    name: a\n"))
	f.Add([]byte("[1, {\"a\": [}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if lines, err := jsonItemLines(data); err == nil {
			for _, l := range lines {
				if l < 1 || l > bytes.Count(data, []byte{'\n'})+1 {
					t.Fatalf("line %d out of range", l)
				}
			}
		}
		_, _, _ = yamlToJSON(data) // must not panic
	})
}
