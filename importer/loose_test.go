package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// looseCases are text fixtures in testdata/loose/<dir>/, written in kubectl's exact
// output format from the recorded podflow bundle of a scenario. full is set where the
// paste carries the pod's owners too, so the whole diagnosis must match; a describe
// names only the ReplicaSet and a get pods table no owner, so there rule, stage and pod
// must match.
var looseCases = []struct {
	dir, scenario string
	full          bool
}{
	{"oom-killed", "oom-killed", true},
	{"image-pull-dns", "image-pull-dns", true},
	{"insufficient-cpu", "insufficient-cpu", false},
	{"insufficient-cpu-tables", "insufficient-cpu", false},
	{"secret-key-missing", "secret-key-missing", true},
}

func looseDir(dir string) string { return filepath.Join("testdata", "loose", dir) }

// podDiagnosis is diagnosis with only the pods among the subjects.
func podDiagnosis(d string) string {
	var out []string
	for _, line := range strings.Split(d, "\n") {
		head, subjects, _ := strings.Cut(line, " [")
		var pods []string
		for _, s := range strings.Split(strings.TrimSuffix(subjects, "]"), ", ") {
			if strings.HasPrefix(s, "Pod ") {
				pods = append(pods, s)
			}
		}
		out = append(out, head+" ["+strings.Join(pods, ", ")+"]")
	}
	return strings.Join(out, "\n")
}

func TestLooseDiagnosisMatchesPodflowBundle(t *testing.T) {
	for _, c := range looseCases {
		t.Run(c.dir, func(t *testing.T) {
			want := diagnosis(analyzeBundles(t, openScenario(t, c.scenario)))
			if want == "" {
				t.Fatal("the podflow bundle has no root finding")
			}
			b, rep, err := Open(looseDir(c.dir), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != FormatLoose {
				t.Fatalf("detected %s, want %s", rep.Format, FormatLoose)
			}
			for _, f := range rep.Files {
				if f.Status != StatusUsed {
					t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
				}
			}
			got := diagnosis(analyzeBundles(t, b))
			if !c.full {
				got, want = podDiagnosis(got), podDiagnosis(want)
			}
			if got != want {
				t.Errorf("diagnosis differs\nimport:\n%s\npodflow bundle:\n%s", got, want)
			}
		})
	}
}

func TestLooseStdin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(looseDir("oom-killed"), "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, rep, err := Open("-", Options{Stdin: strings.NewReader(string(data))})
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.File(StdinName); f == nil || f.Status != StatusUsed {
		t.Fatalf("stdin report: %+v", rep.Files)
	}
	got := analyzeBundles(t, b)
	var cited string
	for _, f := range got.Findings {
		if f.Root && f.Rule == "runtime-oom-killed" {
			cited = f.Evidence[0].Location.String()
		}
	}
	if !strings.HasPrefix(cited, StdinName+":") || strings.Contains(cited, bundle.ClusterResources) {
		t.Errorf("root finding cites %q, want the line of stdin", cited)
	}
}

// damage applies what pasting into a ticket does: a prompt line, mail quoting, CRLF,
// runs of spaces turned into tabs, a second output and a line cut off at the end.
func damage(describe []byte) []byte {
	var b strings.Builder
	b.WriteString("> $ kubectl describe pod -n secret-key-missing app\r\n")
	for _, line := range strings.Split(strings.TrimRight(string(describe), "\n"), "\n") {
		line = strings.ReplaceAll(line, "     ", "\t")
		b.WriteString("> " + line + "\r\n")
	}
	b.WriteString("> $ kubectl get events -n secret-key-missing\r\n")
	b.WriteString("> LAST SEEN   TYPE      REASON    OBJECT    MESSAGE\r\n")
	b.WriteString("> 3m39s       Warning   Failed    pod/app   Error: couldn't find key password in Secret secret-key-missing/db\r\n")
	b.WriteString("> 3m40s       Normal    Pulled    pod/app   Container image \"podflow.test/bus")
	return []byte(b.String())
}

func TestLoosePasteDamage(t *testing.T) {
	describe, err := os.ReadFile(filepath.Join(looseDir("secret-key-missing"), "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, rep := importDir(t, map[string][]byte{
		"ticket.txt": damage(describe),
		"notes.txt":  []byte("customer says it worked yesterday\n"),
		"crictl.txt": []byte("CONTAINER           IMAGE               CREATED             STATE               NAME                ATTEMPT             POD ID              POD\n" +
			"8b7eb957baa20       cce7619cb8f38       3 minutes ago       Exited              app                 2                   10eea5390be3e       app\n"),
	}, FormatAuto)
	if rep.Format != FormatLoose {
		t.Fatalf("detected %s", rep.Format)
	}
	want := diagnosis(analyzeBundles(t, openScenario(t, "secret-key-missing")))
	if got := diagnosis(analyzeBundles(t, b)); got != want {
		t.Errorf("diagnosis differs\nimport:\n%s\npodflow bundle:\n%s", got, want)
	}
	if f := rep.File("ticket.txt"); f == nil || f.Status != StatusUsed || !strings.Contains(f.Detected, tableEvents) {
		t.Errorf("ticket.txt: %+v", f)
	}
	if f := rep.File("notes.txt"); f == nil || f.Status != StatusIgnored || !strings.Contains(f.Reason, "not recognised") {
		t.Errorf("notes.txt: %+v", f)
	}
	if f := rep.File("crictl.txt"); f == nil || f.Status != StatusUnreadable || !strings.Contains(f.Reason, "not imported") {
		t.Errorf("crictl.txt: %+v", f)
	}
	// The event from the get events table and the same event from describe are one.
	var events struct {
		Items []struct{ Reason, Message string }
	}
	data, _ := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindEvents, "secret-key-missing"))
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, e := range events.Items {
		if e.Reason == "Failed" {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d Failed events, want the describe row and the table row merged into 1", failed)
	}
}

func TestLooseEventOrderWithoutTimes(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ kubectl get events -n shop\nLAST SEEN   TYPE      REASON    OBJECT    MESSAGE\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "%dm         Warning   Step      pod/web   step %02d\n", 12-i, i)
	}
	bun, _ := importDir(t, map[string][]byte{"events.txt": []byte(b.String())}, FormatLoose)
	data, err := bun.ReadFile(bundle.NamespacedResourcePath(bundle.KindEvents, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []struct{ Message string } }
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	// Items of equal (zero) time are ordered by pointer text: /items/0, /items/1, /items/10, ...
	idx := make([]int, len(list.Items))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, c int) bool { return strconv.Itoa(idx[a]) < strconv.Itoa(idx[c]) })
	for k, i := range idx {
		if want := fmt.Sprintf("step %02d", k); list.Items[i].Message != want {
			t.Fatalf("event %d in pointer order is %q, want %q", k, list.Items[i].Message, want)
		}
	}
}
