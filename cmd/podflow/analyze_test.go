package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// fixture is a rule test bundle, reused here as a small real-looking bundle.
func fixture(rule, name string) string {
	return filepath.Join("..", "..", "rules", "testdata", rule, name, "bundle")
}

func runPodflow(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestAnalyzeExitCodes(t *testing.T) {
	oom := fixture("runtime-oom-killed", "fires-memory-limit")
	quiet := fixture("runtime-oom-killed", "quiet-sigkill-not-oom")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"finding at the default threshold", []string{"analyze", oom}, exitFindings},
		{"finding below --fail-on", []string{"analyze", oom, "--fail-on", "critical"}, exitOK},
		{"findings never fail with --fail-on none", []string{"analyze", oom, "--fail-on", "none"}, exitOK},
		{"nothing found by the chosen rule", []string{"analyze", quiet, "--rule", "runtime-oom-killed"}, exitOK},
		{"rule skipped by --skip-rule", []string{"analyze", oom, "--skip-rule", "runtime-oom-killed"}, exitOK},
		{"namespace the evidence does not hold", []string{"analyze", oom, "-n", "elsewhere"}, exitError},
		{"pod the evidence does not hold", []string{"analyze", oom, "--pod", "batch/absent"}, exitError},
		{"unknown output", []string{"analyze", oom, "-o", "pdf"}, exitUsage},
		{"unknown severity", []string{"analyze", oom, "--fail-on", "fatal"}, exitUsage},
		{"unknown rule", []string{"analyze", oom, "--rule", "no-such-rule"}, exitUsage},
		{"bad pod", []string{"analyze", oom, "--pod", "nameonly"}, exitUsage},
		{"no bundle", []string{"analyze"}, exitUsage},
		{"missing bundle", []string{"analyze", filepath.Join(t.TempDir(), "absent.tar.gz")}, exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runPodflow(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
		})
	}
}

func TestAnalyzeTableNamesCauseAndEvidence(t *testing.T) {
	code, out, _ := runPodflow(t, "analyze", fixture("scheduling-insufficient-resources", "fires-insufficient-cpu"))
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"1 root cause(s), 1 finding(s) in all, affecting 2 of 4 pod(s)",
		"shop/web-7d9f8b6c5d-* (2",
		"scheduling",
		"no node has room for its requests (cpu",
		"cluster-resources/pods/shop.json:/items/1/status/conditions/0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "┌│↳") {
		t.Errorf("piped output should be plain ASCII:\n%s", out)
	}
}

func TestAnalyzeJSONIsTheVersionedReport(t *testing.T) {
	code, out, _ := runPodflow(t, "analyze", fixture("image-pull-dns", "fires-registry-host-unresolvable"), "-o", "json", "--pod", "shop/api-6b8c7d5f9-x8m4n")
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		SchemaVersion string `json:"schemaVersion"`
		Scope         struct{ Pod string }
		Findings      []struct {
			ID, Rule string
			Root     bool
		}
		Pods []struct{ Name, RootCause string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.SchemaVersion != "1.4" || rep.Scope.Pod != "shop/api-6b8c7d5f9-x8m4n" || len(rep.Findings) != 1 ||
		rep.Findings[0].Rule != "image-pull-dns" || !rep.Findings[0].Root || len(rep.Pods) != 1 || rep.Pods[0].RootCause != rep.Findings[0].ID {
		t.Errorf("report = %+v", rep)
	}
}

func TestAnalyzeMarkdownIsATicket(t *testing.T) {
	_, out, _ := runPodflow(t, "analyze", fixture("runtime-oom-killed", "fires-memory-limit"), "-o", "markdown")
	for _, want := range []string{
		"# podflow analysis",
		"## Root cause: container killed by the kernel OOM killer (runtime, error)",
		"- `nodes/n1/dmesg.log:3-4`: Memory cgroup out of memory: Killed process 48211",
		"```sh\nkubectl get pod -n batch worker-7f6d5c4b3-lp9xk",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestExplainCommand(t *testing.T) {
	b := fixture("runtime-oom-killed", "fires-memory-limit")
	code, out, errOut := runPodflow(t, "explain", b, "batch/worker-7f6d5c4b3-lp9xk")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Pod batch/worker-7f6d5c4b3-lp9xk (node n1, phase Running)",
		"Root cause: [runtime] container worker was killed by the kernel OOM killer",
		"runtime      broken",
		"nodes/n1/dmesg.log:3-4",
		"node         no-evidence",
		"missing: kubelet journal for node n1: not in bundle",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := runPodflow(t, "explain", b, "batch/nope"); code != exitError || !strings.Contains(errOut, "pod batch/nope is not in the bundle") {
		t.Errorf("missing pod: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runPodflow(t, "explain", b, "not-a-pod-ref"); code != exitUsage {
		t.Errorf("bad pod ref: exit %d, want %d", code, exitUsage)
	}
}

func TestRulesCommand(t *testing.T) {
	code, out, _ := runPodflow(t, "rules")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, r := range rules.All() {
		if !strings.Contains(out, r.ID) || !strings.Contains(out, r.Title) {
			t.Errorf("list lacks %s", r.ID)
		}
	}
	_, out, _ = runPodflow(t, "rules", "image-pull-dns")
	if !strings.HasPrefix(out, "image-pull-dns (stage image, severity error)\n") || !strings.Contains(out, "## Confirm on a live cluster") {
		t.Errorf("rule doc:\n%s", out)
	}
	_, out, _ = runPodflow(t, "rules", "-o", "json")
	var infos []struct{ ID, Stage, Doc string }
	catalog, err := rules.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != len(catalog) || infos[0].ID != rules.All()[0].ID {
		t.Errorf("rules -o json: %v %+v", err, infos)
	}
	for _, i := range infos {
		if i.Stage == "" || !strings.Contains(i.Doc, "## Fix") {
			t.Errorf("rules -o json: %s lacks its stage or documentation", i.ID)
		}
	}
	if code, _, _ := runPodflow(t, "rules", "nope"); code != exitUsage {
		t.Errorf("unknown rule: exit %d", code)
	}
}

func TestAnalyzeStdin(t *testing.T) {
	paste, err := os.ReadFile(filepath.Join("..", "..", "importer", "testdata", "loose", "oom-killed", "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"analyze", "-", "-o", "json"}, streams{In: bytes.NewReader(paste), Out: &out, ErrOut: &errOut})
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFindings, errOut.String())
	}
	var rep struct {
		Findings []struct {
			Rule     string
			Root     bool
			Evidence []struct{ Path string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Rule != "runtime-oom-killed" || rep.Findings[0].Evidence[0].Path != "stdin" {
		t.Errorf("findings from stdin: %+v", rep.Findings)
	}
}

// TestReadmeListsEveryRule keeps the README's catalog in step with the registry and
// the signatures: every rule and signature under its stage, and nothing that does not
// exist. The catalog's rows are "| stage | rules | signatures |".
func TestReadmeListsEveryRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := rules.Signatures()
	if err != nil {
		t.Fatal(err)
	}
	ruleRows, sigRows := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 5 && analyze.Stage(strings.TrimSpace(cells[1])).Valid() {
			ruleRows[strings.TrimSpace(cells[1])] = cells[2]
			sigRows[strings.TrimSpace(cells[1])] = cells[3]
		}
	}
	ids := func(cell string) []string {
		var out []string
		for _, id := range strings.Split(cell, ",") {
			if id = strings.Trim(strings.TrimSpace(id), "`"); id != "" && id != "–" {
				out = append(out, id)
			}
		}
		return out
	}
	for _, r := range rules.All() {
		if !slices.Contains(ids(ruleRows[string(r.Stage)]), r.ID) {
			t.Errorf("README.md does not list rule %s under stage %s", r.ID, r.Stage)
		}
	}
	for _, s := range sigs {
		if !slices.Contains(ids(sigRows[string(s.Stage)]), s.ID) {
			t.Errorf("README.md does not list signature %s under stage %s", s.ID, s.Stage)
		}
	}
	listedRules, listedSigs := 0, 0
	for stage := range ruleRows {
		for _, id := range ids(ruleRows[stage]) {
			if rules.ByID(id) == nil {
				t.Errorf("README.md lists %q, which is no rule", id)
			}
			listedRules++
		}
		for _, id := range ids(sigRows[stage]) {
			if rules.SignatureByID(id) == nil {
				t.Errorf("README.md lists %q, which is no signature", id)
			}
			listedSigs++
		}
	}
	if listedRules != len(rules.All()) || listedSigs != len(sigs) {
		t.Errorf("README.md lists %d rules and %d signatures, podflow has %d and %d", listedRules, listedSigs, len(rules.All()), len(sigs))
	}
}

// TestVerbosityChangesStderrOnly: -v and -vv add detail on stderr and never change the
// report; --timelines is what adds every pod's timeline to it.
func TestVerbosityChangesStderrOnly(t *testing.T) {
	b := fixture("runtime-oom-killed", "fires-memory-limit")
	_, plain, _ := runPodflow(t, "analyze", b, "-o", "json", "--fail-on", "none")
	for _, v := range []string{"-v", "-vv"} {
		if _, out, _ := runPodflow(t, "analyze", b, "-o", "json", "--fail-on", "none", v); out != plain {
			t.Errorf("%s changed stdout:\n%s\nwant:\n%s", v, out, plain)
		}
	}
	_, withTimelines, _ := runPodflow(t, "analyze", b, "-o", "json", "--fail-on", "none", "--timelines")
	var r struct {
		Pods []struct {
			Timeline []json.RawMessage `json:"timeline"`
		} `json:"pods"`
	}
	if err := json.Unmarshal([]byte(withTimelines), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Pods) == 0 || len(r.Pods[0].Timeline) == 0 {
		t.Errorf("--timelines: no pod timeline in the report:\n%s", withTimelines)
	}
}

// explain without NAMESPACE/POD explains the one pod its inputs hold (a pasted excerpt
// whose Name line is cut has no name to give), and says which pods there are when they
// hold several.
func TestExplainTheOnlyPod(t *testing.T) {
	dir := t.TempDir()
	paste := filepath.Join(dir, "ticket.txt")
	if err := os.WriteFile(paste, []byte("    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Restart Count:  3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "explain", paste, "--width", "80")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "Pod (unnamed in ticket.txt) (node -, phase -)") || !strings.Contains(out, "runtime      broken") {
		t.Errorf("explain of the one pod:\n%s", out)
	}
	b := fixture("runtime-oom-killed", "fires-memory-limit")
	if code, out, _ := runPodflow(t, "explain", b); code != exitOK || !strings.Contains(out, "Pod batch/worker-7f6d5c4b3-lp9xk") {
		t.Errorf("explain of a bundle's one pod: exit %d\n%s", code, out)
	}
	demo := "../../testdata/bundles/demo"
	if code, _, errOut := runPodflow(t, "explain", demo); code != exitUsage || !strings.Contains(errOut, "name one after the inputs") {
		t.Errorf("several pods: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runPodflow(t, "explain", filepath.Join(dir, "typo.txt")); code != exitUsage || !strings.Contains(errOut, "typo.txt: no such file or directory") {
		t.Errorf("a missing input: exit %d, stderr %q", code, errOut)
	}
}

// analyze scopes its load to the namespace of --namespace or of --pod, and a scoped
// report is the full load's (analyze.TestScopedLoadReportsTheSame).
func TestAnalyzeScopesTheLoad(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "bundles", "demo")
	for _, scope := range [][]string{{"-n", "oom-killed"}, {"--pod", "oom-killed/app"}} {
		code, _, errOut := runPodflow(t, append([]string{"analyze", demo, "--fail-on", "none", "-o", "json", "-v"}, scope...)...)
		if code != exitOK || !strings.Contains(errOut, `msg="scoped load"`) || !strings.Contains(errOut, "namespace=oom-killed") {
			t.Errorf("%v: exit %d, no scoped load of oom-killed in the log:\n%s", scope, code, errOut)
		}
	}
}
