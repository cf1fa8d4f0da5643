package index

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"podflow.dev/podflow/analyze"
)

// PostgresEnv names the server the PostgreSQL suite runs on (a superuser URL; each
// test makes a database of its own and drops it). Under CI=true the suite fails
// rather than skips when it is unset or the server does not answer.
const PostgresEnv = "PODFLOW_TEST_POSTGRES"

// target is one store the suite runs on.
type target struct {
	name string
	url  string
}

// targets returns the stores to test: a SQLite file, and a fresh PostgreSQL database
// when a server is given.
func targets(t *testing.T) []target {
	t.Helper()
	out := []target{{"sqlite", filepath.Join(t.TempDir(), "index.db")}}
	admin := os.Getenv(PostgresEnv)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: under CI=true the PostgreSQL store suite must run", PostgresEnv)
		}
		t.Logf("%s not set: the PostgreSQL store suite does not run", PostgresEnv)
		return out
	}
	return append(out, target{"postgres", freshDatabase(t, admin)})
}

// freshDatabase creates a database for one test on the server and drops it after.
func freshDatabase(t *testing.T, admin string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to PostgreSQL at %s: %v", PostgresEnv, err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "podflow_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)") // clean-up of a test database
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func finding(rule string, stage analyze.Stage, cause string, ns, pod string, excerpt string) *analyze.Finding {
	return &analyze.Finding{Rule: rule, Stage: stage, Severity: analyze.SeverityError, Root: true, Cause: cause,
		Subjects: []analyze.ObjectRef{{Kind: "Pod", Namespace: ns, Name: pod}},
		Evidence: []analyze.Evidence{{Excerpt: excerpt}}}
}

func TestStore(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) { testStore(t, tg) })
	}
}

func testStore(t *testing.T, tg target) {
	ctx := context.Background()
	s, err := Open(ctx, tg.url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tg.name == "sqlite" {
		fi, err := os.Stat(tg.url)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("index file mode %v, want 0600", fi.Mode().Perm())
		}
		var mode string
		if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal mode %q (%v), want wal", mode, err)
		}
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	add := func(digest, customer, ticket, release string, seen time.Time, fs ...*analyze.Finding) []Finding {
		t.Helper()
		_, stored, err := s.Add(ctx, Ticket{Digest: digest, Customer: customer, Ticket: ticket, Source: ticket + ".tgz", InputKind: "bundle",
			ProductRelease: release, KubeVersion: "v1.31.2", SeenAt: seen, Labels: map[string]string{"env": "prod"}},
			Analysis{PodflowVersion: "test", Knowledge: "k1", Findings: fs})
		if err != nil {
			t.Fatalf("add %s: %v", ticket, err)
		}
		return stored
	}
	quotaA := finding("admission-quota-exceeded", analyze.StageAdmission, "ResourceQuota compute refuses the pod", "shop", "web-7d4b9c8f6-x2xkq", `exceeded quota: compute, requested: cpu=2`)
	quotaB := finding("admission-quota-exceeded", analyze.StageAdmission, "ResourceQuota team-b refuses the pod", "billing", "api-5f6d7c8b9-q8w7e", `exceeded quota: team-b, requested: memory=1Gi`)
	pull := finding("image-pull-not-found", analyze.StageImage, "image registry.example.com/shop/web:1.2 does not exist in its registry", "shop", "web-1", `Failed to pull image "registry.example.com/shop/web:1.2": not found`)
	unexpl := finding(analyze.UnexplainedRule, analyze.StageRuntime, "no rule explains", "db", "pg-0", `FATAL: could not map anonymous shared memory: Cannot allocate memory size 1234`)
	fa := add("aaaaaaaa01", "acme", "T-1", "4.2", now.Add(-48*time.Hour), quotaA)
	fb := add("aaaaaaaa02", "globex", "T-2", "4.3", now.Add(-24*time.Hour), quotaB, pull)
	add("aaaaaaaa03", "acme", "T-3", "4.3", now.Add(-100*24*time.Hour), pull)
	add("aaaaaaaa04", "initech", "T-4", "4.3", now.Add(-2*time.Hour), unexpl)
	if fa[0].Fingerprint != fb[0].Fingerprint {
		t.Errorf("two quota refusals in different clusters: fingerprints %s (%q) and %s (%q), want one", fa[0].Fingerprint, fa[0].Template, fb[0].Fingerprint, fb[0].Template)
	}
	if fb[0].Fingerprint == fb[1].Fingerprint {
		t.Errorf("quota and image findings share fingerprint %s", fb[0].Fingerprint)
	}
	// Idempotent by digest and knowledge.
	if _, _, err := s.Add(ctx, Ticket{Digest: "aaaaaaaa01", InputKind: "bundle"}, Analysis{Knowledge: "k1", Findings: []*analyze.Finding{quotaA}}); !errors.Is(err, ErrExists) {
		t.Errorf("adding the same input twice: %v, want ErrExists", err)
	}

	since := now.Add(-30 * 24 * time.Hour)
	causes, err := s.Causes(ctx, CauseQuery{Since: since})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"admission-quota-exceeded", "2", "2", "resourcequota <name> refuses the pod", fa[0].Fingerprint},
		{"image-pull-not-found", "1", "1", fb[1].Template, fb[1].Fingerprint},
		{analyze.UnexplainedRule, "1", "1", "fatal<q> could not map anonymous shared memory: cannot allocate memory size <n>", ""},
	}
	// The unexplained template is the masked line, kept as it is (not lower-cased).
	want[2][3] = Mask(unexpl.Evidence[0].Excerpt, subjectNames(unexpl))
	want[2][4] = fingerprint(analyze.UnexplainedRule, want[2][3])
	if !reflect.DeepEqual(causes.Rows, want) {
		t.Errorf("causes since 30 days:\n got %q\nwant %q", causes.Rows, want)
	}
	byCustomer, err := s.Causes(ctx, CauseQuery{Since: time.Unix(0, 0), By: ByCustomer})
	if err != nil {
		t.Fatal(err)
	}
	if got := byCustomer.Columns[1]; got != "customer" || len(byCustomer.Rows) != 5 {
		t.Errorf("causes by customer: %v %q", byCustomer.Columns, byCustomer.Rows)
	}
	unx, err := s.Causes(ctx, CauseQuery{Since: since, Unexplained: true})
	if err != nil || len(unx.Rows) != 1 || unx.Rows[0][0] != analyze.UnexplainedRule {
		t.Errorf("unexplained causes: %q %v", unx.Rows, err)
	}

	who, err := s.Who(ctx, "image-pull-not-found", time.Unix(0, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(who.Rows) != 2 || who.Rows[0][0] != "T-2" || who.Rows[1][0] != "T-3" || who.Rows[0][4] != "2026-11-19" {
		t.Errorf("who: %q", who.Rows)
	}
	sim, err := s.Similar(ctx, "T-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.Rows) != 1 || sim.Rows[0][0] != "T-2" {
		t.Errorf("similar to T-1: %q", sim.Rows)
	}
	// T-2 has two root causes: T-1 shares the quota refusal, T-3 the image; newest first.
	sim, err = s.Similar(ctx, "T-2", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"T-1", "acme", "4.2", "2026-11-18", "admission-quota-exceeded", "1"}, {"T-3", "acme", "4.3", "2026-08-12", "image-pull-not-found", "1"}}; !reflect.DeepEqual(sim.Rows, want) {
		t.Errorf("similar to T-2: %q, want %q", sim.Rows, want)
	}
	found, err := s.Search(ctx, "anonymous shared memory", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Rows) != 1 || found.Rows[0][0] != "T-4" {
		t.Errorf("search: %q", found.Rows)
	}
	// A phrase is a phrase: words out of order, or FTS operators, find nothing and
	// do not fail.
	for _, p := range []string{"memory shared anonymous", `" OR 1=1 --`, "NEAR(quota compute)", "'; DROP TABLE tickets; --"} {
		got, err := s.Search(ctx, p, 0)
		if err != nil || len(got.Rows) != 0 {
			t.Errorf("search %q: %q %v, want nothing", p, got.Rows, err)
		}
	}
	trend, err := s.Trend(ctx, "image-pull-not-found", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"2026-08", "image-pull-not-found", "1"}, {"2026-11", "image-pull-not-found", "1"}}; !reflect.DeepEqual(trend.Rows, want) {
		t.Errorf("trend: %q, want %q", trend.Rows, want)
	}
	checkMonths(t, s, "after adds")
	diff, err := s.Diff(ctx, "T-1", "T-2")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff.Rows) != 2 || diff.Rows[0][0] != "both" || diff.Rows[1][0] != "T-2" {
		t.Errorf("diff: %q", diff.Rows)
	}

	// A new knowledge version explains T-4 and stops explaining T-3.
	reanalyze := func(ticket string, fs ...*analyze.Finding) {
		t.Helper()
		tk, err := s.Lookup(ctx, ticket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reanalyzed(ctx, tk.ID, Analysis{PodflowVersion: "test", Knowledge: "k2", Findings: fs}); err != nil {
			t.Fatal(err)
		}
	}
	reanalyze("T-4", finding("postgres-shm-too-small", analyze.StageRuntime, "the pod's /dev/shm is too small for PostgreSQL", "db", "pg-0", unexpl.Evidence[0].Excerpt))
	reanalyze("T-3", unexpl)
	reanalyze("T-1", quotaA)
	checkMonths(t, s, "after re-analysis")
	d, err := s.DiffKnowledge(ctx, "k1", "k2")
	if err != nil {
		t.Fatal(err)
	}
	if d.Both != 3 || d.MoreExplain != 1 || d.StopExplain != 1 || d.ChangedCause != 0 {
		t.Errorf("knowledge diff: %+v", d)
	}
	// Old analyses are kept; queries read the current one.
	unx, _ = s.Causes(ctx, CauseQuery{Since: time.Unix(0, 0), Unexplained: true})
	if len(unx.Rows) != 1 || unx.Rows[0][1] != "1" {
		t.Errorf("unexplained after k2: %q", unx.Rows)
	}

	// Read-only SQL.
	ro, err := Open(ctx, tg.url, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ro.SQL(ctx, "SELECT customer, COUNT(*) FROM tickets GROUP BY customer ORDER BY customer", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"acme", "2"}, {"globex", "1"}, {"initech", "1"}}; !reflect.DeepEqual(got.Rows, want) {
		t.Errorf("sql: %q", got.Rows)
	}
	for _, bad := range []string{"DELETE FROM tickets", "INSERT INTO lines (tenant, ticket_id, text) VALUES ('default', 1, 'x')", "DROP TABLE findings"} {
		if _, err := ro.SQL(ctx, bad, 0); err == nil {
			t.Errorf("read-only sql ran %q", bad)
		}
	}
	ro.Close()
	if _, err := s.SQL(ctx, "SELECT 1", 0); err == nil {
		t.Error("sql on a read-write store ran")
	}

	// Forget and prune remove rows, lines included.
	gone, err := s.Forget(ctx, "acme", "")
	if err != nil || len(gone) != 2 {
		t.Fatalf("forget acme: %d tickets, %v", len(gone), err)
	}
	if got, _ := s.Search(ctx, "exceeded quota compute", 0); len(got.Rows) != 0 {
		t.Errorf("a forgotten ticket's line is still found: %q", got.Rows)
	}
	gone, err = s.Prune(ctx, now.Add(-12*time.Hour))
	if err != nil || len(gone) != 1 || gone[0].Ticket != "T-2" {
		t.Fatalf("prune: %v %v", gone, err)
	}
	checkMonths(t, s, "after forget and prune")
	left, err := s.Tickets(ctx, 0)
	if err != nil || len(left) != 1 || left[0].Ticket != "T-4" || left[0].Labels["env"] != "prod" {
		t.Errorf("left after forget and prune: %+v %v", left, err)
	}
}

// checkMonths compares the per-month summary `causes --by month` reads with the same
// counts made from every current root finding, so the summary stays in step as
// analyses are added, replaced and forgotten.
func checkMonths(t *testing.T, s *Store, when string) {
	t.Helper()
	ctx := context.Background()
	// By month, since the beginning, since times inside a day that has tickets (T-3 is
	// seen at 2026-08-12 12:00, T-1 at 2026-11-18 12:00), and since a month's first
	// second: each count made again from every current root finding.
	cuts := []int64{0,
		time.Date(2026, 8, 12, 6, 0, 0, 0, time.UTC).Unix(), time.Date(2026, 8, 12, 13, 0, 0, 0, time.UTC).Unix(),
		time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix(),
		time.Date(2026, 11, 18, 6, 0, 0, 0, time.UTC).Unix(), time.Date(2026, 11, 18, 13, 0, 0, 0, time.UTC).Unix()}
	for _, cut := range cuts {
		got, err := s.Causes(ctx, CauseQuery{Since: time.Unix(cut, 0), By: ByMonth})
		if err != nil {
			t.Fatal(err)
		}
		want := recountMonths(t, s, cut)
		have := map[string]string{}
		for _, r := range got.Rows {
			have[r[0]+" "+r[4]+" "+r[1]] = r[2]
		}
		if (cut == 0 && len(want) == 0) || !reflect.DeepEqual(have, want) {
			t.Errorf("causes by month since %s %s: %v, want %v", time.Unix(cut, 0).UTC().Format(time.RFC3339), when, have, want)
		}
		// --limit counts causes: the top cause over the span, with all its months.
		top, err := s.Causes(ctx, CauseQuery{Since: time.Unix(cut, 0), By: ByMonth, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		totals := map[string]int{}
		for k, n := range want {
			cause := k[:strings.LastIndex(k, " ")]
			v, _ := strconv.Atoi(n)
			totals[cause] += v
		}
		best, topTotal := "", 0
		for _, r := range top.Rows {
			cause := r[0] + " " + r[4]
			if best != "" && cause != best {
				t.Errorf("causes by month --limit 1 since %s %s: two causes %q and %q", time.Unix(cut, 0).UTC().Format(time.RFC3339), when, best, cause)
			}
			best = cause
			if want[cause+" "+r[1]] != r[2] {
				t.Errorf("causes by month --limit 1 %s: %s %s has %s tickets, want %s", when, cause, r[1], r[2], want[cause+" "+r[1]])
			}
			v, _ := strconv.Atoi(r[2])
			topTotal += v
		}
		most := 0
		for _, n := range totals {
			most = max(most, n)
		}
		if topTotal != most || topTotal != totals[best] {
			t.Errorf("causes by month --limit 1 %s: %q has %d ticket(s) in its rows (%d in all), the most any cause has is %d", when, best, topTotal, totals[best], most)
		}
	}
	// The same for causes since a date, which read the per-day summary for whole days
	// and the current root findings for the first, partial one: since the beginning,
	// and since a time inside a day that has tickets.
	// (T-1 is seen at 2026-11-18 12:00: a cut before it and one after it on its day.)
	for _, cut := range cuts {
		all, err := s.Causes(ctx, CauseQuery{Since: time.Unix(cut, 0)})
		if err != nil {
			t.Fatal(err)
		}
		perCause := map[string]string{}
		rows, err := s.query(ctx, `SELECT f.class, f.fingerprint, COUNT(DISTINCT t.id), COUNT(DISTINCT t.customer) FROM tickets t
			JOIN analyses a ON a.ticket_id = t.id AND a.current = 1 JOIN findings f ON f.analysis_id = a.id AND f.root = 1
			WHERE t.tenant = ? AND t.seen_at >= ? GROUP BY f.class, f.fingerprint`, s.tenant, cut)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var class, fp string
			var n, c int
			if err := rows.Scan(&class, &fp, &n, &c); err != nil {
				t.Fatal(err)
			}
			perCause[class+" "+fp] = fmt.Sprintf("%d tickets, %d customers", n, c)
		}
		rows.Close()
		haveAll := map[string]string{}
		for _, r := range all.Rows {
			haveAll[r[0]+" "+r[4]] = r[1] + " tickets, " + r[2] + " customers"
		}
		if !reflect.DeepEqual(haveAll, perCause) {
			t.Errorf("causes since %s %s: %v, want %v", time.Unix(cut, 0).UTC().Format(time.RFC3339), when, haveAll, perCause)
		}
	}
}

// recountMonths counts the tickets per cause and month seen since cut from every
// current root finding: "class fingerprint yyyy-mm" to tickets.
func recountMonths(t *testing.T, s *Store, cut int64) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.query(ctx, `SELECT f.class, f.fingerprint, t.seen_at FROM tickets t
		JOIN analyses a ON a.ticket_id = t.id AND a.current = 1 JOIN findings f ON f.analysis_id = a.id AND f.root = 1
		WHERE t.tenant = ? AND t.seen_at >= ? GROUP BY f.class, f.fingerprint, t.id, t.seen_at`, s.tenant, cut)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var class, fp string
		var seen int64
		if err := rows.Scan(&class, &fp, &seen); err != nil {
			t.Fatal(err)
		}
		counts[class+" "+fp+" "+time.Unix(seen, 0).UTC().Format("2006-01")]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, n := range counts {
		out[k] = strconv.Itoa(n)
	}
	return out
}

// TestTenants checks that one tenant never reads another's rows: through the store's
// own filter on both dialects, and on PostgreSQL through row-level security itself,
// as a role without BYPASSRLS that sets its tenant and asks for everything.
func TestTenants(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			for _, tenant := range []string{"red", "blue"} {
				s, err := Open(ctx, tg.url, Options{Tenant: tenant})
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = s.Add(ctx, Ticket{Digest: "d-" + tenant, Ticket: tenant + "-1", InputKind: "bundle"},
					Analysis{Knowledge: "k1", Lines: []string{"shared phrase in " + tenant}})
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			s, err := Open(ctx, tg.url, Options{Tenant: "red"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ts, err := s.Tickets(ctx, 0)
			if err != nil || len(ts) != 1 || ts[0].Ticket != "red-1" {
				t.Errorf("red sees %+v %v", ts, err)
			}
			if got, _ := s.Search(ctx, "shared phrase", 0); len(got.Rows) != 1 {
				t.Errorf("red's search: %q", got.Rows)
			}
			if tg.name != "postgres" {
				return
			}
			conn, err := pgx.Connect(ctx, tg.url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for _, st := range []string{
				"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'podflow_rls_probe') THEN CREATE ROLE podflow_rls_probe NOSUPERUSER NOBYPASSRLS; END IF; END $$",
				"GRANT SELECT, INSERT ON tickets TO podflow_rls_probe",
				"SET ROLE podflow_rls_probe",
				"SELECT set_config('podflow.tenant', 'blue', false)",
			} {
				if _, err := conn.Exec(ctx, st); err != nil {
					t.Fatalf("%s: %v", st, err)
				}
			}
			var n int
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM tickets").Scan(&n); err != nil || n != 1 {
				t.Errorf("blue sees %d tickets of all tenants (%v), want its 1", n, err)
			}
			if _, err := conn.Exec(ctx, "INSERT INTO tickets (tenant, digest, input_kind, seen_at, added_at) VALUES ('red', 'x', 'bundle', 0, 0)"); err == nil {
				t.Error("blue wrote a row of red's")
			}
		})
	}
}

// TestClaim checks that workers claiming at once each get a different job and that
// every job is claimed once.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			s, err := Open(ctx, tg.url, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const n = 20
			for i := range n {
				d := hex.EncodeToString([]byte{byte(i)})
				if _, _, err := s.Add(ctx, Ticket{Digest: d, Ticket: "t" + d, InputKind: "bundle", Blob: "blobs/" + d}, Analysis{Knowledge: "k1"}); err != nil {
					t.Fatal(err)
				}
			}
			if q, err := s.Enqueue(ctx, "k2"); err != nil || q != n {
				t.Fatalf("enqueued %d (%v), want %d", q, err, n)
			}
			if q, _ := s.Enqueue(ctx, "k2"); q != 0 {
				t.Errorf("enqueued %d again, want 0", q)
			}
			claimed := make(chan int64, n)
			errs := make(chan error, 4)
			for w := range 4 {
				go func() {
					ws, err := Open(ctx, tg.url, Options{})
					if err != nil {
						errs <- err
						return
					}
					defer ws.Close()
					for {
						j, err := ws.Claim(ctx, "w"+string(rune('0'+w)))
						if err != nil || j == nil {
							errs <- err
							return
						}
						claimed <- j.ID
						if err := ws.Finish(ctx, j, nil); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			close(claimed)
			seen := map[int64]bool{}
			for id := range claimed {
				if seen[id] {
					t.Errorf("job %d claimed twice", id)
				}
				seen[id] = true
			}
			if len(seen) != n {
				t.Errorf("%d jobs claimed, want %d", len(seen), n)
			}
			if st, _ := s.Jobs(ctx, "k2"); st[JobDone] != n {
				t.Errorf("job states %v", st)
			}
		})
	}
}

// TestSearchPlan checks on PostgreSQL that phrase search reads the GIN index of the
// lines' tsvector and a bounded window of the newest lines, never the whole table, and
// that a common phrase is answered from the newest window while a rare one is still
// found in the oldest line.
func TestSearchPlan(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		if tg.name != "postgres" {
			continue
		}
		s, err := Open(ctx, tg.url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const n = 2 * searchWindow
		var batch []Entry
		for i := range n / 4 {
			lines := []string{"dial tcp 10.0.0.7:5432: connect: connection refused", "Back-off restarting failed container app", "pulling image web", "probe failed"}
			if i == 0 {
				lines[2] = "a rare phrase only the oldest ticket holds"
			}
			batch = append(batch, Entry{Ticket{Digest: strconv.Itoa(i), Ticket: "T-" + strconv.Itoa(i), InputKind: "bundle"}, Analysis{Knowledge: "k1", Lines: lines}})
		}
		added, err := s.AddBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range added {
			if a.Err != nil {
				t.Fatal(a.Err)
			}
		}
		// As autovacuum does on a live server: statistics, and the GIN index's list of
		// pending entries merged into the index.
		if _, err := s.db.ExecContext(ctx, "VACUUM ANALYZE lines"); err != nil {
			t.Fatal(err)
		}
		explain := func(above int64, phrase string, noSeqScan bool) string {
			t.Helper()
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }() // EXPLAIN only: nothing to keep
			if noSeqScan {
				if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
					t.Fatal(err)
				}
			}
			var plan []string
			rows, err := tx.QueryContext(ctx, s.q("EXPLAIN "+searchStatement), s.tenant, above, phrase, 20)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var l string
				if err := rows.Scan(&l); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, l)
			}
			return strings.Join(plan, "\n")
		}
		// A round over a window reads the window (through the primary key, or the GIN
		// index and the key together), never the whole table.
		if plan := explain(int64(n-searchWindow), "connection refused", false); strings.Contains(plan, "Seq Scan on lines") ||
			!strings.Contains(plan, "lines_tsv") && !strings.Contains(plan, "Index Cond: (id >") {
			t.Errorf("a window's phrase search is not bounded by the window:\n%s", plan)
		}
		// The last round, over every line, finds a rare phrase's few candidates in the
		// tsvector GIN index. This test's table is small enough to read whole, so the
		// planner is told to avoid that, as it does itself at the size of a fleet.
		if plan := explain(-1, "rare phrase only", true); !strings.Contains(plan, "lines_tsv") || strings.Contains(plan, "Seq Scan on lines") {
			t.Errorf("phrase search over every line does not read the tsvector GIN index:\n%s", plan)
		}
		got, err := s.Search(ctx, "connection refused", 20)
		if err != nil || len(got.Rows) != 20 || got.Rows[0][0] != "T-"+strconv.Itoa(n/4-1) {
			t.Errorf("common phrase: %d rows, first %v (%v)", len(got.Rows), got.Rows[:min(1, len(got.Rows))], err)
		}
		got, err = s.Search(ctx, "rare phrase only", 20)
		if err != nil || len(got.Rows) != 1 || got.Rows[0][0] != "T-0" {
			t.Errorf("rare phrase: %q (%v)", got.Rows, err)
		}
	}
}

// TestRelease hands claimed jobs back: the ones still running go back to the queue with
// the attempt undone and are claimed again, a finished one stays finished.
func TestRelease(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			s, err := Open(ctx, tg.url, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 3 {
				d := hex.EncodeToString([]byte{byte(i)})
				if _, _, err := s.Add(ctx, Ticket{Digest: d, Ticket: "t" + d, InputKind: "bundle", Blob: "blobs/" + d}, Analysis{Knowledge: "k1"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Enqueue(ctx, "k2"); err != nil {
				t.Fatal(err)
			}
			js, err := s.ClaimBatch(ctx, "w", 0, 1, 3)
			if err != nil || len(js) != 3 {
				t.Fatalf("claimed %d (%v), want 3", len(js), err)
			}
			if err := s.Finish(ctx, js[0], nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx, js); err != nil {
				t.Fatal(err)
			}
			if st, _ := s.Jobs(ctx, "k2"); st[JobDone] != 1 || st[JobQueued] != 2 || st[JobRunning] != 0 {
				t.Errorf("job states after release %v, want 1 done and 2 queued", st)
			}
			again, err := s.ClaimBatch(ctx, "w2", 0, 1, 3)
			if err != nil || len(again) != 2 || again[0].ID != js[1].ID || again[1].ID != js[2].ID {
				t.Fatalf("claimed again %v (%v), want jobs %d and %d", again, err, js[1].ID, js[2].ID)
			}
			for _, j := range again {
				if j.Attempts != 1 {
					t.Errorf("job %d: attempts %d after a release and a claim, want 1", j.ID, j.Attempts)
				}
			}
		})
	}
}

// TestPrepareStoresTheSame records the same analysis prepared ahead and not: the
// stored findings, lines and summaries are the same.
func TestPrepareStoresTheSame(t *testing.T) {
	ctx := context.Background()
	dump := func(prepare bool) string {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "index.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a := Analysis{PodflowVersion: "test", Knowledge: "k1", Findings: []*analyze.Finding{
			finding("admission-quota-exceeded", analyze.StageAdmission, "ResourceQuota compute refuses the pod", "shop", "web-7d4b9c8f6-x2xkq", `exceeded quota: compute, requested: cpu=2`),
			finding(analyze.UnexplainedRule, analyze.StageRuntime, "no rule explains", "db", "pg-0", `FATAL: could not map anonymous shared memory: Cannot allocate memory size 1234`),
		}, Lines: []string{"  a line of trouble at 10.1.2.3  ", "a line of trouble at 10.1.2.3"}}
		if prepare {
			a.Prepare()
		}
		seen := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
		if _, _, err := s.Add(ctx, Ticket{Digest: "d1", Ticket: "T-1", InputKind: "bundle", SeenAt: seen, AddedAt: seen}, a); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, q := range []string{
			`SELECT class || '|' || fingerprint || '|' || template || '|' || cause || '|' || subjects FROM findings ORDER BY id`,
			`SELECT text FROM lines ORDER BY id`,
			`SELECT class || '|' || fingerprint || '|' || template || '|' || tickets FROM cause_months ORDER BY class`,
			`SELECT class || '|' || fingerprint || '|' || template FROM current_roots ORDER BY class`,
		} {
			rows, err := s.db.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				b.WriteString(v + "\n")
			}
			rows.Close()
		}
		return b.String()
	}
	plain, prepared := dump(false), dump(true)
	if plain != prepared || strings.Count(plain, "\n") < 6 {
		t.Errorf("prepared ahead, the index holds\n%s\nnot prepared\n%s", prepared, plain)
	}
}
