package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"podflow.dev/podflow/index"
)

// TestIndexAddQuery walks the path a support team takes: add recorded bundles and a
// pasted ticket, then ask which causes were seen, who hit one, what is similar, and
// search the evidence.
func TestIndexAddQuery(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	blobs := filepath.Join(dir, "blobs")
	bundles := filepath.Join("..", "..", "testdata", "bundles")
	paste := filepath.Join(dir, "ticket-77.txt")
	// A pasted event row carrying a token: it is redacted on the way in, never stored.
	// (The row is not a common terminal's width, so the token's line is not read as the
	// rest of a message the terminal cut.)
	if err := os.WriteFile(paste, []byte("Warning  Failed  13m  kubelet  Failed to pull image \"registry.example.com/shop/web:1.2\": rpc error: code = NotFound desc = failed to pull and unpack image \"registry.example.com/shop/web:1.2\": not found\n"+
		"Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "index", "add", "--db", db, "--blobs", blobs, "--customer", "acme", "--label", "release=4.3",
		filepath.Join(bundles, "quota-exceeded"), filepath.Join(bundles, "oom-killed"), filepath.Join(bundles, "image-tag-not-found"))
	if code != 0 {
		t.Fatalf("index add: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runPodflow(t, "index", "add", "--db", db, "--blobs", blobs, "--customer", "globex", "-o", "json", paste)
	if code != 0 {
		t.Fatalf("index add paste: exit %d\n%s%s", code, out, errOut)
	}
	var f struct {
		Ticket, Class, Fingerprint string
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &f); err != nil || f.Ticket != "ticket-77" || !strings.HasPrefix(f.Fingerprint, index.FingerprintVersion+":") {
		t.Errorf("index add -o json: %q (%v)", out, err)
	}
	// Idempotent: the same inputs again add nothing.
	if code, out, _ := runPodflow(t, "index", "add", "--db", db, "--customer", "acme", filepath.Join(bundles, "oom-killed")); code != 0 || out != "" {
		t.Errorf("adding again: exit %d, %q", code, out)
	}
	code, out, _ = runPodflow(t, "query", "causes", "--db", db, "-o", "csv")
	if code != 0 || !strings.Contains(out, "admission-quota-exceeded,1,1,") || !strings.Contains(out, "runtime-oom-killed,1,1,") {
		t.Errorf("query causes: exit %d\n%s", code, out)
	}
	code, out, _ = runPodflow(t, "query", "causes", "--db", db, "--by", "release")
	if code != 0 || !strings.Contains(out, "4.3") {
		t.Errorf("query causes --by release: exit %d\n%s", code, out)
	}
	if code, _, _ := runPodflow(t, "query", "causes", "--db", db, "--by", "color"); code != exitUsage {
		t.Errorf("--by color: exit %d, want %d", code, exitUsage)
	}
	code, out, _ = runPodflow(t, "query", "who", "--db", db, "image-tag-not-found", "-o", "json")
	var who []map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &who) != nil {
		t.Fatalf("query who: exit %d\n%s", code, out)
	}
	code, out, _ = runPodflow(t, "query", "search", "--db", db, "not found")
	if code != 0 || !strings.Contains(out, "ticket-77") {
		t.Errorf("query search: exit %d\n%s", code, out)
	}
	if _, out, _ := runPodflow(t, "query", "search", "--db", db, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"); strings.Contains(out, "eyJ") {
		t.Errorf("the token reached the index:\n%s", out)
	}
	code, out, _ = runPodflow(t, "query", "sql", "--db", db, "SELECT COUNT(*) AS n FROM tickets", "-o", "json")
	if code != 0 || !strings.Contains(out, `"n": "4"`) {
		t.Errorf("query sql: exit %d\n%s", code, out)
	}
	if code, _, errOut := runPodflow(t, "query", "sql", "--db", db, "DELETE FROM tickets"); code == 0 || !strings.Contains(errOut, db+", opened read-only") {
		t.Errorf("query sql of a DELETE: exit %d, want a refusal naming the index\n%s", code, errOut)
	}
	code, out, _ = runPodflow(t, "index", "reanalyze", "--db", db, "--plan")
	if code != 0 || !strings.Contains(out, "4 ticket(s), 4 current, 0 to re-analyze") {
		t.Errorf("reanalyze --plan: exit %d\n%s", code, out)
	}
	code, out, _ = runPodflow(t, "query", "causes", "--db", db, "--by", "month", "-o", "csv")
	if code != 0 || !strings.HasPrefix(out, "cause,month,tickets,template,fingerprint\n") || !strings.Contains(out, "runtime-oom-killed,") {
		t.Errorf("query causes --by month: exit %d\n%s", code, out)
	}
	// A new signature over the stored lines: a dry run lists and records nothing, a
	// run records a new analysis of the ticket it changes, under a new knowledge version.
	sigFile := filepath.Join(dir, "sigs.yaml")
	if err := os.WriteFile(sigFile, []byte(`- id: registry-tag-missing
  stage: image
  title: the tag is not in the registry
  component: containerd
  patterns: ['failed to pull and unpack image "(?P<image>[^"]+)": not found']
  cause: the registry has no {image}
  fix: push the tag, or name one that exists
  fingerprint: [image]
  examples:
    fires: ['failed to pull and unpack image "r.example/a:1": not found']
    quiet: ['failed to pull and unpack image "r.example/a:1": unauthorized']
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runPodflow(t, "index", "reanalyze", "--db", db, "--signatures", sigFile, "--dry-run")
	if code != 0 || !strings.Contains(out, "ticket-77") || !strings.Contains(out, "over 4 ticket(s): explains 0 more, stops explaining 0") || !strings.Contains(out, "nothing recorded") {
		t.Errorf("reanalyze --signatures --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runPodflow(t, "index", "reanalyze", "--db", db, "--signatures", sigFile)
	if code != 0 || !strings.Contains(out, "1 new analyses recorded") {
		t.Errorf("reanalyze --signatures: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runPodflow(t, "query", "knowledge", "--db", db, "-o", "csv")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("query knowledge after signatures: want two versions, exit %d\n%s", code, out)
	}
	code, out, _ = runPodflow(t, "query", "who", "--db", db, "registry-tag-missing", "-o", "csv")
	if code != 0 || !strings.Contains(out, "ticket-77") {
		t.Errorf("query who registry-tag-missing: exit %d\n%s", code, out)
	}
	// Forget removes rows and blobs.
	code, out, _ = runPodflow(t, "index", "forget", "--db", db, "--blobs", blobs, "--customer", "acme")
	if code != 0 || out != "deleted 3 ticket(s), 3 blob(s)\n" {
		t.Errorf("forget: exit %d %q", code, out)
	}
	left, _ := os.ReadDir(blobs)
	if len(left) != 1 {
		t.Errorf("%d blobs left, want globex's 1", len(left))
	}
}

// TestIndexRefusesLeak checks that an input in which the leak scan finds a secret is
// refused, naming the file, line and rule, and that nothing of it is recorded.
func TestIndexRefusesLeak(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	// A report quotes evidence as it was: it is scanned, not rewritten.
	rep := filepath.Join(dir, "report.json")
	if err := os.WriteFile(rep, []byte(`{"schemaVersion":"1.1","summary":{"pods":1},"bundles":[],"findings":[{"id":"x#1","rule":"image-pull-unauthorized","stage":"image","severity":"error","root":true,
"cause":"pull refused","evidence":[{"excerpt":"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}]}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPodflow(t, "index", "add", "--db", db, rep)
	if code != exitError || !strings.Contains(errOut, "report.json:2: ") || !strings.Contains(errOut, "refuse") {
		t.Fatalf("a report with a secret: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := runPodflow(t, "index", "ls", "--db", db); strings.Count(out, "\n") != 1 {
		t.Errorf("the refused input was recorded:\n%s", out)
	}
}

// TestIndexAddChecksBeforeReading: index add builds the redaction policy only for an
// input that needs it and opens the index while the rules load, yet a mistake in a
// file of redaction rules the user gave, or an index that cannot be opened, is
// reported before any input is read, even when every input is a redacted podflow
// bundle that needs no policy; and an input that needs the policy still gets it.
func TestIndexAddChecksBeforeReading(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n- name: x\n  regex: 'no-group'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	oom := filepath.Join("..", "..", "testdata", "bundles", "oom-killed")
	code, out, errOut := runPodflow(t, "index", "add", "--db", db, "--redact-config", bad, oom)
	if code != exitError || !strings.Contains(errOut, `redaction config "`+bad+`": rule 1 (x): regex has no capture group`) {
		t.Errorf("a bad --redact-config: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := runPodflow(t, "index", "ls", "--db", db); strings.Count(out, "\n") != 1 {
		t.Errorf("an input was recorded despite the bad --redact-config:\n%s", out)
	}
	code, out, errOut = runPodflow(t, "index", "add", "--db", dir, oom)
	if code != exitError || !strings.Contains(errOut, dir) {
		t.Errorf("an index that is a folder: exit %d\n%s%s", code, out, errOut)
	}
	// A pasted token is redacted by the policy built for it, beside a bundle that
	// needs none.
	paste := filepath.Join(dir, "ticket-9.txt")
	if err := os.WriteFile(paste, []byte("Warning  BackOff  1m  kubelet  Back-off restarting failed container app in pod web-1 password=hunter2-very-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runPodflow(t, "index", "add", "--db", db, oom, paste); code != exitOK {
		t.Fatalf("index add: exit %d\n%s%s", code, out, errOut)
	}
	// The line is the finding's evidence, so it is stored, redacted.
	if _, out, _ := runPodflow(t, "query", "sql", "--db", db, "SELECT text FROM lines"); strings.Contains(out, "hunter2") || !strings.Contains(out, "password=<redacted:") {
		t.Errorf("the pasted line is not stored redacted:\n%s", out)
	}
	if _, out, _ := runPodflow(t, "index", "ls", "--db", db); strings.Count(out, "\n") != 3 {
		t.Errorf("want the bundle and the paste recorded:\n%s", out)
	}
}

// TestIndexAddMany adds many inputs at once with analyzers side by side and one writer,
// one of them poisoned: the others are all recorded, with the same findings as one by
// one, the poisoned one is reported with its file and reason, and the exit status says
// something was not recorded. Adding the same inputs again analyzes and records nothing.
func TestIndexAddMany(t *testing.T) {
	dir := t.TempDir()
	all, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bundles", "*"))
	if err != nil || len(all) < 12 {
		t.Fatalf("recorded bundles: %d (%v)", len(all), err)
	}
	inputs := all[:12]
	poisoned := filepath.Join(dir, "case-9.tgz")
	if err := os.WriteFile(poisoned, []byte("\x1f\x8b\x08\x00 this is no gzip stream past its magic"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, inputs[:6]...), poisoned)
	args = append(args, inputs[6:]...)

	roots := func(db string) map[string]string {
		t.Helper()
		code, out, errOut := runPodflow(t, "query", "sql", "--db", db, "-o", "csv", "--limit", "0",
			`SELECT t.ticket, f.class, f.fingerprint FROM tickets t JOIN analyses a ON a.ticket_id = t.id AND a.current = 1
			JOIN findings f ON f.analysis_id = a.id ORDER BY t.ticket, f.class, f.fingerprint`)
		if code != 0 {
			t.Fatalf("query sql: exit %d\n%s", code, errOut)
		}
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			name, rest, _ := strings.Cut(l, ",")
			got[name] += rest + ";"
		}
		return got
	}

	db := filepath.Join(dir, "many.db")
	code, out, errOut := runPodflow(t, append([]string{"index", "add", "--db", db, "--jobs", "3"}, args...)...)
	if code != exitError {
		t.Fatalf("index add with a poisoned input: exit %d, want %d\n%s%s", code, exitError, out, errOut)
	}
	if !strings.Contains(errOut, poisoned) || !strings.Contains(errOut, "gzip") || !strings.Contains(errOut, "1 of 13 input(s) not recorded") {
		t.Errorf("the poisoned input is not reported with its file and reason:\n%s", errOut)
	}
	if n := strings.Count(out, "\n"); n != len(inputs) {
		t.Errorf("index add printed %d ticket line(s), want %d:\n%s", n, len(inputs), out)
	}
	many := roots(db)
	if len(many) != len(inputs) {
		t.Errorf("%d ticket(s) recorded, want the %d good inputs: %v", len(many), len(inputs), many)
	}

	// One analyzer, one input per run: the same tickets and findings.
	one := filepath.Join(dir, "one.db")
	for _, in := range inputs {
		if code, _, errOut := runPodflow(t, "index", "add", "--db", one, in); code != 0 {
			t.Fatalf("index add %s: exit %d\n%s", in, code, errOut)
		}
	}
	if want := roots(one); !reflect.DeepEqual(many, want) {
		t.Errorf("--jobs 3 recorded\n%v\none at a time recorded\n%v", many, want)
	}

	// Again: every good input is known by its digest, the poisoned one fails again.
	code, out, errOut = runPodflow(t, append([]string{"index", "add", "--db", db, "--jobs", "3"}, args...)...)
	if code != exitError || out != "" || strings.Count(errOut, "already in the index as ticket") != len(inputs) {
		t.Errorf("adding again: exit %d, stdout %q\n%s", code, out, errOut)
	}
	if code, _, _ := runPodflow(t, "index", "add", "--db", db, "--jobs", "0", inputs[0]); code != exitUsage {
		t.Errorf("--jobs 0: exit %d, want %d", code, exitUsage)
	}
}

// TestIndexAddInterrupted stops index add with Ctrl-C once it has committed a batch:
// it exits with the signal's status, says what it kept, the inputs recorded stay
// recorded, and adding the same inputs again records the rest.
func TestIndexAddInterrupted(t *testing.T) {
	bin := buildPodflow(t)
	dir := t.TempDir()
	inputs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bundles", "*"))
	if err != nil || len(inputs) < 20 {
		t.Fatalf("recorded bundles: %d (%v)", len(inputs), err)
	}
	inputs = inputs[:20]
	db := filepath.Join(dir, "index.db")
	outText, errText, err := signalAtCheckpoint(t, bin, "record", syscall.SIGINT, false, append([]string{"index", "add", "--db", db}, inputs...)...)
	out, errOut := stringer(outText), stringer(errText)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "interrupted by SIGINT: stopped;") || !strings.Contains(errOut.String(), "recorded are kept") {
		t.Errorf("stderr does not say what was kept:\n%s", errOut.String())
	}
	kept := strings.Count(out.String(), "\n")
	// The writer waited at its first commit until the signal: the analyzer could get
	// only as far ahead as the pipeline's channels hold.
	if kept == 0 || kept >= len(inputs) {
		t.Fatalf("%d of %d input(s) recorded before the signal stopped the run\n%s", kept, len(inputs), out.String())
	}
	code, rest, errText := runPodflow(t, append([]string{"index", "add", "--db", db}, inputs...)...)
	if code != 0 || strings.Count(rest, "\n") != len(inputs)-kept || strings.Count(errText, "already in the index as ticket") != kept {
		t.Errorf("adding again after the signal: exit %d, %d new, want %d\n%s%s", code, strings.Count(rest, "\n"), len(inputs)-kept, rest, errText)
	}
}
