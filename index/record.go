package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
)

// Ticket is one input as the index keeps it.
type Ticket struct {
	ID int64 `json:"id"`
	// Digest identifies the input's content (sha256 of what was read); adding the same
	// input twice records it once.
	Digest   string `json:"digest"`
	Customer string `json:"customer,omitempty"`
	Ticket   string `json:"ticket,omitempty"`
	// Source is the input's file name, without the directories it came from.
	Source string `json:"source"`
	// InputKind is "bundle" (a redacted podflow bundle), "import" (another tool's
	// layout or pasted text, redacted on the way in) or "report" (podflow -o json).
	InputKind      string            `json:"inputKind"`
	Labels         map[string]string `json:"labels,omitempty"`
	ProductRelease string            `json:"release,omitempty"`
	KubeVersion    string            `json:"kubeVersion,omitempty"`
	// SeenAt is when the evidence was collected, or when it was added if unknown.
	SeenAt  time.Time `json:"seenAt"`
	AddedAt time.Time `json:"addedAt"`
	// Blob is the path of the kept copy of the input under the blob folder, if any.
	Blob string `json:"blob,omitempty"`
}

// Analysis is one analysis of a ticket by one version of podflow's knowledge.
type Analysis struct {
	PodflowVersion string
	// Knowledge versions the rules and signatures that made the findings.
	Knowledge string
	Findings  []*analyze.Finding
	// Lines are the ticket's trouble lines: the evidence excerpts its findings quote.
	// New signatures are tried on them without reopening the input.
	Lines []string

	// prepared holds what Prepare computed from the fields above.
	prepared *preparedAnalysis
}

// preparedAnalysis is an analysis as the store writes it.
type preparedAnalysis struct {
	findings []Finding
	lines    []string
}

// Prepare computes, ahead of the write, what recording the analysis stores: each
// finding's cause class, masked fingerprint and template, and the distinct trouble
// lines. Masking is most of a write's CPU outside the database: many goroutines that
// each prepare their own analysis leave the one goroutine that writes only the
// statements. Without Prepare, the write computes the same. The findings and lines
// must not change after it.
func (a *Analysis) Prepare() {
	a.prepared = &preparedAnalysis{findings: storedFindings(a.Findings), lines: troubleLines(*a)}
}

// stored returns the findings and trouble lines to write.
func (a *Analysis) stored() ([]Finding, []string) {
	if a.prepared != nil {
		return a.prepared.findings, a.prepared.lines
	}
	return storedFindings(a.Findings), troubleLines(*a)
}

// storedFindings keys each finding for the store.
func storedFindings(findings []*analyze.Finding) []Finding {
	fs := make([]Finding, 0, len(findings))
	for _, f := range findings {
		k := FindingKey(f)
		fs = append(fs, Finding{Class: k.Class, Stage: string(f.Stage), Severity: string(f.Severity), Root: f.Root,
			Fingerprint: k.Fingerprint, Template: k.Template, Cause: clip(f.Cause, maxCauseBytes), Subjects: subjectText(f)})
	}
	return fs
}

// Finding is a stored finding.
type Finding struct {
	Class       string `json:"class"`
	Stage       string `json:"stage"`
	Severity    string `json:"severity"`
	Root        bool   `json:"root"`
	Fingerprint string `json:"fingerprint"`
	Template    string `json:"template"`
	Cause       string `json:"cause"`
	Subjects    string `json:"subjects,omitempty"`
}

// Limits on what one ticket adds to the index, so it stays small per ticket (the
// input itself stays in its blob).
const (
	maxLines      = 64
	maxLineBytes  = 300
	maxCauseBytes = 600
)

// ErrExists is returned by Add for an input the index holds already with this
// knowledge version.
var ErrExists = errors.New("already in the index")

// Entry is one ticket and its analysis, to record with AddBatch.
type Entry struct {
	Ticket   Ticket
	Analysis Analysis
}

// Added is what AddBatch did with one entry: the stored ticket and its findings, or
// Err (ErrExists for an input recorded already, or the entry's own failure).
type Added struct {
	Ticket   Ticket
	Findings []Finding
	Err      error
}

// Add records a ticket and its analysis in one transaction. An input already in the
// index (same digest) is not added again: if its analysis by this knowledge version is
// there too, Add returns the stored ticket and ErrExists; otherwise the analysis is
// added beside the older ones and becomes the current one.
func (s *Store) Add(ctx context.Context, t Ticket, a Analysis) (Ticket, []Finding, error) {
	out, err := s.AddBatch(ctx, []Entry{{t, a}})
	if err != nil {
		return t, nil, err
	}
	return out[0].Ticket, out[0].Findings, out[0].Err
}

// AddBatch records entries as Add does, in one transaction for the whole batch: a
// SQLite commit (and its full-text index's flush) or a PostgreSQL round of commit is
// paid once per batch rather than once per ticket. An entry that fails does not cost
// the others: the batch is then recorded again one entry per transaction, and each
// entry's own result says what happened to it. The error is for the store as a whole
// (a cancelled context, a lost connection).
func (s *Store) AddBatch(ctx context.Context, entries []Entry) ([]Added, error) {
	out := make([]Added, len(entries))
	for i, e := range entries {
		out[i].Ticket = e.Ticket
		if out[i].Ticket.AddedAt.IsZero() {
			out[i].Ticket.AddedAt = time.Now().UTC()
		}
		if out[i].Ticket.SeenAt.IsZero() {
			out[i].Ticket.SeenAt = out[i].Ticket.AddedAt
		}
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for i := range entries {
			t, fs, err := s.addTx(ctx, tx, out[i].Ticket, entries[i].Analysis)
			out[i] = Added{Ticket: t, Findings: fs, Err: err}
			if err != nil && !errors.Is(err, ErrExists) {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil || len(entries) == 1 {
		if len(entries) == 1 && ctx.Err() == nil {
			out[0].Err = err
			return out, nil
		}
		return nil, err
	}
	// One entry failed the batch: record each on its own, so only it fails.
	for i := range entries {
		t := out[i].Ticket
		var fs []Finding
		var own error
		err := s.tx(ctx, func(tx *sql.Tx) error {
			t, fs, own = s.addTx(ctx, tx, t, entries[i].Analysis)
			if errors.Is(own, ErrExists) {
				return nil // nothing written: commit the empty transaction
			}
			return own
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			err = own
		}
		out[i] = Added{Ticket: t, Findings: fs, Err: err}
	}
	return out, nil
}

// Recorded says whether the index holds the input of this digest with an analysis by
// knowledge, and under which ticket name: adding it again would do nothing, so it need
// not be analyzed again.
func (s *Store) Recorded(ctx context.Context, digest, knowledge string) (string, bool, error) {
	var ticket string
	err := s.queryRow(ctx, `SELECT t.ticket FROM tickets t JOIN analyses a ON a.ticket_id = t.id
		WHERE t.tenant = ? AND t.digest = ? AND a.knowledge = ?`, s.tenant, digest, knowledge).Scan(&ticket)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return ticket, err == nil, err
}

// addTx records one ticket and its analysis in tx.
func (s *Store) addTx(ctx context.Context, tx *sql.Tx, t Ticket, a Analysis) (Ticket, []Finding, error) {
	labels, err := json.Marshal(t.Labels)
	if err != nil {
		return t, nil, err
	}
	err = s.txRow(ctx, tx, `SELECT id, customer, ticket, source, seen_at, added_at FROM tickets WHERE tenant = ? AND digest = ?`, s.tenant, t.Digest).
		Scan(&t.ID, &t.Customer, &t.Ticket, &t.Source, unixScanner{&t.SeenAt}, unixScanner{&t.AddedAt})
	fresh := errors.Is(err, sql.ErrNoRows)
	fs, lines := a.stored()
	switch {
	case fresh:
		err = s.txRow(ctx, tx, `INSERT INTO tickets (tenant, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			s.tenant, t.Digest, t.Customer, t.Ticket, t.Source, t.InputKind, string(labels), t.ProductRelease, t.KubeVersion,
			t.SeenAt.Unix(), t.AddedAt.Unix(), t.Blob).Scan(&t.ID)
		if err != nil {
			return t, nil, err
		}
		for _, l := range lines {
			if err := s.txExec(ctx, tx, `INSERT INTO lines (tenant, ticket_id, text) VALUES (?, ?, ?)`, s.tenant, t.ID, l); err != nil {
				return t, nil, err
			}
		}
	case err != nil:
		return t, nil, err
	default:
		var n int
		if err := s.txRow(ctx, tx, `SELECT COUNT(*) FROM analyses WHERE ticket_id = ? AND knowledge = ?`, t.ID, a.Knowledge).Scan(&n); err != nil {
			return t, nil, err
		}
		if n > 0 {
			return t, nil, ErrExists
		}
	}
	stored, err := s.addFindings(ctx, tx, t.ID, slotOf(t), a.PodflowVersion, a.Knowledge, fs, fresh)
	return t, stored, err
}

// monthOf is the month (yyyymm, UTC) a ticket counts in.
func monthOf(t time.Time) int {
	t = t.UTC()
	return t.Year()*100 + int(t.Month())
}

// dayOf is the day (days since 1970-01-01, UTC) a ticket counts in: its seen time in
// seconds divided by a day's, as SQL's integer division does in the migration that
// filled the table.
func dayOf(t time.Time) int64 { return t.Unix() / secondsPerDay }

const secondsPerDay = 86400

// slot is where a ticket's root causes count in the summaries: its month, its day and
// its customer.
type slot struct {
	seen     time.Time
	customer string
}

func slotOf(t Ticket) slot { return slot{seen: t.SeenAt, customer: t.Customer} }

// ticketSlot reads where a stored ticket counts.
func (s *Store) ticketSlot(ctx context.Context, tx *sql.Tx, ticketID int64) (slot, error) {
	var sl slot
	err := s.txRow(ctx, tx, `SELECT seen_at, customer FROM tickets WHERE id = ?`, ticketID).Scan(unixScanner{&sl.seen}, &sl.customer)
	return sl, err
}

// uncount takes one analysis's root causes out of the summaries (a cause twice in one
// analysis counts once), keeping cause_months and cause_days in step when an analysis
// stops being current or its ticket is deleted.
func (s *Store) uncount(ctx context.Context, tx *sql.Tx, analysisID int64, sl slot) error {
	if err := s.txExec(ctx, tx, `UPDATE cause_months SET tickets = tickets - 1
		WHERE tenant = ? AND month = ? AND EXISTS (SELECT 1 FROM findings f WHERE f.analysis_id = ? AND f.root = 1
			AND f.class = cause_months.class AND f.fingerprint = cause_months.fingerprint)`,
		s.tenant, monthOf(sl.seen), analysisID); err != nil {
		return err
	}
	if err := s.txExec(ctx, tx, `UPDATE cause_days SET tickets = tickets - 1
		WHERE tenant = ? AND day = ? AND customer = ? AND EXISTS (SELECT 1 FROM findings f WHERE f.analysis_id = ? AND f.root = 1
			AND f.class = cause_days.class AND f.fingerprint = cause_days.fingerprint)`,
		s.tenant, dayOf(sl.seen), sl.customer, analysisID); err != nil {
		return err
	}
	return s.txExec(ctx, tx, `DELETE FROM cause_days WHERE tenant = ? AND day = ? AND customer = ? AND tickets <= 0`, s.tenant, dayOf(sl.seen), sl.customer)
}

// rootGroup is one root cause of an analysis as the summaries count it.
type rootGroup struct{ class, fingerprint, template string }

// rootGroups are the distinct root causes (class and fingerprint) of fs, each with its
// least template, in order of first appearance.
func rootGroups(fs []Finding) []rootGroup {
	var out []rootGroup
	at := map[[2]string]int{}
	for _, f := range fs {
		if !f.Root {
			continue
		}
		k := [2]string{f.Class, f.Fingerprint}
		if i, ok := at[k]; ok {
			if f.Template < out[i].template {
				out[i].template = f.Template
			}
			continue
		}
		at[k] = len(out)
		out = append(out, rootGroup{f.Class, f.Fingerprint, f.Template})
	}
	return out
}

// addAnalysis records one analysis of a ticket and makes it the current one.
func (s *Store) addAnalysis(ctx context.Context, tx *sql.Tx, ticketID int64, sl slot, a Analysis, fresh bool) ([]Finding, error) {
	fs, _ := a.stored()
	return s.addFindings(ctx, tx, ticketID, sl, a.PodflowVersion, a.Knowledge, fs, fresh)
}

// addFindings records an analysis made of stored findings, makes it the ticket's
// current one, and moves the ticket's counts in the summaries (cause_months,
// cause_days, current_roots) from the old current analysis to it. The new counts come
// from the findings in hand, so nothing just written is read back.
func (s *Store) addFindings(ctx context.Context, tx *sql.Tx, ticketID int64, sl slot, podflowVersion, knowledge string, fs []Finding, fresh bool) ([]Finding, error) {
	if !fresh {
		var old int64
		err := s.txRow(ctx, tx, `SELECT id FROM analyses WHERE ticket_id = ? AND current = 1`, ticketID).Scan(&old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			if err := s.uncount(ctx, tx, old, sl); err != nil {
				return nil, err
			}
		}
		if err := s.txExec(ctx, tx, `UPDATE analyses SET current = 0 WHERE ticket_id = ?`, ticketID); err != nil {
			return nil, err
		}
		if err := s.txExec(ctx, tx, `DELETE FROM current_roots WHERE ticket_id = ?`, ticketID); err != nil {
			return nil, err
		}
	}
	var analysisID int64
	err := s.txRow(ctx, tx, `INSERT INTO analyses (tenant, ticket_id, podflow_version, knowledge, analyzed_at, current) VALUES (?, ?, ?, ?, ?, 1) RETURNING id`,
		s.tenant, ticketID, podflowVersion, knowledge, nowUnix()).Scan(&analysisID)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, sf := range fs {
		if err := s.txExec(ctx, tx, `INSERT INTO findings (tenant, analysis_id, ticket_id, class, stage, severity, root, fingerprint, template, cause, subjects)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.tenant, analysisID, ticketID, sf.Class, sf.Stage, sf.Severity, boolInt(sf.Root), sf.Fingerprint, sf.Template, sf.Cause, sf.Subjects); err != nil {
			return nil, err
		}
		out = append(out, sf)
	}
	month, day := monthOf(sl.seen), dayOf(sl.seen)
	for _, g := range rootGroups(fs) {
		if err := s.txExec(ctx, tx, `INSERT INTO cause_months (tenant, month, class, fingerprint, template, tickets) VALUES (?, ?, ?, ?, ?, 1)
			ON CONFLICT (tenant, month, class, fingerprint) DO UPDATE SET tickets = cause_months.tickets + 1`,
			s.tenant, month, g.class, g.fingerprint, g.template); err != nil {
			return nil, err
		}
		if err := s.txExec(ctx, tx, `INSERT INTO cause_days (tenant, day, class, fingerprint, customer, template, tickets) VALUES (?, ?, ?, ?, ?, ?, 1)
			ON CONFLICT (tenant, day, class, fingerprint, customer) DO UPDATE SET tickets = cause_days.tickets + 1`,
			s.tenant, day, g.class, g.fingerprint, sl.customer, g.template); err != nil {
			return nil, err
		}
		if err := s.txExec(ctx, tx, `INSERT INTO current_roots (tenant, ticket_id, seen_at, customer, class, fingerprint, template) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.tenant, ticketID, sl.seen.Unix(), sl.customer, g.class, g.fingerprint, g.template); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// troubleLines are the distinct evidence excerpts of an analysis (its own lines, or
// those of its findings), in order, capped.
func troubleLines(a Analysis) []string {
	seen := map[string]bool{}
	var out []string
	add := func(l string) {
		l = clip(strings.TrimSpace(l), maxLineBytes)
		if l == "" || seen[l] || len(out) >= maxLines {
			return
		}
		seen[l] = true
		out = append(out, l)
	}
	for _, l := range a.Lines {
		add(l)
	}
	for _, f := range a.Findings {
		for _, e := range f.Evidence {
			add(e.Excerpt)
		}
	}
	return out
}

func subjectText(f *analyze.Finding) string {
	var names []string
	for _, s := range f.Subjects {
		names = append(names, s.String())
	}
	sort.Strings(names)
	return clip(strings.Join(names, ", "), maxCauseBytes)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n-- // not inside a UTF-8 sequence
	}
	return s[:n]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nowUnix() int64 { return time.Now().Unix() }

// unixScanner scans a BIGINT of Unix seconds into a time.
type unixScanner struct{ t *time.Time }

func (u unixScanner) Scan(v any) error {
	var n sql.NullInt64
	if err := n.Scan(v); err != nil {
		return err
	}
	*u.t = time.Unix(n.Int64, 0).UTC()
	return nil
}

// Tickets lists the tickets, newest first, at most limit (0: all).
func (s *Store) Tickets(ctx context.Context, limit int) ([]Ticket, error) {
	if limit <= 0 {
		limit = -1
		if s.dialect == Postgres {
			limit = 1 << 62
		}
	}
	rows, err := s.query(ctx, `SELECT id, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob
		FROM tickets WHERE tenant = ? ORDER BY seen_at DESC, id DESC LIMIT ?`, s.tenant, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Ticket
	for rows.Next() {
		t, err := scanTicket(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanTicket(r interface{ Scan(...any) error }) (Ticket, error) {
	var t Ticket
	var labels string
	err := r.Scan(&t.ID, &t.Digest, &t.Customer, &t.Ticket, &t.Source, &t.InputKind, &labels, &t.ProductRelease, &t.KubeVersion,
		unixScanner{&t.SeenAt}, unixScanner{&t.AddedAt}, &t.Blob)
	if err != nil {
		return t, err
	}
	if labels != "" && labels != "null" {
		if err := json.Unmarshal([]byte(labels), &t.Labels); err != nil {
			return t, fmt.Errorf("ticket %d: labels: %w", t.ID, err)
		}
	}
	return t, nil
}

// Lookup finds a ticket by its ticket name, its ID (a number) or a digest prefix.
func (s *Store) Lookup(ctx context.Context, ref string) (Ticket, error) {
	prefix := escapeLike(ref)
	// Three look-ups, each served by an index, rather than one OR the planner may scan.
	var out []Ticket
	for _, q := range []struct {
		where string
		args  []any
	}{
		{`ticket = ?`, []any{ref}},
		{`id = ?`, []any{idOf(ref)}},
		{`digest >= ? AND digest < ?`, []any{prefix, prefixEnd(prefix)}},
	} {
		rows, err := s.query(ctx, `SELECT id, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob
			FROM tickets WHERE tenant = ? AND `+q.where+` ORDER BY id LIMIT 2`, append([]any{s.tenant}, q.args...)...)
		if err != nil {
			return Ticket{}, err
		}
		for rows.Next() {
			t, err := scanTicket(rows)
			if err != nil {
				rows.Close()
				return Ticket{}, err
			}
			out = append(out, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return Ticket{}, err
		}
		if len(out) > 0 {
			break
		}
	}
	switch len(out) {
	case 0:
		return Ticket{}, fmt.Errorf("no ticket %q in the index", ref)
	case 1:
		return out[0], nil
	default:
		return Ticket{}, fmt.Errorf("%q names more than one ticket; give the ticket's ID or a longer digest", ref)
	}
}

// idOf is ref as a ticket ID, or -1.
func idOf(ref string) int64 {
	n, err := strconv.ParseInt(ref, 10, 64)
	if err != nil || n <= 0 {
		return -1
	}
	return n
}

// prefixEnd is above every hex digest that starts with p.
func prefixEnd(p string) string { return p + "g" } // digests are lower-case hex

// escapeLike makes a digest prefix of plain hex (at least 6 digits); anything else
// matches nothing. The prefix is looked up as a range, which the unique index serves.
func escapeLike(s string) string {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "!" // digests are hex: matches none
		}
	}
	if len(s) < 6 {
		return "!" // digests are hex: matches none
	}
	return s
}

// CurrentFindings are a ticket's findings of its current analysis.
func (s *Store) CurrentFindings(ctx context.Context, ticketID int64) ([]Finding, Analysis, error) {
	var a Analysis
	var id int64
	err := s.queryRow(ctx, `SELECT id, podflow_version, knowledge FROM analyses WHERE tenant = ? AND ticket_id = ? AND current = 1`, s.tenant, ticketID).
		Scan(&id, &a.PodflowVersion, &a.Knowledge)
	if err != nil {
		return nil, a, err
	}
	rows, err := s.query(ctx, `SELECT class, stage, severity, root, fingerprint, template, cause, subjects FROM findings WHERE analysis_id = ? ORDER BY root DESC, id`, id)
	if err != nil {
		return nil, a, err
	}
	defer rows.Close()
	var out []Finding
	for rows.Next() {
		var f Finding
		var root int
		if err := rows.Scan(&f.Class, &f.Stage, &f.Severity, &root, &f.Fingerprint, &f.Template, &f.Cause, &f.Subjects); err != nil {
			return nil, a, err
		}
		f.Root = root == 1
		out = append(out, f)
	}
	return out, a, rows.Err()
}

// Forget deletes the tickets of a customer or one ticket, with their analyses,
// findings and lines, and returns them so their blobs can be removed.
func (s *Store) Forget(ctx context.Context, customer, ticket string) ([]Ticket, error) {
	if customer == "" && ticket == "" {
		return nil, errors.New("forget: name a customer or a ticket")
	}
	return s.deleteWhere(ctx, `SELECT id, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob
		FROM tickets WHERE tenant = ? AND ((? <> '' AND customer = ?) OR (? <> '' AND ticket = ?))`, s.tenant, customer, customer, ticket, ticket)
}

// Prune deletes the tickets seen before the given time.
func (s *Store) Prune(ctx context.Context, before time.Time) ([]Ticket, error) {
	return s.deleteWhere(ctx, `SELECT id, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob
		FROM tickets WHERE tenant = ? AND seen_at < ?`, s.tenant, before.Unix())
}

func (s *Store) deleteWhere(ctx context.Context, sel string, args ...any) ([]Ticket, error) {
	var out []Ticket
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, s.q(sel), args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			t, err := scanTicket(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, t := range out {
			var current int64
			err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM analyses WHERE ticket_id = ? AND current = 1`), t.ID).Scan(&current)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				if err := s.uncount(ctx, tx, current, slotOf(t)); err != nil {
					return err
				}
			}
			// Lines first: the FTS trigger reads each row as it goes.
			for _, st := range []string{`DELETE FROM lines WHERE ticket_id = ?`, `DELETE FROM jobs WHERE ticket_id = ?`, `DELETE FROM current_roots WHERE ticket_id = ?`,
				`DELETE FROM findings WHERE ticket_id = ?`, `DELETE FROM analyses WHERE ticket_id = ?`, `DELETE FROM tickets WHERE id = ?`} {
				if _, err := tx.ExecContext(ctx, s.q(st), t.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, err
}
