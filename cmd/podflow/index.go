package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/index"
	"podflow.dev/podflow/internal/checkpoint"
	"podflow.dev/podflow/untrusted"
)

// indexEnv names the index a command uses when --db is not given.
const indexEnv = "PODFLOW_INDEX"

// storeFlags pick the index: a SQLite file (the default) or a PostgreSQL URL, and the
// tenant whose rows are read and written.
type storeFlags struct {
	db     string
	tenant string
}

func (f *storeFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.db, "db", "", "the index: a SQLite file on a local disk, or postgres://... (default $"+indexEnv+", else podflow/index.db in the user's data folder)")
	fs.StringVar(&f.tenant, "tenant", index.DefaultTenant, "the tenant whose tickets are read and written (PostgreSQL enforces it with row-level security)")
}

// target is the index to open.
func (f *storeFlags) target() (string, error) {
	if f.db != "" {
		return f.db, nil
	}
	if v := os.Getenv(indexEnv); v != "" {
		return v, nil
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --db and no home folder for the default index: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "podflow", "index.db"), nil
}

func (f *storeFlags) open(ctx context.Context, readOnly bool) (*index.Store, error) {
	t, err := f.target()
	if err != nil {
		return nil, err
	}
	return index.Open(ctx, t, index.Options{Tenant: f.tenant, ReadOnly: readOnly})
}

func newIndexCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Record analyses of many tickets in one index (SQLite, or PostgreSQL for a team) for podflow query",
		Long: `podflow index records each input's analysis (findings, cause class, a fingerprint of the
cause with the cluster's own names masked, the trouble lines, the knowledge version) in one
store: a SQLite file by default, or a PostgreSQL database for a team. Only redacted evidence
enters: a podflow bundle whose manifest records redaction, or any other input after the
redaction policy and a leak scan. See docs/index.md.`,
		Example: `  podflow index add tickets/* --customer acme
  podflow index ls
  podflow query causes --since 30d`,
	}
	cmd.AddCommand(newIndexAddCmd(g), newIndexLsCmd(g), newIndexShowCmd(g), newIndexPruneCmd(g), newIndexForgetCmd(g), newIndexReanalyzeCmd(g))
	return cmd
}

type indexAddOptions struct {
	*globalOptions
	store     storeFlags
	open      openFlags
	blobs     string
	customer  string
	ticket    string
	labels    []string
	output    string
	redactCfg string
	jobs      int
	paths     []string
}

func newIndexAddCmd(g *globalOptions) *cobra.Command {
	o := &indexAddOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "add INPUT...",
		Short: "Analyze inputs (bundles, other tools' layouts, pasted text, or podflow -o json reports) and record them",
		Long: `Analyze each input, or take an existing podflow -o json report, and record it in the index.
Adding the same input again does nothing (inputs are known by digest). A podflow bundle must
record redaction in its manifest; every other input is redacted with the redaction policy and
then scanned for secrets, and an input in which the scan still finds one is refused, naming
the file, line and rule.

Many inputs are analyzed --jobs at a time while one writer records them, many to a
transaction. An input that cannot be read or recorded is reported with its reason and the
others are recorded; the exit status is then 1. Ctrl-C stops reading inputs and keeps every
one recorded so far: adding the same inputs again goes on where it stopped.`,
		Example: `  podflow index add tickets/* --customer acme --label release=4.3
  podflow index add --jobs 2 tickets/*
  podflow index add case-1234.tgz --ticket 1234 --blobs /srv/podflow/blobs -o json
  podflow index add report.json --db postgres://podflow@db.internal/podflow`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			if err := o.validate(); err != nil {
				return err
			}
			return runIndexAdd(cmd.Context(), o)
		},
	}
	o.store.add(cmd.Flags())
	o.open.add(cmd.Flags())
	cmd.Flags().StringVar(&o.blobs, "blobs", "", "keep a redacted copy of each input in this folder, to re-analyze it when a Go rule changes")
	cmd.Flags().StringVar(&o.customer, "customer", "", "the customer the tickets are from")
	cmd.Flags().StringVar(&o.ticket, "ticket", "", "the ticket ID (default: the input's file name)")
	cmd.Flags().StringArrayVar(&o.labels, "label", nil, "a label k=v to record (release=V sets the product release); repeatable")
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output: table, or json (one line per new finding)")
	cmd.Flags().StringVar(&o.redactCfg, redact.FlagConfig, "", "YAML file of extra redaction rules for inputs that are not redacted podflow bundles")
	cmd.Flags().IntVar(&o.jobs, "jobs", 1, "analyze this many inputs side by side (one goroutine records them, many per transaction)")
	return cmd
}

func (o *indexAddOptions) validate() error {
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	if o.jobs < 1 {
		return usageError("--jobs %d: want at least 1", o.jobs)
	}
	if o.ticket != "" && len(o.paths) > 1 {
		return usageError("--ticket names one ticket: give one input")
	}
	for _, l := range o.labels {
		if k, _, ok := strings.Cut(l, "="); !ok || k == "" {
			return usageError("--label %q: want key=value", l)
		}
	}
	return nil
}

// knowledgeVersion names what a catalog knows: a digest of podflow's version and of
// every rule's and signature's identity and text, so a new signature, a changed pattern
// or a new podflow build (whose Go rules may have changed) is a new version.
func knowledgeVersion(catalog []*analyze.Rule) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", version, index.FingerprintVersion)
	for _, r := range catalog {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", r.ID, r.Stage, r.Severity, r.Title)
		if s := r.Signature(); s != nil {
			fmt.Fprintf(h, "%q\x00%q\x00%s\x00%s\x00%q\x00", s.Patterns, s.Unless, s.Cause, s.ForRule, s.Fingerprint)
		}
	}
	return "k-" + hex.EncodeToString(h.Sum(nil)[:6])
}

// openWithCatalog opens the index for writing while the catalog loads: the two are
// independent, and on a second core the store's open (a new index's schema, an older
// one's migrations) then adds nothing to the time the rules take to load.
func openWithCatalog(ctx context.Context, sf *storeFlags) (*index.Store, []*analyze.Rule, error) {
	type opened struct {
		s   *index.Store
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := sf.open(ctx, false)
		ch <- opened{s, err}
	}()
	catalog, err := selectRules(nil, nil, nil)
	o := <-ch
	if o.err != nil {
		return nil, nil, o.err
	}
	if err != nil {
		o.s.Close()
		return nil, nil, err
	}
	return o.s, catalog, nil
}

// indexSetup is what index add needs beside its inputs: the store open and the catalog
// loaded (its knowledge version named). It is made on its own goroutine while the first
// inputs are read and loaded: the rules take about as long to load as a collected
// bundle of a few namespaces, and neither needs the other.
type indexSetup struct {
	done      chan struct{}
	store     *index.Store
	catalog   []*analyze.Rule
	knowledge string
	err       error
}

func startIndexSetup(ctx context.Context, sf *storeFlags) *indexSetup {
	s := &indexSetup{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.store, s.catalog, s.err = openWithCatalog(ctx, sf)
		if s.err == nil {
			s.knowledge = knowledgeVersion(s.catalog)
		}
	}()
	return s
}

// ready reports whether the setup has ended, well or not, without waiting.
func (s *indexSetup) ready() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// wait waits for the setup and returns its error.
func (s *indexSetup) wait() error {
	<-s.done
	return s.err
}

// close closes the store, once the setup has ended.
func (s *indexSetup) close() {
	if s.wait() == nil {
		s.store.Close()
	}
}

// prepared is one input ready to record: its redacted bundle (or report), digest and kind.
type prepared struct {
	kind   string
	digest string
	b      *bundle.Bundle
	report *analyze.Report
	// archive is the input's own file when it is a redacted podflow bundle archive,
	// kept as the blob as it is.
	archive string
}

// addBatch is how many inputs' analyses index add commits at once at most.
const addBatch = 64

// addItem is one input to add, in the order given.
type addItem struct {
	n    int
	path string
}

// addResult is what analyzing one input gave: the entry to record, or that the index
// holds it already, or why it cannot be recorded.
type addResult struct {
	path  string
	kind  string
	entry index.Entry
	// known is the stored ticket's name when the index holds the input with this
	// knowledge already: nothing was analyzed.
	known string
	err   error
}

// addCounts is what index add did.
type addCounts struct {
	recorded, known, failed, interrupted int
	failedPaths                          []string
}

func runIndexAdd(ctx context.Context, o *indexAddOptions) error {
	setup := startIndexSetup(ctx, &o.store)
	defer setup.close()
	// The redaction policy is for inputs that are not redacted podflow bundles: it is
	// built when the first such input needs it (its rules cost as much to compile as
	// recording a ticket), and at once when the user gave a file of rules, so a
	// mistake in it is reported before any input is read.
	policy := sync.OnceValues(func() (*redact.Policy, error) {
		return redactionPolicy(&redact.Flags{ConfigFile: o.redactCfg}, o.log())
	})
	if o.redactCfg != "" {
		if _, err := policy(); err != nil {
			return err
		}
	}

	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, _ := strings.Cut(l, "=")
		labels[k] = v
	}
	prog := o.progressFor(o.paths)
	bar := prog.counter("index", len(o.paths))
	logEvery := o.verbosity > 0 && !o.streams.ErrTTY && len(o.paths) >= 100
	start := time.Now()
	var c addCounts
	enc := json.NewEncoder(o.streams.Out)
	// What is analyzed is recorded even when a signal stops the run: the writer's
	// context is not cancelled, so a batch in hand is committed whole.
	wctx := context.WithoutCancel(ctx)
	_, writeErr := pipeline(ctx, o.jobs, batching{max: addBatch},
		func(ctx context.Context, send func(addItem) bool) error {
			for i, p := range o.paths {
				if ctx.Err() != nil || !send(addItem{i, p}) {
					return nil
				}
			}
			return nil
		},
		func(ctx context.Context, it addItem) addResult {
			return analyzeForIndex(ctx, o, setup, policy, labels, it.path)
		},
		func(batch []addResult) error {
			if err := setup.wait(); err != nil {
				return err // the index does not open: nothing can be recorded
			}
			store := setup.store
			var entries []index.Entry
			var at []int
			for i, r := range batch {
				if r.err == nil && r.known == "" {
					entries = append(entries, r.entry)
					at = append(at, i)
				}
			}
			if len(entries) > 0 {
				added, err := store.AddBatch(wctx, entries)
				if err != nil {
					return fmt.Errorf("record: %w", err)
				}
				checkpoint.Reach("record")
				for k, a := range added {
					r := &batch[at[k]]
					switch {
					case errors.Is(a.Err, index.ErrExists):
						r.known = a.Ticket.Ticket
					case a.Err != nil:
						r.err = fmt.Errorf("record %q: %w", r.path, a.Err)
					default:
						if err := o.printAdded(enc, r.kind, a); err != nil {
							return err
						}
					}
				}
			}
			for _, r := range batch {
				switch {
				case r.err != nil && ctx.Err() != nil:
					// Stopped by the signal, not by the input: added again, it is read again.
					c.interrupted++
				case r.err != nil:
					c.failed++
					c.failedPaths = append(c.failedPaths, r.path)
					o.log().Errorf("%v", r.err)
				case r.known != "":
					c.known++
					o.log().WithField("input", r.path).Infof("already in the index as ticket %s", untrusted.Text(r.known))
				default:
					c.recorded++
				}
				bar.inc()
				if done := c.recorded + c.known + c.failed; logEvery && done%100 == 0 {
					o.log().Infof("index add: %d of %d input(s) done in %s", done, len(o.paths), time.Since(start).Round(time.Second))
				}
			}
			return nil
		})
	prog.wait()
	if writeErr != nil {
		return writeErr
	}
	if len(o.paths) > 1 {
		o.log().Infof("index add: %d recorded, %d already in the index, %d failed, of %d input(s) in %s",
			c.recorded, c.known, c.failed, len(o.paths), time.Since(start).Round(time.Millisecond))
	}
	if ctx.Err() != nil {
		return &keptError{err: context.Cause(ctx), kept: fmt.Sprintf("%d input(s) recorded are kept, %d not read (add the same inputs again to go on)",
			c.recorded+c.known, len(o.paths)-c.recorded-c.known-c.failed)}
	}
	if c.failed > 0 {
		return &codeError{code: exitError, err: fmt.Errorf("index add: %d of %d input(s) not recorded: %s", c.failed, len(o.paths), untrusted.Text(strings.Join(c.failedPaths, ", ")))}
	}
	return nil
}

// analyzeForIndex prepares and analyzes one input, unless the index holds it with this
// knowledge already, and keeps its blob. An input read while the setup is still under
// way is loaded at once too, beside the rules loading, and the graph is dropped if the
// index turns out to hold the input already: that is at most one load per analyzer,
// at the start of a run, for the time the rules take to load.
func analyzeForIndex(ctx context.Context, o *indexAddOptions, setup *indexSetup, policy func() (*redact.Policy, error),
	labels map[string]string, p string) addResult {
	res := addResult{path: p}
	in, err := prepareInput(ctx, o, policy, p)
	if err != nil {
		res.err = namedInputErr(p, err)
		return res
	}
	res.kind = in.kind
	load := func() (*analyze.Graph, error) {
		g, err := analyze.LoadWith(ctx, []*bundle.Bundle{in.b}, o.log(), analyze.LoadOptions{TroubleOnly: true})
		if err != nil {
			return nil, fmt.Errorf("analyze %q: %w", p, err)
		}
		return g, nil
	}
	var graph *analyze.Graph
	var loadErr error
	if in.report == nil && !setup.ready() {
		graph, loadErr = load()
	}
	if err := setup.wait(); err != nil {
		res.err = err // the writer reports it once, as the run's error
		return res
	}
	kv := setup.knowledge
	if in.kind == "report" {
		kv = "report:" + in.report.PodflowVersion
	}
	// Idempotent by digest: an input recorded already is not analyzed again.
	if t, ok, err := setup.store.Recorded(ctx, in.digest, kv); err != nil {
		res.err = fmt.Errorf("%q: %w", p, err)
		return res
	} else if ok {
		res.known = t
		return res
	}
	rep := in.report
	if rep == nil {
		if graph == nil && loadErr == nil {
			graph, loadErr = load()
		}
		if loadErr != nil {
			res.err = loadErr
			return res
		}
		rep, err = analyze.RunContext(ctx, graph, setup.catalog, analyze.Options{PodflowVersion: version, Unexplained: true})
		if err != nil {
			res.err = fmt.Errorf("analyze %q: %w", p, err)
			return res
		}
	}
	t := index.Ticket{Digest: in.digest, Customer: o.customer, Ticket: o.ticket, Source: filepath.Base(p), InputKind: in.kind,
		Labels: labels, ProductRelease: labels["release"]}
	if t.Ticket == "" {
		t.Ticket = ticketName(p)
	}
	if rep.CollectedAt != nil {
		t.SeenAt = rep.CollectedAt.UTC()
	}
	if in.b != nil && in.b.Manifest != nil {
		t.KubeVersion = in.b.Manifest.Cluster.ServerVersion
		if t.SeenAt.IsZero() && !in.b.Manifest.CollectedAt.IsZero() {
			t.SeenAt = in.b.Manifest.CollectedAt.UTC()
		}
	}
	if o.blobs != "" && in.kind != "report" {
		if t.Blob, err = keepBlob(o.blobs, in); err != nil {
			res.err = fmt.Errorf("%q: %w", p, err)
			return res
		}
	}
	res.entry = index.Entry{Ticket: t, Analysis: index.Analysis{PodflowVersion: rep.PodflowVersion, Knowledge: kv, Findings: rep.Findings}}
	res.entry.Analysis.Prepare()
	return res
}

// namedInputErr makes sure an input's error names the input.
func namedInputErr(p string, err error) error {
	if strings.Contains(err.Error(), p) || strings.Contains(err.Error(), strconv.Quote(p)) {
		return err
	}
	return fmt.Errorf("%q: %w", p, err)
}

// printAdded writes what one recorded input found: one JSON line per finding with -o
// json, else one line per ticket.
func (o *indexAddOptions) printAdded(enc *json.Encoder, kind string, a index.Added) error {
	if o.output == "json" {
		for _, f := range a.Findings {
			if err := enc.Encode(struct {
				Ticket   string `json:"ticket"`
				Customer string `json:"customer,omitempty"`
				index.Finding
			}{a.Ticket.Ticket, a.Ticket.Customer, f}); err != nil {
				return err
			}
		}
		return nil
	}
	root := "no root cause"
	for _, f := range a.Findings {
		if f.Root {
			root = f.Class
			break
		}
	}
	_, err := fmt.Fprintf(o.streams.Out, "%s\t%s\t%d finding(s)\t%s\n", untrusted.Text(a.Ticket.Ticket), kind, len(a.Findings), untrusted.Text(root))
	return err
}

// ticketName is an input's file name without its archive extension.
func ticketName(p string) string {
	n := filepath.Base(p)
	for _, ext := range []string{".tar.gz", ".tgz", ".tar", ".json", ".txt", ".log"} {
		n = strings.TrimSuffix(n, ext)
	}
	return n
}

// prepareInput opens one input and makes sure only redacted evidence goes further.
func prepareInput(ctx context.Context, o *indexAddOptions, redaction func() (*redact.Policy, error), p string) (*prepared, error) {
	if rep, data, ok := readReport(p); ok {
		policy, err := redaction()
		if err != nil {
			return nil, err
		}
		// A report quotes evidence: it is scanned like any other text.
		if hits := policy.ScanFile(filepath.Base(p), data); len(hits) > 0 {
			return nil, leakRefusal(p, hits)
		}
		sum := sha256.Sum256(data)
		return &prepared{kind: "report", digest: hex.EncodeToString(sum[:]), report: rep}, nil
	}
	b, _, err := importer.OpenContext(ctx, p, importer.Options{Limits: o.open.limits, Log: o.log(), Stdin: o.streams.In})
	if err != nil {
		return nil, err
	}
	if b.Manifest != nil && b.Manifest.Redaction.Enabled && b.Has(bundle.ManifestPath) {
		// A podflow bundle redacted when it was written.
		d, archive, err := bundleDigest(p, b)
		if err != nil {
			return nil, err
		}
		return &prepared{kind: "bundle", digest: d, b: b, archive: archive}, nil
	}
	policy, err := redaction()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var hits []redact.Hit
	for _, name := range b.Names() {
		data, err := b.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %q: %s: %w", p, name, err)
		}
		red, err := policy.Apply(name, data)
		if err != nil {
			return nil, fmt.Errorf("redact %q: %s: %w", p, name, err)
		}
		hits = append(hits, policy.ScanFile(name, red)...)
		files[name] = red
	}
	if len(hits) > 0 {
		return nil, leakRefusal(p, hits)
	}
	nb, err := bundle.New(b.Source, files)
	if err != nil {
		return nil, err
	}
	if nb.Manifest == nil && b.Manifest != nil {
		m := *b.Manifest
		m.Redaction = policy.Redaction()
		nb.Manifest = &m
	}
	return &prepared{kind: "import", digest: filesDigest(files), b: nb}, nil
}

// leakRefusal names where the leak scan found what redaction left, never the value.
func leakRefusal(p string, hits []redact.Hit) error {
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].File != hits[j].File {
			return hits[i].File < hits[j].File
		}
		return hits[i].Line < hits[j].Line
	})
	var b strings.Builder
	fmt.Fprintf(&b, "refuse %q: the leak scan finds %d possible secret(s) after redaction", p, len(hits))
	for i, h := range hits {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(hits)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s:%d: %s", untrusted.Text(h.File), h.Line, h.Rule)
	}
	fmt.Fprintf(&b, "\nadd a rule with --%s, or redact the input first (podflow redact)", redact.FlagConfig)
	return errors.New(b.String())
}

// readReport reads p as a podflow -o json report, if it is one.
func readReport(p string) (*analyze.Report, []byte, bool) {
	if !strings.HasSuffix(p, ".json") {
		return nil, nil, false
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 256<<20 {
		return nil, nil, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, false
	}
	var probe struct {
		SchemaVersion string            `json:"schemaVersion"`
		Findings      []json.RawMessage `json:"findings"`
		Summary       json.RawMessage   `json:"summary"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.SchemaVersion == "" || probe.Summary == nil {
		return nil, nil, false
	}
	var rep analyze.Report
	if json.Unmarshal(data, &rep) != nil {
		return nil, nil, false
	}
	return &rep, data, true
}

// bundleDigest is the sha256 of a bundle archive, or of a bundle directory's manifest
// (which lists every file's checksum).
func bundleDigest(p string, b *bundle.Bundle) (string, string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", "", err
	}
	if fi.IsDir() {
		data, err := b.ReadFile(bundle.ManifestPath)
		if err != nil {
			return "", "", err
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:]), "", nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", fmt.Errorf("read %q: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), p, nil
}

func filesDigest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(h, "%s\x00%x\x00", n, sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// keepBlob keeps a redacted copy of the input as <digest>.tar.gz under dir (mode 0600),
// and returns its name relative to dir.
func keepBlob(dir string, in *prepared) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("blobs: %w", err)
	}
	name := in.digest + ".tar.gz"
	target := filepath.Join(dir, name)
	if _, err := os.Stat(target); err == nil {
		return name, nil
	}
	if in.archive != "" {
		data, err := os.ReadFile(in.archive)
		if err != nil {
			return "", err
		}
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return "", fmt.Errorf("blobs: %w", err)
		}
		return name, os.Rename(tmp, target)
	}
	w, err := bundle.Create(target, bundle.WriterOptions{Root: "podflow-" + in.digest[:12]})
	if err != nil {
		return "", fmt.Errorf("blobs: %w", err)
	}
	for _, n := range in.b.Names() {
		if n == bundle.ManifestPath {
			continue
		}
		data, err := in.b.ReadFile(n)
		if err != nil {
			w.Abort()
			return "", err
		}
		if err := w.WriteFile(n, data); err != nil {
			w.Abort()
			return "", fmt.Errorf("blobs: %w", err)
		}
	}
	m := &bundle.Manifest{PodflowVersion: version, Type: "converted"}
	if in.b.Manifest != nil {
		cp := *in.b.Manifest
		cp.Files = nil
		m = &cp
	}
	m.Redaction.Enabled = true
	if err := w.Close(m); err != nil {
		return "", fmt.Errorf("blobs: %w", err)
	}
	if err := os.Chmod(target, 0o600); err != nil {
		return "", err
	}
	return name, nil
}

// --- ls, show, prune, forget -------------------------------------------------------

type indexListOptions struct {
	*globalOptions
	store  storeFlags
	output string
	limit  int
}

func newIndexLsCmd(g *globalOptions) *cobra.Command {
	o := &indexListOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List the tickets in the index, newest first",
		Example: `  podflow index ls --limit 20`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, tableFormats...); err != nil {
				return err
			}
			s, err := o.store.open(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer s.Close()
			ts, err := s.Tickets(cmd.Context(), o.limit)
			if err != nil {
				return err
			}
			t := index.Table{Columns: []string{"id", "ticket", "customer", "kind", "release", "kube", "seen", "digest"}, Rows: [][]string{}}
			for _, tk := range ts {
				t.Rows = append(t.Rows, []string{fmt.Sprint(tk.ID), tk.Ticket, tk.Customer, tk.InputKind, tk.ProductRelease, tk.KubeVersion,
					tk.SeenAt.Format("2006-01-02"), tk.Digest[:min(12, len(tk.Digest))]})
			}
			return writeTable(o.streams.Out, o.output, t)
		},
	}
	o.store.add(cmd.Flags())
	cmd.Flags().IntVar(&o.limit, "limit", 100, "at most this many tickets (0: all)")
	addTableOutput(cmd.Flags(), &o.output)
	return cmd
}

func newIndexShowCmd(g *globalOptions) *cobra.Command {
	o := &indexListOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "show TICKET",
		Short:   "Show one ticket's current findings (by ticket name, ID or digest prefix)",
		Example: `  podflow index show 1234`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output, tableFormats...); err != nil {
				return err
			}
			s, err := o.store.open(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer s.Close()
			tk, err := s.Lookup(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fs, a, err := s.CurrentFindings(cmd.Context(), tk.ID)
			if err != nil {
				return err
			}
			if o.output == "json" {
				return writeStructured(o.streams.Out, "json", struct {
					Ticket    index.Ticket    `json:"ticket"`
					Knowledge string          `json:"knowledge"`
					Podflow   string          `json:"podflowVersion"`
					Findings  []index.Finding `json:"findings"`
				}{tk, a.Knowledge, a.PodflowVersion, fs})
			}
			t := index.Table{Columns: []string{"root", "cause", "stage", "severity", "fingerprint", "subjects", "text"}, Rows: [][]string{}}
			for _, f := range fs {
				t.Rows = append(t.Rows, []string{fmt.Sprint(f.Root), f.Class, f.Stage, f.Severity, f.Fingerprint, f.Subjects, f.Cause})
			}
			return writeTable(o.streams.Out, o.output, t)
		},
	}
	o.store.add(cmd.Flags())
	addTableOutput(cmd.Flags(), &o.output)
	return cmd
}

type indexDeleteOptions struct {
	*globalOptions
	store     storeFlags
	blobs     string
	olderThan string
	customer  string
	ticket    string
}

func newIndexPruneCmd(g *globalOptions) *cobra.Command {
	o := &indexDeleteOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "prune --older-than DURATION",
		Short:   "Delete the tickets seen longer ago than a duration (rows and blobs)",
		Example: `  podflow index prune --older-than 365d --blobs /srv/podflow/blobs`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := parseSince(o.olderThan)
			if err != nil {
				return usageError("--older-than: %v", err)
			}
			return runIndexDelete(cmd.Context(), o, func(s *index.Store) ([]index.Ticket, error) {
				return s.Prune(cmd.Context(), time.Now().Add(-d))
			})
		},
	}
	o.store.add(cmd.Flags())
	cmd.Flags().StringVar(&o.olderThan, "older-than", "", "delete tickets seen before this long ago (30d, 12h)")
	cmd.Flags().StringVar(&o.blobs, "blobs", "", "the blob folder the inputs were kept in")
	_ = cmd.MarkFlagRequired("older-than")
	return cmd
}

func newIndexForgetCmd(g *globalOptions) *cobra.Command {
	o := &indexDeleteOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "forget (--customer C | --ticket T)",
		Short:   "Delete a customer's tickets or one ticket (rows and blobs)",
		Example: `  podflow index forget --customer acme --blobs /srv/podflow/blobs`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.customer == "") == (o.ticket == "") {
				return usageError("give exactly one of --customer and --ticket")
			}
			return runIndexDelete(cmd.Context(), o, func(s *index.Store) ([]index.Ticket, error) {
				return s.Forget(cmd.Context(), o.customer, o.ticket)
			})
		},
	}
	o.store.add(cmd.Flags())
	cmd.Flags().StringVar(&o.customer, "customer", "", "forget every ticket of this customer")
	cmd.Flags().StringVar(&o.ticket, "ticket", "", "forget this ticket")
	cmd.Flags().StringVar(&o.blobs, "blobs", "", "the blob folder the inputs were kept in")
	return cmd
}

func runIndexDelete(ctx context.Context, o *indexDeleteOptions, del func(*index.Store) ([]index.Ticket, error)) error {
	s, err := o.store.open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	gone, err := del(s)
	if err != nil {
		return err
	}
	blobs := 0
	for _, t := range gone {
		if t.Blob == "" {
			continue
		}
		if o.blobs == "" {
			o.log().Warnf("ticket %s kept its input as %s: give --blobs to delete it too", untrusted.Text(t.Ticket), untrusted.Text(t.Blob))
			continue
		}
		// The name is the index's own (digest.tar.gz); never a path out of the folder.
		if strings.ContainsAny(t.Blob, `/\`) || strings.HasPrefix(t.Blob, ".") {
			continue
		}
		if err := os.Remove(filepath.Join(o.blobs, t.Blob)); err != nil && !os.IsNotExist(err) {
			return err
		}
		blobs++
	}
	_, err = fmt.Fprintf(o.streams.Out, "deleted %d ticket(s), %d blob(s)\n", len(gone), blobs)
	return err
}

// parseSince reads 30d, 12h, 90m (days beyond Go's durations).
func parseSince(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var d int
		if _, err := fmt.Sscanf(n, "%d", &d); err != nil || d < 0 || fmt.Sprint(d) != n {
			return 0, fmt.Errorf("%q: want a number of days such as 30d", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration such as 30d or 12h", s)
	}
	return d, nil
}

// --- reanalyze -----------------------------------------------------------------------

type indexReanalyzeOptions struct {
	*globalOptions
	store      storeFlags
	plan       bool
	signatures []string
	dryRun     bool
	jobs       int
	blobs      string
	output     string
}

func newIndexReanalyzeCmd(g *globalOptions) *cobra.Command {
	o := &indexReanalyzeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "reanalyze (--plan | --signatures FILE | --jobs N --blobs DIR)",
		Short: "Re-run knowledge over the index: plan it, try new signatures on stored lines, or re-analyze kept inputs",
		Long: `--plan says what re-analysis to this podflow's knowledge would touch and read. --signatures
tries a signature file (new signatures, or changed ones with the IDs of recorded findings) on
every ticket's stored trouble lines without reopening any input, lists the tickets each
signature explains, records a new analysis under a new knowledge version for every ticket
whose findings change (older analyses are kept), and prints the difference over the whole
index: how many more tickets are explained, how many no longer are. --dry-run records
nothing. --jobs N re-analyzes the kept inputs (--blobs) of
every ticket this knowledge has not analyzed, with N workers here; older analyses are kept,
and 'podflow query knowledge OLD NEW' prints the difference. For many machines, see
'podflow fleet run'.`,
		Example: `  podflow index reanalyze --plan
  podflow index reanalyze --signatures vendor-signatures.yaml
  podflow index reanalyze --jobs 2 --blobs /srv/podflow/blobs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := 0
			for _, on := range []bool{o.plan, len(o.signatures) > 0, o.jobs > 0} {
				if on {
					n++
				}
			}
			if n != 1 {
				return usageError("give one of --plan, --signatures and --jobs")
			}
			if o.jobs > 0 && o.blobs == "" {
				return usageError("--jobs re-analyzes kept inputs: give --blobs")
			}
			if err := checkOutput(o.output, tableFormats...); err != nil {
				return err
			}
			return runIndexReanalyze(cmd.Context(), o)
		},
	}
	o.store.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.plan, "plan", false, "say what re-analysis would do and read, and do nothing")
	cmd.Flags().StringArrayVar(&o.signatures, "signatures", nil, "a signature file to try on the stored trouble lines; repeatable")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "with --signatures: list and count what the signatures change, record nothing")
	cmd.Flags().IntVar(&o.jobs, "jobs", 0, "re-analyze kept inputs with this many workers")
	cmd.Flags().StringVar(&o.blobs, "blobs", "", "the folder of kept inputs")
	addTableOutput(cmd.Flags(), &o.output)
	return cmd
}

func runIndexReanalyze(ctx context.Context, o *indexReanalyzeOptions) error {
	switch {
	case o.plan:
		catalog, err := selectRules(nil, nil, nil)
		if err != nil {
			return err
		}
		s, err := o.store.open(ctx, true)
		if err != nil {
			return err
		}
		defer s.Close()
		p, err := s.PlanReanalysis(ctx, knowledgeVersion(catalog))
		if err != nil {
			return err
		}
		if o.output == "json" {
			return writeStructured(o.streams.Out, "json", p)
		}
		_, err = fmt.Fprintf(o.streams.Out, "knowledge %s: %d ticket(s), %d current, %d to re-analyze (%d with a kept input, %d with stored lines only)\n"+
			"a signature re-run reads %d stored line(s) and opens no input\n",
			p.Knowledge, p.Tickets, p.Current, p.Stale, p.WithBlob, p.Stale-p.WithBlob, p.Lines)
		return err
	case len(o.signatures) > 0:
		var sigs []*analyze.Signature
		for _, f := range o.signatures {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			ss, err := analyze.ParseSignatures(f, data)
			if err != nil {
				return err
			}
			sigs = append(sigs, ss...)
		}
		s, err := o.store.open(ctx, o.dryRun)
		if err != nil {
			return err
		}
		defer s.Close()
		start := time.Now()
		run, err := s.ReanalyzeSignatures(ctx, sigs, version, o.dryRun)
		if err != nil {
			return err
		}
		o.log().Infof("%d signature(s) over %d stored line(s) in %s", len(sigs), run.Lines, time.Since(start).Round(time.Millisecond))
		if o.output == "json" {
			return writeStructured(o.streams.Out, "json", run)
		}
		t := index.Table{Columns: []string{"ticket", "signature", "cause", "line"}, Rows: [][]string{}}
		for _, h := range run.Hits {
			t.Rows = append(t.Rows, []string{h.Ticket, h.Signature, h.Cause, h.Line})
		}
		if err := writeTable(o.streams.Out, o.output, t); err != nil {
			return err
		}
		var versions []string
		for from, to := range run.Knowledge {
			versions = append(versions, from+" -> "+to)
		}
		sort.Strings(versions)
		recorded := fmt.Sprintf("%d new analyses recorded, the older ones kept", run.Recorded)
		if o.dryRun {
			recorded = "nothing recorded (--dry-run)"
		}
		summary := fmt.Sprintf("over %d ticket(s): explains %d more, stops explaining %d, changes the cause of %d; %s\n",
			run.Tickets, run.MoreExplain, run.StopExplain, run.ChangedCause, recorded)
		if len(versions) > 0 {
			summary += "knowledge " + strings.Join(versions, ", ") + "\n"
		}
		if o.output == "csv" {
			o.log().Info(strings.TrimSpace(summary))
			return nil
		}
		_, err = fmt.Fprint(o.streams.Out, summary)
		return err
	default:
		r, err := runWorkers(ctx, o.globalOptions, &o.store, o.blobs, o.jobs)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.streams.Out, "%d re-analyzed, %d failed\n", r.done, r.failed)
		if r.failed > 0 {
			return &codeError{code: exitError, err: fmt.Errorf("reanalyze: %d ticket(s) failed", r.failed)}
		}
		return nil
	}
}
