package main

import (
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestFleetJobSpec checks the Indexed Job fleet run creates: one index per shard,
// retries per index, the index's URL only in the Secret.
func TestFleetJobSpec(t *testing.T) {
	o := &fleetRunOptions{store: storeFlags{db: "postgres://u:pw@db/podflow", tenant: "acme"}, namespace: "podflow", image: "podflow:v1",
		parallelism: 3, backoffPerIdx: 2, blobsClaim: "blobs", runAsUser: 65534, pullPolicy: "IfNotPresent"}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	job, secret := fleetJob(o)
	s := job.Spec
	if *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 6 || *s.Parallelism != 3 || *s.BackoffLimitPerIndex != 2 {
		t.Errorf("job spec: mode %v completions %d parallelism %d perIndex %d", *s.CompletionMode, *s.Completions, *s.Parallelism, *s.BackoffLimitPerIndex)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restart policy %s: backoffLimitPerIndex needs Never", s.Template.Spec.RestartPolicy)
	}
	c := s.Template.Spec.Containers[0]
	if strings.Contains(strings.Join(c.Command, " "), "pw") || c.Env[0].ValueFrom.SecretKeyRef.Name != secret.Name || secret.StringData["index"] != o.store.db {
		t.Errorf("the index URL must travel in the Secret only: %v %+v", c.Command, c.Env)
	}
	if !strings.Contains(strings.Join(c.Command, " "), "--shards 6 --tenant acme") {
		t.Errorf("command %v", c.Command)
	}
	if !*c.SecurityContext.RunAsNonRoot || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("security context %+v", c.SecurityContext)
	}
	o.store.db = "/srv/index.db"
	if err := o.validate(); err == nil {
		t.Error("fleet run accepted a SQLite file for pods on many nodes")
	}
}

// TestReanalyzeJobs re-analyzes kept inputs with local workers after the knowledge
// changed, keeps the old analyses, and compares the two versions.
func TestReanalyzeJobs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	blobs := filepath.Join(dir, "blobs")
	bundles := filepath.Join("..", "..", "testdata", "bundles")
	if code, out, errOut := runPodflow(t, "index", "add", "--db", db, "--blobs", blobs,
		filepath.Join(bundles, "oom-killed"), filepath.Join(bundles, "crash-exit-1"), filepath.Join(bundles, "quota-exceeded")); code != 0 {
		t.Fatalf("index add: %d\n%s%s", code, out, errOut)
	}
	// An index made by an older podflow; one of its kept inputs was damaged since.
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE analyses SET knowledge = 'k-old'"); err != nil {
		t.Fatal(err)
	}
	var broken string
	if err := raw.QueryRow("SELECT blob FROM tickets WHERE ticket = 'quota-exceeded'").Scan(&broken); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if err := os.WriteFile(filepath.Join(blobs, broken), []byte("not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runPodflow(t, "index", "reanalyze", "--db", db, "--plan")
	if code != 0 || !strings.Contains(out, "3 ticket(s), 0 current, 3 to re-analyze (3 with a kept input") {
		t.Errorf("plan: %d %s", code, out)
	}
	code, out, errOut := runPodflow(t, "index", "reanalyze", "--db", db, "--jobs", "2", "--blobs", blobs)
	if code != exitError || out != "2 re-analyzed, 1 failed\n" || !strings.Contains(errOut, "ticket 3") {
		t.Errorf("reanalyze --jobs: exit %d %q\n%s", code, out, errOut)
	}
	catalog, _ := selectRules(nil, nil, nil)
	k := knowledgeVersion(catalog)
	code, out, _ = runPodflow(t, "query", "knowledge", "--db", db, "k-old", k, "-o", "csv")
	if code != 0 || !strings.Contains(out, "k-old,"+k+",2,0,0,0") {
		t.Errorf("query knowledge: %d %s", code, out)
	}
}

// TestReanalyzeInterrupted stops a re-analysis with SIGINT once its first analysis is
// done: that analysis is recorded, the jobs it had claimed and not finished go back to
// the queue rather than staying "running" for ever, stderr says so, and running the
// same command again re-analyzes exactly the rest.
func TestReanalyzeInterrupted(t *testing.T) {
	bin := buildPodflow(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	blobs := filepath.Join(dir, "blobs")
	bundles := filepath.Join("..", "..", "testdata", "bundles")
	var inputs []string
	for _, b := range []string{"oom-killed", "crash-exit-1", "quota-exceeded", "demo"} {
		inputs = append(inputs, filepath.Join(bundles, b))
	}
	if code, out, errOut := runPodflow(t, append([]string{"index", "add", "--db", db, "--blobs", blobs}, inputs...)...); code != 0 {
		t.Fatalf("index add: %d\n%s%s", code, out, errOut)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("UPDATE analyses SET knowledge = 'k-old'"); err != nil {
		t.Fatal(err)
	}
	_, errText, err := signalAtCheckpoint(t, bin, "reanalyze", syscall.SIGINT, false, "index", "reanalyze", "--db", db, "--jobs", "1", "--blobs", blobs)
	errOut := stringer(errText)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "interrupted by SIGINT: stopped; 1 re-analyzed and 0 failed are kept, 3 handed back to the queue") {
		t.Errorf("stderr does not say what was kept and handed back:\n%s", errOut.String())
	}
	states := func() map[string]int {
		rows, err := raw.Query("SELECT state, COUNT(*) FROM jobs GROUP BY state")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var s string
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			m[s] = n
		}
		return m
	}
	if got := states(); got["done"] != 1 || got["queued"] != 3 || len(got) != 2 {
		t.Errorf("jobs after the signal: %v, want 1 done and 3 queued", got)
	}
	code, rest, errText := runPodflow(t, "index", "reanalyze", "--db", db, "--jobs", "2", "--blobs", blobs)
	if code != 0 || rest != "3 re-analyzed, 0 failed\n" {
		t.Errorf("reanalyze again after the signal: exit %d %q\n%s", code, rest, errText)
	}
	if got := states(); got["done"] != 4 || len(got) != 1 {
		t.Errorf("jobs at the end: %v, want 4 done", got)
	}
}
