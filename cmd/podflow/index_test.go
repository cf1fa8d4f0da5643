package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	if err := os.WriteFile(paste, []byte("Warning  Failed  3m  kubelet  Failed to pull image \"registry.example.com/shop/web:1.2\": rpc error: code = NotFound desc = failed to pull and unpack image \"registry.example.com/shop/web:1.2\": not found\n"+
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
	if code, _, _ := runPodflow(t, "query", "sql", "--db", db, "DELETE FROM tickets"); code == 0 {
		t.Error("query sql deleted rows")
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
