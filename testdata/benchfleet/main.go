// Command benchfleet measures podflow's index (make bench-fleet): it analyzes the
// recorded bundles and the incident corpus once, generates N tickets from those reports
// (names, customers, releases and dates varied), and times ingest one ticket at a time,
// point look-ups, monthly aggregates, phrase search, a new signature over the stored
// lines, and the size per ticket, on SQLite and (with -postgres) PostgreSQL side by side;
// then podflow's own commands, many times each, interleaved: index add against analyze
// of a collected bundle, and reanalyze --jobs 2 against --jobs 1 (-cli: only these).
package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for the floor

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/index"
	"podflow.dev/podflow/rules"
)

func main() {
	n := flag.Int("n", 10000, "tickets to generate")
	pg := flag.String("postgres", "", "a PostgreSQL superuser URL: also measure there (in a fresh database)")
	podflow := flag.String("podflow", "bin/podflow", "the podflow binary, for end-to-end ingest against analyze")
	dir := flag.String("dir", ".cache/bench-fleet", "where the SQLite file goes")
	keep := flag.Bool("keep", false, "keep the PostgreSQL database the run filled (its URL is printed), to measure it again with -measure")
	measure := flag.String("measure", "", "measure the queries on this existing index (a file or a URL) of -n generated tickets, without ingesting")
	cli := flag.Bool("cli", false, "measure only podflow's commands: index add against analyze, and reanalyze --jobs 2 against --jobs 1")
	flag.IntVar(&e2eRuns, "e2e-runs", e2eRuns, "how many times to run index add and analyze each")
	flag.IntVar(&workerRuns, "worker-runs", workerRuns, "how many times to run reanalyze --jobs 1 and --jobs 2 each")
	flag.IntVar(&workerVariants, "worker-variants", workerVariants, "how many variants of each recorded bundle reanalyze --jobs re-analyzes")
	flag.Parse()
	if *cli {
		if err := runCLI(*podflow, *dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench-fleet:", err)
			os.Exit(1)
		}
		return
	}
	if *measure != "" {
		if err := measureOnly(*measure, *n); err != nil {
			fmt.Fprintln(os.Stderr, "bench-fleet:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *pg, *podflow, *dir, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench-fleet:", err)
		os.Exit(1)
	}
}

type result struct {
	name  string
	value [2]string
	unit  string
	goal  string
}

func run(n int, pgURL, podflow, dir string, keep bool) error {
	ctx := context.Background()
	reports, err := seedReports()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-fleet: %d seed reports, %d tickets\n", len(reports), n)
	tickets := generate(reports, n)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sqlitePath := filepath.Join(dir, fmt.Sprintf("index-%d.db", n))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(sqlitePath + suffix)
	}
	targets := []string{sqlitePath}
	if pgURL != "" {
		u, cleanup, err := freshDatabase(ctx, pgURL)
		if err != nil {
			return err
		}
		if keep {
			fmt.Fprintf(os.Stderr, "bench-fleet: the PostgreSQL index stays at %s\n", u)
		} else {
			defer cleanup()
		}
		targets = append(targets, u)
	}
	rows := []result{
		{name: "ingest, added one by one, committed 64 at a time", unit: "tickets/s", goal: "≥ 500 (SQLite), ≥ 150 (PostgreSQL)"},
		{name: "  the same, per CPU second of podflow", unit: "tickets/s", goal: "-"},
		{name: "  floor: each ticket as one JSON row, no index", unit: "tickets/s", goal: "-"},
		{name: "ingest, one transaction per ticket (first 2,000)", unit: "tickets/s", goal: "-"},
		{name: "size in the index", unit: "KB/ticket", goal: "≤ 10"},
		{name: "floor: one-row query p50 (CPU per query)", unit: "ms", goal: "-"},
		{name: "point look-up (index show) p50", unit: "ms", goal: "≤ 5"},
		{name: "similar tickets p50", unit: "ms", goal: "≤ 5"},
		{name: "monthly aggregate (causes --since 30d) p50", unit: "ms", goal: "≤ 100"},
		{name: "causes by month over a year (top 100 causes) p50", unit: "ms", goal: "≤ 100"},
		{name: "phrase search p50", unit: "ms", goal: "≤ 10"},
		{name: "new signature over all stored lines", unit: "s", goal: "≤ 5 at 100k"},
	}
	sig, err := newSignature()
	if err != nil {
		return err
	}
	for i, target := range targets {
		// Side by side, so the machine's load weighs on both alike: the floor first.
		floor, err := ingestFloor(ctx, target, tickets)
		if err != nil {
			return fmt.Errorf("%s: floor: %w", target, err)
		}
		rows[2].value[i] = fmt.Sprintf("%.0f", floor)
		perTx, err := ingestPerTicket(ctx, target, tickets[:min(len(tickets), 2000)])
		if err != nil {
			return fmt.Errorf("%s: one transaction per ticket: %w", target, err)
		}
		rows[3].value[i] = fmt.Sprintf("%.0f", perTx)
		s, err := index.Open(ctx, target, index.Options{})
		if err != nil {
			return err
		}
		start, cpu0 := time.Now(), cpuTime()
		for b := 0; b < len(tickets); b += ingestBatch {
			batch := make([]index.Entry, 0, ingestBatch)
			for _, t := range tickets[b:min(b+ingestBatch, len(tickets))] {
				batch = append(batch, index.Entry{Ticket: t.ticket, Analysis: t.analysis})
			}
			added, err := s.AddBatch(ctx, batch)
			if err != nil {
				return err
			}
			for _, a := range added {
				if a.Err != nil {
					return fmt.Errorf("add %s: %w", a.Ticket.Ticket, a.Err)
				}
			}
		}
		took, cpu := time.Since(start), cpuTime()-cpu0
		rows[0].value[i] = fmt.Sprintf("%.0f", float64(n)/took.Seconds())
		rows[1].value[i] = fmt.Sprintf("%.0f", float64(n)/cpu.Seconds())
		// Queries run in processes of their own, as podflow query does, after the
		// writer closed (and SQLite refreshed its statistics).
		s.Close()
		if s, err = index.Open(ctx, target, index.Options{ReadOnly: true}); err != nil {
			return err
		}
		size, err := storeSize(ctx, target)
		if err != nil {
			return err
		}
		rows[4].value[i] = fmt.Sprintf("%.1f", float64(size)/1024/float64(n))
		rnd := rand.New(rand.NewPCG(1, 2))
		pick := func() string { return tickets[rnd.IntN(len(tickets))].ticket.Ticket }
		now := time.Now()
		measures := []func() error{
			func() error { _, err := s.SQL(ctx, "SELECT id FROM tickets WHERE id = 1", 1); return err },
			func() error {
				tk, err := s.Lookup(ctx, pick())
				if err == nil {
					_, _, err = s.CurrentFindings(ctx, tk.ID)
				}
				return err
			},
			func() error { _, err := s.Similar(ctx, pick(), 20); return err },
			func() error {
				_, err := s.Causes(ctx, index.CauseQuery{Since: now.Add(-30 * 24 * time.Hour)})
				return err
			},
			func() error {
				_, err := s.Causes(ctx, index.CauseQuery{Since: now.Add(-365 * 24 * time.Hour), By: index.ByMonth, Limit: 100})
				return err
			},
			func() error {
				_, err := s.Search(ctx, phrases[rnd.IntN(len(phrases))], 20)
				return err
			},
		}
		for j, m := range measures {
			p50, cpu, err := median(m, 31)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", target, rows[5+j].name, err)
			}
			rows[5+j].value[i] = fmt.Sprintf("%.2f (CPU %.2f)", float64(p50.Microseconds())/1000, float64(cpu.Microseconds())/1000)
		}
		start, cpu0 = time.Now(), cpuTime()
		hits, lines, err := s.RunSignatures(ctx, []*analyze.Signature{sig})
		if err != nil {
			return err
		}
		rows[11].value[i] = fmt.Sprintf("%.2f (CPU %.2f; %d lines, %d hits)", time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds(), lines, len(hits))
		s.Close()
		// Each store's figures as soon as they are known: a long run stopped later still
		// leaves them.
		for _, r := range rows {
			fmt.Fprintf(os.Stderr, "bench-fleet: %s: %s: %s %s (load %s)\n", []string{"SQLite", "PostgreSQL"}[i], r.name, r.value[i], r.unit, loadAverage())
		}
	}
	e2e, err := endToEnd(podflow, dir)
	if err != nil {
		return err
	}
	workers, err := workerSpeedup(podflow, dir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "measure (%d tickets)\tSQLite\tPostgreSQL\tunit\ttarget\n", n)
	for _, r := range rows {
		pgv := r.value[1]
		if pgv == "" {
			pgv = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.name, r.value[0], pgv, r.unit, r.goal)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printCLI(e2e, workers)
	fmt.Printf("load average at the end: %s\n", loadAverage())
	return nil
}

// printCLI prints the measures of podflow's own commands: median [quartiles].
func printCLI(e2e []string, workers string) {
	fmt.Println("index add of a collected bundle against analyze alone (target ≤ 1.1), median [quartiles]:")
	for _, l := range e2e {
		fmt.Println("  " + l)
	}
	fmt.Println("reanalyze --jobs 2 against --jobs 1 (target ≥ 1.6), median [quartiles]:")
	fmt.Println("  " + workers)
}

// runCLI measures only podflow's own commands: index add against analyze, and the
// re-analysis workers.
func runCLI(podflow, dir string) error {
	if _, err := os.Stat(podflow); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	e2e, err := endToEnd(podflow, dir)
	if err != nil {
		return err
	}
	workers, err := workerSpeedup(podflow, dir)
	if err != nil {
		return err
	}
	printCLI(e2e, workers)
	return nil
}

// measureOnly runs the query measures on an index a run of this generator filled.
func measureOnly(target string, n int) error {
	ctx := context.Background()
	// Opened once read-write first: an index an older podflow filled is migrated.
	w, err := index.Open(ctx, target, index.Options{})
	if err != nil {
		return err
	}
	w.Close()
	s, err := index.Open(ctx, target, index.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	var count int
	if t, err := s.SQL(ctx, "SELECT COUNT(*) FROM tickets", 0); err == nil && len(t.Rows) == 1 {
		fmt.Sscan(t.Rows[0][0], &count)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return fmt.Sprintf("T-%06d", rnd.IntN(n)+1) }
	now := time.Now()
	sig, err := newSignature()
	if err != nil {
		return err
	}
	size, _ := storeSize(ctx, target)
	fmt.Printf("index of %d tickets: %.1f KB/ticket\n", count, float64(size)/1024/float64(max(count, 1)))
	for _, m := range []struct {
		name string
		f    func() error
	}{
		{"point look-up (index show) p50", func() error {
			tk, err := s.Lookup(ctx, pick())
			if err == nil {
				_, _, err = s.CurrentFindings(ctx, tk.ID)
			}
			return err
		}},
		{"similar tickets p50", func() error { _, err := s.Similar(ctx, pick(), 20); return err }},
		{"monthly aggregate (causes --since 30d) p50", func() error {
			_, err := s.Causes(ctx, index.CauseQuery{Since: now.Add(-30 * 24 * time.Hour)})
			return err
		}},
		{"causes by month over a year (top 100 causes) p50", func() error {
			_, err := s.Causes(ctx, index.CauseQuery{Since: now.Add(-365 * 24 * time.Hour), By: index.ByMonth, Limit: 100})
			return err
		}},
		{"trend of one cause over a year p50", func() error {
			_, err := s.Trend(ctx, "runtime-oom-killed", now.Add(-365*24*time.Hour))
			return err
		}},
		{"phrase search p50", func() error {
			_, err := s.Search(ctx, phrases[rnd.IntN(len(phrases))], 20)
			return err
		}},
	} {
		p50, cpu, err := median(m.f, 31)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		fmt.Printf("%s: %.2f ms (CPU %.2f ms; load %s)\n", m.name, float64(p50.Microseconds())/1000, float64(cpu.Microseconds())/1000, loadAverage())
	}
	start, cpu0 := time.Now(), cpuTime()
	hits, lines, err := s.RunSignatures(ctx, []*analyze.Signature{sig})
	if err != nil {
		return err
	}
	fmt.Printf("new signature over all stored lines: %.2f s (CPU %.2f s; %d lines, %d hits; load %s)\n", time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds(), lines, len(hits), loadAverage())
	start = time.Now()
	run, err := s.ReanalyzeSignatures(ctx, []*analyze.Signature{sig}, "bench", true)
	if err != nil {
		return err
	}
	fmt.Printf("reanalyze --signatures --dry-run (hits, findings compared, diff): %.2f s (%d tickets changed, explains %d more)\n",
		time.Since(start).Seconds(), run.Changed, run.MoreExplain)
	return nil
}

var phrases = []string{"connection refused", "no space left on device", "exceeded quota", "not found", "x509 certificate", "back-off restarting failed container"}

// newSignature is a signature the catalog does not have, as a user would add one.
func newSignature() (*analyze.Signature, error) {
	sigs, err := analyze.ParseSignatures("bench.yaml", []byte(`- id: bench-connection-refused-db
  stage: runtime
  title: the program cannot reach its database
  component: application
  printedBy: the application
  where: [log, event, text]
  patterns: ['connection refused.*:(?P<port>5432|3306)']
  cause: the program cannot reach its database on port {port}
  fix: start the database first, or point the program at the right address
  severity: error
  examples:
    fires: ['dial tcp 10.0.0.7:5432: connect: connection refused to db:5432']
    quiet: ['connection reset by peer']
`))
	if err != nil {
		return nil, err
	}
	return sigs[0], nil
}

// median runs f n times and returns its median wall time and the mean CPU time this
// process spent per run (a PostgreSQL server's own CPU is not in it).
func median(f func() error, n int) (time.Duration, time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	cpu0 := cpuTime()
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(start))
	}
	cpu := (cpuTime() - cpu0) / time.Duration(n)
	slices.Sort(ds)
	return ds[n/2], cpu, nil
}

type genTicket struct {
	ticket   index.Ticket
	analysis index.Analysis
}

// seedReports analyzes every recorded bundle and incident once.
func seedReports() ([]*analyze.Report, error) {
	catalog, err := rules.Catalog(nil)
	if err != nil {
		return nil, err
	}
	var inputs []string
	for _, glob := range []string{"testdata/bundles/*", "testdata/incidents/*"} {
		m, _ := filepath.Glob(glob)
		inputs = append(inputs, m...)
	}
	var out []*analyze.Report
	for _, in := range inputs {
		var b *bundle.Bundle
		if _, err := os.Stat(filepath.Join(in, "case.yaml")); err == nil {
			files := map[string][]byte{}
			es, _ := os.ReadDir(in)
			tmp, err := os.MkdirTemp("", "bench-fleet-")
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				if e.Name() == "case.yaml" || e.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(in, e.Name()))
				if err != nil {
					return nil, err
				}
				files[e.Name()] = data
				os.WriteFile(filepath.Join(tmp, e.Name()), data, 0o600)
			}
			b, _, err = importer.Open(tmp, importer.Options{Format: importer.FormatLoose, Limits: bundle.DefaultLimits()})
			os.RemoveAll(tmp)
			if err != nil {
				continue
			}
		} else {
			b, _, err = importer.Open(in, importer.Options{Limits: bundle.DefaultLimits()})
			if err != nil {
				continue
			}
		}
		rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), catalog, analyze.Options{Unexplained: true})
		if len(rep.Findings) > 0 {
			out = append(out, rep)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seed reports: run from the repository's top folder")
	}
	return out, nil
}

// generate makes n tickets from the seed reports: each takes one report's findings
// with its subjects renamed, a customer of 300, a release of 6, a Kubernetes version of
// 6, and a date within the last year.
func generate(reports []*analyze.Report, n int) []genTicket {
	rnd := rand.New(rand.NewPCG(7, 11))
	releases := []string{"4.1", "4.2", "4.3", "4.4", "5.0", "5.1"}
	kubes := []string{"v1.28.9", "v1.29.4", "v1.30.2", "v1.31.1", "v1.32.0", "v1.33.1"}
	now := time.Now().UTC()
	out := make([]genTicket, 0, n)
	for i := range n {
		rep := reports[rnd.IntN(len(reports))]
		suffix := fmt.Sprintf("%05x", rnd.Uint32()&0xfffff)
		var fs []*analyze.Finding
		for _, f := range rep.Findings {
			c := *f
			c.Subjects = nil
			replace := []string{}
			for _, s := range f.Subjects {
				name := s.Name
				if name != "" && name != "(unknown)" {
					name = s.Name + "-" + suffix
					replace = append(replace, s.Name, name)
				}
				c.Subjects = append(c.Subjects, analyze.ObjectRef{Kind: s.Kind, Namespace: s.Namespace, Name: name})
			}
			r := strings.NewReplacer(replace...)
			c.Cause = r.Replace(f.Cause)
			c.Evidence = nil
			for _, e := range f.Evidence {
				e.Excerpt = r.Replace(e.Excerpt)
				c.Evidence = append(c.Evidence, e)
			}
			fs = append(fs, &c)
		}
		out = append(out, genTicket{
			ticket: index.Ticket{Digest: fmt.Sprintf("%064x", i+1), Ticket: fmt.Sprintf("T-%06d", i+1), Customer: fmt.Sprintf("customer-%03d", rnd.IntN(300)),
				Source: "bundle.tgz", InputKind: "bundle", ProductRelease: releases[rnd.IntN(len(releases))], KubeVersion: kubes[rnd.IntN(len(kubes))],
				SeenAt: now.Add(-time.Duration(rnd.IntN(365*24)) * time.Hour)},
			analysis: index.Analysis{PodflowVersion: "bench", Knowledge: "k-bench", Findings: fs},
		})
	}
	return out
}

func storeSize(ctx context.Context, target string) (int64, error) {
	if !index.IsPostgres(target) {
		var total int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(target + suffix); err == nil {
				total += fi.Size()
			}
		}
		return total, nil
	}
	c, err := pgx.Connect(ctx, target)
	if err != nil {
		return 0, err
	}
	defer c.Close(ctx)
	var n int64
	err = c.QueryRow(ctx, "SELECT pg_database_size(current_database()) - (SELECT pg_database_size('template1'))").Scan(&n)
	return n, err
}

func freshDatabase(ctx context.Context, admin string) (string, func(), error) {
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer c.Close(ctx)
	name := fmt.Sprintf("podflow_bench_%d", time.Now().UnixNano())
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	pu, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	pu.Path = "/" + name
	return pu.String(), func() {
		c, err := pgx.Connect(ctx, admin)
		if err == nil {
			c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}, nil
}

// spread is a median with the quartiles around it, of durations or ratios.
type spread struct{ median, q1, q3 float64 }

func spreadOf(xs []float64) spread {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	at := func(q float64) float64 { return ys[int(q*float64(len(ys)-1)+0.5)] }
	return spread{at(0.5), at(0.25), at(0.75)}
}

func (s spread) String() string { return fmt.Sprintf("%.2f [%.2f–%.2f]", s.median, s.q1, s.q3) }

func (s spread) ms() string {
	return fmt.Sprintf("%.0f ms [%.0f–%.0f]", s.median*1000, s.q1*1000, s.q3*1000)
}

// timed runs one podflow command and returns its wall and CPU time (user and system,
// of the process and its children), in seconds.
func timed(podflow string, args ...string) (float64, float64, error) {
	cmd := exec.Command(podflow, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start).Seconds()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, lastLines(string(out), 5))
	}
	return wall, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}

// e2eRuns is how many times endToEnd runs each command: one run's noise on a shared
// machine is as large as the difference it measures.
var e2eRuns = 21

// endToEnd times `podflow index add` of the collected demo bundle against `podflow
// analyze -o json` of it (the floor), e2eRuns times each, interleaved (the order
// alternates), into a fresh index and into an index that holds the other recorded
// bundles already (copied before each run, outside the time). It reports, per case,
// the median and quartiles of the ratio of each pair and of each command's wall and
// CPU time, and the load average around the runs.
func endToEnd(podflow, dir string) ([]string, error) {
	if _, err := os.Stat(podflow); err != nil {
		return nil, nil
	}
	in := "testdata/bundles/demo"
	existing := filepath.Join(dir, "e2e-existing.db")
	removeDB(existing)
	others, _ := filepath.Glob("testdata/bundles/*")
	others = slices.DeleteFunc(others, func(p string) bool { return p == in })
	if out, err := exec.Command(podflow, append([]string{"index", "add", "--db", existing}, others...)...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench-fleet: index add of the recorded bundles: %v\n%s", err, lastLines(string(out), 5))
	}
	base, err := os.ReadFile(existing)
	if err != nil {
		return nil, err
	}
	defer removeDB(existing)
	var lines []string
	for _, c := range []struct {
		name string
		seed []byte
	}{{"into a new index", nil}, {"into an index of " + fmt.Sprint(len(others)) + " tickets", base}} {
		var ratio, cpuRatio, aw, ac, iw, ic []float64
		load0 := loadAverage()
		db := filepath.Join(dir, "e2e-run.db")
		for i := range e2eRuns {
			removeDB(db)
			if c.seed != nil {
				if err := os.WriteFile(db, c.seed, 0o600); err != nil {
					return nil, err
				}
			}
			var w, cpu [2]float64
			for k := range 2 {
				which := (i + k) % 2 // alternate which goes first
				args := []string{"analyze", in, "-o", "json", "--fail-on", "none"}
				if which == 1 {
					args = []string{"index", "add", "--db", db, in}
				}
				if w[which], cpu[which], err = timed(podflow, args...); err != nil {
					return nil, err
				}
			}
			aw, ac, iw, ic = append(aw, w[0]), append(ac, cpu[0]), append(iw, w[1]), append(ic, cpu[1])
			ratio, cpuRatio = append(ratio, w[1]/w[0]), append(cpuRatio, cpu[1]/cpu[0])
		}
		removeDB(db)
		lines = append(lines, fmt.Sprintf("%s: wall ratio %s (index add %s, analyze %s); CPU ratio %s (%s, %s); %d pairs, load %s → %s",
			c.name, spreadOf(ratio), spreadOf(iw).ms(), spreadOf(aw).ms(), spreadOf(cpuRatio), spreadOf(ic).ms(), spreadOf(ac).ms(), e2eRuns, load0, loadAverage()))
	}
	return lines, nil
}

func removeDB(p string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(p + suffix)
	}
}

// ingestBatch is how many tickets the bench's writer commits at once.
const ingestBatch = 64

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	return strings.Join(f[:min(3, len(f))], " ")
}

// ingestFloor writes each ticket as one JSON row into a table without any index, in
// batches of ingestBatch, in a fresh store beside the measured one (a SQLite file next
// to it, or a database of its own on the same server): the least any index of the
// same tickets can cost on this machine now. It returns tickets per second.
func ingestFloor(ctx context.Context, target string, tickets []genTicket) (float64, error) {
	driver, dsn := "sqlite", target+".floor"
	if index.IsPostgres(target) {
		driver = "pgx"
	} else {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(dsn + suffix)
		}
		defer func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(dsn + suffix)
			}
		}()
		dsn = "file:" + dsn + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	}
	if driver == "pgx" {
		dsn = target
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS bench_floor"); err != nil {
		return 0, err
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE bench_floor (digest TEXT, body TEXT)"); err != nil {
		return 0, err
	}
	defer db.ExecContext(ctx, "DROP TABLE IF EXISTS bench_floor")
	ins := "INSERT INTO bench_floor (digest, body) VALUES (?, ?)"
	if driver == "pgx" {
		ins = "INSERT INTO bench_floor (digest, body) VALUES ($1, $2)"
	}
	start := time.Now()
	for b := 0; b < len(tickets); b += ingestBatch {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		for _, t := range tickets[b:min(b+ingestBatch, len(tickets))] {
			body, err := json.Marshal(struct {
				T index.Ticket
				A index.Analysis
			}{t.ticket, t.analysis})
			if err != nil {
				tx.Rollback()
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, ins, t.ticket.Digest, string(body)); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(len(tickets)) / time.Since(start).Seconds(), nil
}

// ingestPerTicket adds tickets one transaction each into a fresh store beside the
// measured one, and returns tickets per second.
func ingestPerTicket(ctx context.Context, target string, tickets []genTicket) (float64, error) {
	where := target + ".pertx"
	var cleanup func()
	if index.IsPostgres(target) {
		u, c, err := freshDatabase(ctx, target)
		if err != nil {
			return 0, err
		}
		where, cleanup = u, c
	} else {
		cleanup = func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(where + suffix)
			}
		}
		cleanup()
	}
	defer cleanup()
	s, err := index.Open(ctx, where, index.Options{})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	start := time.Now()
	for _, t := range tickets {
		if _, _, err := s.Add(ctx, t.ticket, t.analysis); err != nil {
			return 0, fmt.Errorf("add %s: %w", t.ticket.Ticket, err)
		}
	}
	return float64(len(tickets)) / time.Since(start).Seconds(), nil
}

// workerRuns is how many times workerSpeedup runs each of --jobs 1 and --jobs 2.
var workerRuns = 7

// workerVariants is how many variants of each recorded bundle workerSpeedup re-analyzes:
// with the 59 recorded bundles alone a run is half a second, most of it the process's
// fixed start, which no number of workers shortens.
var workerVariants = 10

// workerInputs returns variants of the recorded bundles as archives under dir, made
// once and found again by the next run: variant k of a bundle holds the same files
// under a cluster name of its own, so it is another input to the index (another
// digest) with the same evidence to analyze. A recorded bundle that does not open is
// reported and left out.
func workerInputs(dir string, variants int) ([]string, error) {
	recorded, _ := filepath.Glob("testdata/bundles/*")
	out := filepath.Join(dir, "workers-inputs")
	if err := os.MkdirAll(out, 0o700); err != nil {
		return nil, err
	}
	var inputs []string
	for _, p := range recorded {
		var b *bundle.Bundle
		for k := range variants {
			target := filepath.Join(out, fmt.Sprintf("%s-v%d.tar.gz", filepath.Base(p), k))
			if _, err := os.Stat(target); err == nil {
				inputs = append(inputs, target)
				continue
			}
			if b == nil {
				var err error
				if b, err = bundle.Open(p, bundle.DefaultLimits()); err != nil || b.Manifest == nil {
					fmt.Fprintf(os.Stderr, "bench-fleet: %s is not a podflow bundle (%v): left out of the workers' inputs\n", p, err)
					break
				}
			}
			if err := writeVariant(b, target, k); err != nil {
				return nil, fmt.Errorf("%s: %w", target, err)
			}
			inputs = append(inputs, target)
		}
	}
	return inputs, nil
}

// writeVariant writes b's files as an archive whose manifest names cluster variant k.
func writeVariant(b *bundle.Bundle, target string, k int) error {
	w, err := bundle.Create(target, bundle.WriterOptions{Force: true,
		ModTime: b.Manifest.CollectedAt})
	if err != nil {
		return err
	}
	for _, n := range b.Names() {
		if n == bundle.ManifestPath {
			continue
		}
		data, err := b.ReadFile(n)
		if err != nil {
			w.Abort()
			return err
		}
		if err := w.WriteFile(n, data); err != nil {
			w.Abort()
			return err
		}
	}
	m := *b.Manifest
	m.Files = nil
	m.Cluster.Name = fmt.Sprintf("%s-v%d", cmp.Or(m.Cluster.Name, "bench"), k)
	return w.Close(&m)
}

// workerSpeedup times `podflow index reanalyze --jobs 1` against `--jobs 2` over
// workerVariants variants of each recorded bundle, kept as blobs, after their analyses
// were marked as made by an older knowledge version: each run on a fresh copy of the
// same index, interleaved (the order alternates), workerRuns times each. It reports the
// median and quartiles of the speed-up of each pair in wall time, each one's wall and
// CPU time and CPU per wall second (2 would be both cores busy the whole run), the
// load, and the time `index add --jobs 2` took to record the inputs.
func workerSpeedup(podflow, dir string) (string, error) {
	if _, err := os.Stat(podflow); err != nil {
		return "-", nil
	}
	inputs, err := workerInputs(dir, workerVariants)
	if err != nil {
		return "", err
	}
	base := filepath.Join(dir, "workers.db")
	blobs := filepath.Join(dir, "workers-blobs")
	os.RemoveAll(blobs)
	removeDB(base)
	args := append([]string{"index", "add", "--jobs", "2", "--db", base, "--blobs", blobs}, inputs...)
	addWall, addCPU, err := timed(podflow, args...)
	if err != nil {
		// A recorded bundle the index refuses is reported, not fatal: the rest are kept.
		fmt.Fprintf(os.Stderr, "bench-fleet: index add of the workers' inputs: %v\n", err)
	}
	defer os.RemoveAll(blobs)
	defer removeDB(base)
	db, err := sql.Open("sqlite", base)
	if err != nil {
		return "", err
	}
	var tickets int
	err = db.QueryRow("SELECT COUNT(*) FROM tickets").Scan(&tickets)
	if err == nil {
		_, err = db.Exec("UPDATE analyses SET knowledge = 'k-bench-old'")
	}
	db.Close()
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(base)
	if err != nil {
		return "", err
	}
	var speedup []float64
	var wall, cpu, busy [2][]float64
	load0 := loadAverage()
	run := filepath.Join(dir, "workers-run.db")
	for i := range workerRuns {
		var w [2]float64
		for k := range 2 {
			which := (i + k) % 2
			removeDB(run)
			if err := os.WriteFile(run, raw, 0o600); err != nil {
				return "", err
			}
			jobs := fmt.Sprint(which + 1)
			var c float64
			if w[which], c, err = timed(podflow, "index", "reanalyze", "--db", run, "--jobs", jobs, "--blobs", blobs); err != nil {
				return "", err
			}
			wall[which], cpu[which] = append(wall[which], w[which]), append(cpu[which], c)
			busy[which] = append(busy[which], c/w[which])
		}
		speedup = append(speedup, w[0]/w[1])
	}
	removeDB(run)
	return fmt.Sprintf("%s× (%d tickets, %d pairs: --jobs 2 %s s, --jobs 1 %s s; CPU %s s, %s s; CPU per wall second %s, %s; load %s → %s; index add --jobs 2 of the inputs %.1f s, CPU %.1f s)",
		spreadOf(speedup), tickets, workerRuns, spreadOf(wall[1]), spreadOf(wall[0]), spreadOf(cpu[1]), spreadOf(cpu[0]),
		spreadOf(busy[1]), spreadOf(busy[0]), load0, loadAverage(), addWall, addCPU), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}
