//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// fleetImage is the image e2e.sh builds with bin/podflow in it.
const (
	fleetImage    = "podflow.test/podflow:1"
	fleetImageTar = "podflow.tar"
)

// TestFleetIndexedJob runs a backfill as a real Indexed Job on the test bed: four
// tickets with kept inputs in a PostgreSQL index, analyzed by an older knowledge
// version; four shards, parallelism two, and one poisoned input. The poisoned shard's
// index must fail on its own (backoffLimitPerIndex) while the other three complete and
// their new analyses are in the store.
func TestFleetIndexedJob(t *testing.T) {
	admin := os.Getenv("PODFLOW_E2E_POSTGRES")
	if admin == "" {
		t.Fatal("PODFLOW_E2E_POSTGRES is not set: testbed/e2e.sh starts a PostgreSQL for the fleet test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := tb.ctr(ctx, "images", "import", "--snapshotter", tb.snapshotter, filepath.Join(tb.imagesDir, fleetImageTar)); err != nil {
		t.Fatalf("import %s: %v (%s)", fleetImageTar, err, out)
	}
	db := fleetDatabase(t, ctx, admin)
	cli := &podflowCLI{bin: tb.podflow}
	blobs := tb.path("fleet-blobs")
	if err := os.MkdirAll(blobs, 0o700); err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{"oom-killed", "quota-exceeded", "image-tag-not-found", "crash-exit-1"}
	for _, in := range inputs {
		r, err := cli.run(ctx, "index", "add", "--db", db, "--blobs", blobs, "--customer", "e2e", filepath.Join(repo, "testdata", "bundles", in))
		if err != nil || r.code != 0 {
			t.Fatalf("%v %v", r, err)
		}
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT set_config('podflow.tenant', 'default', false)"); err != nil {
		t.Fatal(err)
	}
	// The index was made by an older podflow: its analyses are of another knowledge.
	if _, err := conn.Exec(ctx, "UPDATE analyses SET knowledge = 'k-old'"); err != nil {
		t.Fatal(err)
	}
	// Ticket IDs 1..4 fall in shards 1, 2, 3, 0; ticket 3 (shard 3) is poisoned.
	var poisoned string
	if err := conn.QueryRow(ctx, "SELECT blob FROM tickets WHERE id = 3").Scan(&poisoned); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blobs, poisoned), []byte("\x1f\x8b\x08this is not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := cli.run(ctx, "fleet", "run", "--kubeconfig", tb.adminKubeconfig, "--kube", "default", "--name", "podflow-fleet-e2e",
		"--image", fleetImage, "--image-pull-policy", "Never", "--db", db, "--blobs-host-path", blobs,
		"--shards", "4", "--parallelism", "2", "--backoff-limit-per-index", "1", "--host-network", "--run-as-user", "0",
		"--wait", "--timeout", "6m")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\nstdout: %s", r, r.stdout)
	if r.code != 1 || !strings.Contains(r.stdout, `completed indexes "0-2"`) || !strings.Contains(r.stdout, `failed indexes "3"`) {
		t.Fatalf("want indexes 0-2 completed and 3 failed, exit 1; got exit %d: %s", r.code, r.stdout)
	}
	rows, err := conn.Query(ctx, `SELECT t.id, a.knowledge FROM tickets t JOIN analyses a ON a.ticket_id = t.id AND a.current = 1 ORDER BY t.id`)
	if err != nil {
		t.Fatal(err)
	}
	current := map[int64]string{}
	for rows.Next() {
		var id int64
		var k string
		if err := rows.Scan(&id, &k); err != nil {
			t.Fatal(err)
		}
		current[id] = k
	}
	rows.Close()
	for id := int64(1); id <= 4; id++ {
		fresh := current[id] != "k-old" && strings.HasPrefix(current[id], "k-")
		if id == 3 && fresh {
			t.Errorf("the poisoned ticket 3 has a new analysis %s", current[id])
		}
		if id != 3 && !fresh {
			t.Errorf("ticket %d: current analysis %q, want the workers' new knowledge", id, current[id])
		}
	}
	var failed, done int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FILTER (WHERE state = 'failed'), COUNT(*) FILTER (WHERE state = 'done') FROM jobs`).Scan(&failed, &done); err != nil {
		t.Fatal(err)
	}
	if failed != 1 || done != 3 {
		t.Errorf("jobs: %d failed, %d done; want 1 and 3", failed, done)
	}
	// The old analyses are kept: the two knowledge versions compare.
	var k string
	for _, v := range current {
		if v != "k-old" {
			k = v
		}
	}
	r, err = cli.run(ctx, "query", "knowledge", "--db", db, "k-old", k, "-o", "csv")
	if err != nil || r.code != 0 || !strings.Contains(r.stdout, "k-old,"+k+",3,") {
		t.Errorf("query knowledge: %v %v\n%s", r, err, r.stdout)
	}
}

// fleetDatabase makes a database of the test's own on the server.
func fleetDatabase(t *testing.T, ctx context.Context, admin string) string {
	t.Helper()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "podflow_e2e_" + hex.EncodeToString(b[:])
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			c.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
