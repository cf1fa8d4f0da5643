package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// importLooseDir imports dir, which must be detected as loose pastes with every file
// in it used, and returns the bundle it makes.
func importLooseDir(t *testing.T, dir string) *bundle.Bundle {
	t.Helper()
	b, rep, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if Format(rep.Format) != FormatLoose {
		t.Fatalf("detected %s, want %s", rep.Format, FormatLoose)
	}
	for _, f := range rep.Files {
		if f.Status != StatusUsed {
			t.Errorf("%s: %s %s: %s", f.Path, f.Status, f.Detected, f.Reason)
		}
	}
	return b
}

func TestLooseDiagnosisMatchesPodflowBundle(t *testing.T) {
	for _, c := range looseCases {
		t.Run(c.dir, func(t *testing.T) {
			want := diagnosis(analyzeBundles(t, openScenario(t, c.scenario)))
			if want == "" {
				t.Fatal("the podflow bundle has no root finding")
			}
			b := importLooseDir(t, looseDir(c.dir))
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
	if Format(rep.Format) != FormatLoose {
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
	// An older crictl prints no NAMESPACE column and tables carry no pod UID: the rows
	// are imported but say why they cannot be linked to a pod.
	if f := rep.File("crictl.txt"); f == nil || f.Status != StatusUsed || !strings.Contains(f.Reason, "no pod UID") {
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

// bundleText is a file of b, which must hold it.
func bundleText(t *testing.T, b *bundle.Bundle, name string) string {
	t.Helper()
	data, err := b.ReadFile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(data)
}

// TestLoosePrefixedLogs: `kubectl logs --prefix -l …` streams several pods' containers,
// each line behind "[pod/NAME/CONTAINER] "; each becomes that container's log, cited at
// the paste's own lines.
func TestLoosePrefixedLogs(t *testing.T) {
	b, rep := importDir(t, map[string][]byte{
		"ticket.md": []byte("Logs:\n```\n$ kubectl logs --prefix -n shop -l app=web\n" +
			"[pod/web-1/app] starting\n" +
			"[pod/web-2/app] starting\n" +
			"[pod/web-1/app] [0.005s][error][logging] Error opening log file '/data/gc.log': Permission denied\n" +
			"[pod/web-2/proxy] listening\n" +
			"```\n"),
	}, FormatLoose)
	read := func(name string) string { return bundleText(t, b, name) }
	if got := read(bundle.LogPath("shop", "web-1", "app", false)); got != "starting\n\n[0.005s][error][logging] Error opening log file '/data/gc.log': Permission denied\n" {
		t.Errorf("web-1 app log %q", got)
	}
	if got := read(bundle.LogPath("shop", "web-2", "proxy", false)); got != "listening\n" {
		t.Errorf("web-2 proxy log %q", got)
	}
	if o := rep.Origins[bundle.LogPath("shop", "web-1", "app", false)]; o.Path != "ticket.md" || o.LineOffset != 3 {
		t.Errorf("web-1 log origin %+v, want ticket.md from line 4", o)
	}
	if o := rep.Origins[bundle.LogPath("shop", "web-2", "proxy", false)]; o.Path != "ticket.md" || o.LineOffset != 6 {
		t.Errorf("web-2 proxy log origin %+v, want ticket.md from line 7", o)
	}
	// One prefixed line quoted among a ticket's prose is not the command's output.
	if got := prefixedLogs("t.md", chunk{lines: []textLine{{s: "[pod/web-1/app] boom", n: 1}, {s: "the app fails", n: 2}}}); got != nil {
		t.Errorf("a quoted line read as kubectl logs --prefix output: %+v", got)
	}
}

func TestLooseContainerLogs(t *testing.T) {
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  uid: 0c6d6f0e-1b1e-4c55-9f43-3a3f7f4c9a10\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    image: app:1\n"
	b, rep := importDir(t, map[string][]byte{
		"pod.yaml": []byte(pod),
		"ticket.md": []byte("The app says:\n```\n$ kubectl logs -n shop web --previous\nstarting\npanic: boom\n```\n" +
			"and the sidecar:\n```\n$ kubectl logs -n shop web -c proxy\nlistening\n```\n"),
		"var/log/pods/shop_web_0c6d6f0e-1b1e-4c55-9f43-3a3f7f4c9a10/app/0.log": []byte("2026-11-29T20:25:01.1Z stdout F starting\n2026-11-29T20:25:02.2Z stderr F ready\n"),
		"app.log": []byte("starting\nready\n"),
	}, FormatLoose)
	read := func(name string) string { return bundleText(t, b, name) }
	if got := read(bundle.LogPath("shop", "web", "app", true)); got != "starting\npanic: boom\n" {
		t.Errorf("previous log %q", got)
	}
	if got := read(bundle.LogPath("shop", "web", "proxy", false)); got != "listening\n" {
		t.Errorf("proxy log %q", got)
	}
	if got := read(bundle.LogPath("shop", "web", "app", false)); got != "starting\nready\n" {
		t.Errorf("kubelet log file %q: runtime prefixes not cut", got)
	}
	if o := rep.Origins[bundle.LogPath("shop", "web", "app", true)]; o.Path != "ticket.md" || o.LineOffset != 3 {
		t.Errorf("previous log origin %+v, want ticket.md from line 4", o)
	}
	// A log that names no pod is a container's log of an unknown pod, kept line for line.
	frag := bundle.FragmentPath(bundle.FragmentLog, "app.log-L1.log")
	if f := rep.File("app.log"); f == nil || f.Status != StatusUsed || !slices.Contains(f.Produced, frag) {
		t.Errorf("a log that names no pod is kept as a fragment: %+v", f)
	}
	if o := rep.Origins[frag]; o.Path != "app.log" || o.LineOffset != 0 {
		t.Errorf("fragment origin %+v", o)
	}
}

// TestLooseCrictlPasteDamage reads crictl tables as they arrive in tickets: bullets,
// tabs for the column gaps, Windows line endings, an older crictl without the NAMESPACE
// column, and a last row cut off.
func TestLooseCrictlPasteDamage(t *testing.T) {
	ticket, err := os.ReadFile(filepath.Join(looseDir("node-command-not-found"), "ticket.md"))
	if err != nil {
		t.Fatal(err)
	}
	pod, _, _ := strings.Cut(string(ticket), "On the node:")
	var b strings.Builder
	b.WriteString(pod)
	b.WriteString("* $ sudo crictl ps -a\r\n")
	b.WriteString("* CONTAINER\tIMAGE\tCREATED\tSTATE\tNAME\tATTEMPT\tPOD ID\tPOD\r\n")
	b.WriteString("* 4c8c60f2a0e64\tcce7619cb8f38\t2 seconds ago\tExited\tapp\t2\t44e1dd43b9b63\tapp\r\n")
	b.WriteString("* 0123456789abc\tcce7619cb8f38\t3 sec\r\n")
	bun, rep := importDir(t, map[string][]byte{"ticket.md": []byte(b.String())}, FormatLoose)
	f := rep.File("ticket.md")
	if f == nil || f.Status != StatusUsed || !strings.Contains(f.Reason, "not a crictl ps row") || strings.Contains(f.Reason, "no pod UID") {
		t.Fatalf("ticket.md: %+v", f)
	}
	data, err := bun.ReadFile(bundle.NodePath("podflow-node", bundle.NodeCRIContainers))
	if err != nil {
		t.Fatal(err)
	}
	var ps struct {
		Containers []struct {
			ID     string
			State  string
			Labels map[string]string
		}
	}
	if err := json.Unmarshal(data, &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps.Containers) != 1 || ps.Containers[0].State != "CONTAINER_EXITED" ||
		ps.Containers[0].Labels[criLabelPodUID] != "1ee5c94f-772e-4b62-a354-7c786a1b96dd" {
		t.Errorf("containers %+v, want the exited app linked to its pod by UID", ps.Containers)
	}
	if o := rep.Origins[bundle.NodePath("podflow-node", bundle.NodeCRIContainers)]; len(o.ItemLines) != 1 || o.ItemLines[0] == 0 {
		t.Errorf("origin %+v: the row's line is lost", o)
	}
}

// An editor's autolink around a name that looks like an address is undone, so the
// message reads as its component printed it; a link with words of its own is kept.
func TestUnlinkAutolinks(t *testing.T) {
	for in, want := range map[string]string{
		`Failed to pull image "[quay.io/org/app:v1](http://quay.io/org/app:v1)": not found`: `Failed to pull image "quay.io/org/app:v1": not found`,
		`see [registry.example.io](https://registry.example.io) and [a](http://a) b`:        `see registry.example.io and a b`,
		`read [the docs](https://example.io/docs) first`:                                    `read [the docs](https://example.io/docs) first`,
		`broken [quay.io/x](http://quay.io/x`:                                               `broken [quay.io/x](http://quay.io/x`,
		`Pulling image "[ghcr.io/a/b:1](https://ghcr.io/a/b:1)" [x](http://y)`:              `Pulling image "ghcr.io/a/b:1" [x](http://y)`,
		// a trailing slash the tracker added, and a backslash it escaped into the target
		`dial tcp [172.17.32.81:8200](http://172.17.32.81:8200/): i/o timeout`:           `dial tcp 172.17.32.81:8200: i/o timeout`,
		`Put \"[http://vault.svc:8200/v1/login\](http://vault.svc:8200/v1/login%5C)": x`: `Put \"http://vault.svc:8200/v1/login\": x`,
	} {
		if got := unlink(in); got != want {
			t.Errorf("unlink(%q) = %q, want %q", in, got, want)
		}
	}
	rs := analyzePaste(t, map[string][]byte{"ticket.md": []byte("Failed to pull image \"[quay.io/org/operator:v1.2](http://quay.io/org/operator:v1.2)\": rpc error: code = NotFound desc = failed to pull and unpack image \"[quay.io/org/operator:v1.2](http://quay.io/org/operator:v1.2)\": no match for platform in manifest: not found\n")})
	if r := firstRoot(rs); r == nil || !strings.Contains(r.Cause, "image quay.io/org/operator:v1.2 is not published") {
		t.Errorf("root %+v, want the platform's cause naming the image as printed", r)
	}
}
