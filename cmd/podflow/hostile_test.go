package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"podflow.dev/podflow/bundle"
)

// evilName is an entry name an attacker controls: a title-setting OSC sequence, a screen
// clear, and a forged second line.
const evilName = "evil\x1b]0;PWNED\x07\x1b[2J\nproblem: none, bundle intact"

// assertInert fails when output holds a control character other than a newline, or a
// line the evil name forged.
func assertInert(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		for _, c := range []byte(line) {
			if c < 0x20 && c != '\t' || c == 0x7f {
				t.Fatalf("%s: raw control byte %#x in line %q", what, c, line)
			}
		}
		if strings.HasPrefix(line, "problem: none") {
			t.Fatalf("%s: forged line %q", what, line)
		}
	}
}

func TestVerifyInspectScanEscapeBundleNames(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	evilList := filepath.Join(b, "cluster-resources", "pods", evilName+".json")
	if err := os.WriteFile(evilList, []byte(`{"items":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := "password=hunter2hunter2\nAKIAIOSFODNN7EXAMPLE\n"
	if err := os.WriteFile(filepath.Join(b, "cluster-resources", evilName+".log"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runPodflow(t, "verify", b)
	if code != exitError || !strings.Contains(out, `extra: cluster-resources/evil\x1b]0;PWNED\a\x1b[2J\nproblem: none`) {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	assertInert(t, "verify", out+errOut)

	code, out, errOut = runPodflow(t, "inspect", b)
	if code != exitOK || !strings.Contains(out, `evil\x1b]0;PWNED`) {
		t.Fatalf("inspect: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	assertInert(t, "inspect", out+errOut)

	code, out, errOut = runPodflow(t, "scan", b)
	if code != exitFindings || !strings.Contains(out, `cluster-resources/evil\x1b]0;PWNED\a\x1b[2J\nproblem: none, bundle intact.log:`) {
		t.Fatalf("scan: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	assertInert(t, "scan", out+errOut)
}

// verify and inspect count the same files, and inspect lists every node it counts.
func TestVerifyInspectCountAlike(t *testing.T) {
	b := filepath.Join("..", "..", "testdata", "bundles", "oom-killed")
	_, vout, _ := runPodflow(t, "verify", b)
	_, iout, _ := runPodflow(t, "inspect", b)
	vn := regexp.MustCompile(`(\d+) files`).FindStringSubmatch(vout)
	in := regexp.MustCompile(`Size: +(\d+) files`).FindStringSubmatch(iout)
	if vn == nil || in == nil || vn[1] != in[1] {
		t.Fatalf("verify counts %v files, inspect %v\nverify:\n%s\ninspect:\n%s", vn, in, vout, iout)
	}
	if !strings.Contains(iout, "Nodes:       2: podflow-gpu-node, podflow-node (node evidence: podflow-node)") ||
		!regexp.MustCompile(`(?m)^  nodes +2$`).MatchString(iout) {
		t.Fatalf("inspect lists nodes unlike it counts them:\n%s", iout)
	}
	_, jout, _ := runPodflow(t, "inspect", b, "-o", "json")
	var s bundle.Summary
	if err := json.Unmarshal([]byte(jout), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != s.Kinds[bundle.KindNodes] {
		t.Fatalf("inspect -o json: nodes %v, count %d", s.Nodes, s.Kinds[bundle.KindNodes])
	}
}

// confirmSafe fails when a confirm command carries the hostile name, and requires that
// at least one says it left a name out.
func confirmSafe(t *testing.T, what string, commands []string, hostile string) {
	t.Helper()
	noted := false
	for _, c := range commands {
		if strings.Contains(c, hostile) {
			t.Errorf("%s: confirm command holds %q: %s", what, hostile, c)
		}
		noted = noted || strings.Contains(c, "NAME stands for a name in the evidence that is not a valid Kubernetes name")
	}
	if len(commands) == 0 || !noted {
		t.Errorf("%s: no command with a placeholder and its note: %q", what, commands)
	}
}

func TestConfirmCommandsRefuseHostileNames(t *testing.T) {
	paste, err := os.ReadFile(filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed", "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pastePath := filepath.Join(t.TempDir(), "describe.txt")
	if err := os.WriteFile(pastePath, []byte(strings.Replace(string(paste), "Name:             app\n", "Name:             app;id;\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	pods := filepath.Join(b, "cluster-resources", "pods", "oom-killed.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods, []byte(strings.ReplaceAll(string(data), `"namespace": "oom-killed"`, `"namespace": "$(id>x)"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ input, hostile string }{{pastePath, "app;id;"}, {b, "$(id>x)"}} {
		_, out, errOut := runPodflow(t, "analyze", tc.input, "-o", "json", "--fail-on", "none")
		var report struct {
			Findings []struct {
				Rule    string   `json:"rule"`
				Confirm []string `json:"confirm"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("%s: %v\n%s%s", tc.hostile, err, out, errOut)
		}
		var all []string
		for _, f := range report.Findings {
			all = append(all, f.Confirm...)
		}
		confirmSafe(t, tc.hostile+" json", all, tc.hostile)

		_, md, _ := runPodflow(t, "analyze", tc.input, "-o", "markdown", "--fail-on", "none")
		var fenced []string
		for _, block := range strings.Split(md, "```sh\n")[1:] {
			fenced = append(fenced, strings.Split(strings.SplitN(block, "```", 2)[0], "\n")...)
		}
		confirmSafe(t, tc.hostile+" markdown", fenced, tc.hostile)
	}
}

// analyze refuses what verify refuses: a link in a podflow bundle.
func TestAnalyzeRefusesLinkInPodflowBundle(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	journal := filepath.Join(b, "nodes", "podflow-node", "kubelet.log")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", journal); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", b}, {"explain", b, "oom-killed/app"}, {"convert", b, "-o", filepath.Join(t.TempDir(), "out")}} {
		code, out, errOut := runPodflow(t, args...)
		if code != exitError || !strings.Contains(errOut, `"nodes/podflow-node/kubelet.log": symbolic link to /etc/passwd`) || out != "" {
			t.Errorf("%s: exit %d, want %d and the link named\nstdout:\n%s\nstderr:\n%s", args[0], code, exitError, out, errOut)
		}
	}
}

// A foreign format may hold links: they are listed as skipped, never followed.
func TestAnalyzeSkipsLinksInForeignFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sosreport-n1")
	for name, data := range map[string]string{
		"sos_commands/host/hostname":  "n1\n",
		"var/lib/kubelet/config.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "hostname")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "node")
	if code, _, errOut := runPodflow(t, "convert", dir, "-o", out); code != exitOK {
		t.Fatalf("convert sosreport: exit %d\n%s", code, errOut)
	}
	report, err := os.ReadFile(filepath.Join(out, "import-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), `"hostname"`) || !strings.Contains(string(report), "symbolic link to /etc/passwd") {
		t.Fatalf("the link is not listed as skipped:\n%s", report)
	}
}

// A podflow bundle that fails verify is analyzed, with a warning naming the files.
func TestAnalyzeWarnsOnChecksumMismatch(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	journal := filepath.Join(b, "nodes", "podflow-node", "kubelet.log")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1
	if err := os.WriteFile(journal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "analyze", b, "--fail-on", "none")
	if code != exitOK || !strings.Contains(errOut, "does not match its manifest (checksum nodes/podflow-node/kubelet.log)") || out == "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func describePaste(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed", "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A paste is told from an archive by its content, not its name.
func TestPasteWithoutExtensionIsText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ticket-4711")
	if err := os.WriteFile(p, describePaste(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", p, "--format", "loose", "-o", "json"}, {"analyze", p, "-o", "json"}} {
		code, out, errOut := runPodflow(t, args...)
		if code != exitFindings || !strings.Contains(out, `"runtime-oom-killed"`) {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
}

func TestArchiveMessagesSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919%251 + 1)
	}
	for name, want := range map[string]string{
		"random.tar.gz": "not a gzip, xz or tar file",
		"random.tar":    "not a gzip, xz or tar file",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, random, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, verb := range []string{"analyze", "verify"} {
			code, _, errOut := runPodflow(t, verb, p)
			if code != exitError || !strings.Contains(errOut, want) || strings.Contains(errOut, "invalid tar header") {
				t.Errorf("%s %s: exit %d, want %q\n%s", verb, name, code, want, errOut)
			}
		}
	}
}

// A link to a bundle directory is the directory the user meant, with or without a
// trailing slash; links inside it are still refused.
func TestSymlinkToBundleDirectory(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	link := filepath.Join(t.TempDir(), "latest")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, link + "/"} {
		if code, out, errOut := runPodflow(t, "verify", p); code != exitOK || !strings.Contains(out, "intact") {
			t.Errorf("verify %s: exit %d\n%s%s", p, code, out, errOut)
		}
		if code, _, errOut := runPodflow(t, "analyze", p); code != exitFindings {
			t.Errorf("analyze %s: exit %d\n%s", p, code, errOut)
		}
	}
}

// One file that cannot be read leaves the rest of a loose directory analyzed, and is
// listed.
func TestUnreadableFileInLooseDirectoryIsSkipped(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "describe.txt"), describePaste(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	unreadable := []string{"pipe"}
	if os.Geteuid() != 0 { // root reads any file whatever its mode
		if err := os.WriteFile(filepath.Join(dir, "secret.log"), []byte("x\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		unreadable = append(unreadable, "secret.log")
	}
	code, out, errOut := runPodflow(t, "analyze", dir, "--format", "loose", "-o", "json")
	if code != exitFindings || !strings.Contains(out, `"runtime-oom-killed"`) {
		t.Fatalf("analyze: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, u := range unreadable {
		if !strings.Contains(errOut, u+" left out") {
			t.Errorf("analyze does not list %s as left out:\n%s", u, errOut)
		}
	}
	converted := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := runPodflow(t, "convert", dir, "--format", "loose", "-o", converted); code != exitOK {
		t.Fatalf("convert: exit %d\n%s", code, errOut)
	}
	report, err := os.ReadFile(filepath.Join(converted, "import-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Files []struct{ Path, Status string } `json:"files"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		t.Fatal(err)
	}
	for _, u := range unreadable {
		found := false
		for _, f := range rep.Files {
			found = found || (f.Path == u && f.Status == "unreadable")
		}
		if !found {
			t.Errorf("import report does not list %s as unreadable:\n%s", u, report)
		}
	}
}

// explain prints evidence strings escaped: a node name from the pod's JSON carries an
// escape sequence.
func TestExplainEscapesEvidence(t *testing.T) {
	b := copyBundle(t, filepath.Join("..", "..", "testdata", "bundles", "oom-killed"))
	pods := filepath.Join(b, "cluster-resources", "pods", "oom-killed.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.ReplaceAll(string(data), `"nodeName": "podflow-node"`, `"nodeName": "podflow-node\u001b]0;PWNED\u0007\nproblem: none"`)
	if evil == string(data) {
		t.Fatal("fixture has no nodeName to rewrite")
	}
	if err := os.WriteFile(pods, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "explain", b, "oom-killed/app")
	if code != exitOK || !strings.Contains(out, `podflow-node\x1b]0;PWNED\a\nproblem: none`) {
		t.Fatalf("explain: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	assertInert(t, "explain", out+errOut)
}
