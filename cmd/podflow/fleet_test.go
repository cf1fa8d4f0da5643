package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
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
