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

// Add records a ticket and its analysis in one transaction. An input already in the
// index (same digest) is not added again: if its analysis by this knowledge version is
// there too, Add returns the stored ticket and ErrExists; otherwise the analysis is
// added beside the older ones and becomes the current one.
func (s *Store) Add(ctx context.Context, t Ticket, a Analysis) (Ticket, []Finding, error) {
	if t.AddedAt.IsZero() {
		t.AddedAt = time.Now().UTC()
	}
	if t.SeenAt.IsZero() {
		t.SeenAt = t.AddedAt
	}
	labels, err := json.Marshal(t.Labels)
	if err != nil {
		return t, nil, err
	}
	var stored []Finding
	err = s.tx(ctx, func(tx *sql.Tx) error {
		err := s.txRow(ctx, tx, `SELECT id, customer, ticket, source, seen_at, added_at FROM tickets WHERE tenant = ? AND digest = ?`, s.tenant, t.Digest).
			Scan(&t.ID, &t.Customer, &t.Ticket, &t.Source, unixScanner{&t.SeenAt}, unixScanner{&t.AddedAt})
		fresh := errors.Is(err, sql.ErrNoRows)
		switch {
		case fresh:
			err = s.txRow(ctx, tx, `INSERT INTO tickets (tenant, digest, customer, ticket, source, input_kind, labels, product_release, kube_version, seen_at, added_at, blob)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				s.tenant, t.Digest, t.Customer, t.Ticket, t.Source, t.InputKind, string(labels), t.ProductRelease, t.KubeVersion,
				t.SeenAt.Unix(), t.AddedAt.Unix(), t.Blob).Scan(&t.ID)
			if err != nil {
				return err
			}
			lines := troubleLines(a)
			for _, l := range lines {
				if err := s.txExec(ctx, tx, `INSERT INTO lines (tenant, ticket_id, text) VALUES (?, ?, ?)`, s.tenant, t.ID, l); err != nil {
					return err
				}
			}
		case err != nil:
			return err
		default:
			var n int
			if err := s.txRow(ctx, tx, `SELECT COUNT(*) FROM analyses WHERE ticket_id = ? AND knowledge = ?`, t.ID, a.Knowledge).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return ErrExists
			}
		}
		stored, err = s.addAnalysis(ctx, tx, t.ID, monthOf(t.SeenAt), a, fresh)
		return err
	})
	return t, stored, err
}

// monthOf is the month (yyyymm, UTC) a ticket counts in.
func monthOf(t time.Time) int {
	t = t.UTC()
	return t.Year()*100 + int(t.Month())
}

// ticketMonth reads the month a stored ticket counts in.
func (s *Store) ticketMonth(ctx context.Context, tx *sql.Tx, ticketID int64) (int, error) {
	var seen time.Time
	if err := s.txRow(ctx, tx, `SELECT seen_at FROM tickets WHERE id = ?`, ticketID).Scan(unixScanner{&seen}); err != nil {
		return 0, err
	}
	return monthOf(seen), nil
}

// countMonths adds delta to the month's count of each root cause of one analysis (a
// cause twice in one analysis counts once), keeping cause_months in step.
func (s *Store) countMonths(ctx context.Context, tx *sql.Tx, analysisID int64, month, delta int) error {
	return s.txExec(ctx, tx, `INSERT INTO cause_months (tenant, month, class, fingerprint, template, tickets)
		SELECT f.tenant, CAST(? AS INTEGER), f.class, f.fingerprint, MIN(f.template), CAST(? AS BIGINT) FROM findings f
		WHERE f.analysis_id = ? AND f.root = 1 GROUP BY f.tenant, f.class, f.fingerprint
		ON CONFLICT (tenant, month, class, fingerprint) DO UPDATE SET tickets = cause_months.tickets + excluded.tickets`,
		month, delta, analysisID)
}

// addAnalysis records one analysis of a ticket and makes it the current one.
func (s *Store) addAnalysis(ctx context.Context, tx *sql.Tx, ticketID int64, month int, a Analysis, fresh bool) ([]Finding, error) {
	var fs []Finding
	for _, f := range a.Findings {
		k := FindingKey(f)
		fs = append(fs, Finding{Class: k.Class, Stage: string(f.Stage), Severity: string(f.Severity), Root: f.Root,
			Fingerprint: k.Fingerprint, Template: k.Template, Cause: clip(f.Cause, maxCauseBytes), Subjects: subjectText(f)})
	}
	return s.addFindings(ctx, tx, ticketID, month, a.PodflowVersion, a.Knowledge, fs, fresh)
}

// addFindings records an analysis made of stored findings, makes it the ticket's
// current one, and moves the ticket's month counts from the old current analysis to it.
func (s *Store) addFindings(ctx context.Context, tx *sql.Tx, ticketID int64, month int, podflowVersion, knowledge string, fs []Finding, fresh bool) ([]Finding, error) {
	if !fresh {
		var old int64
		err := s.txRow(ctx, tx, `SELECT id FROM analyses WHERE ticket_id = ? AND current = 1`, ticketID).Scan(&old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			if err := s.countMonths(ctx, tx, old, month, -1); err != nil {
				return nil, err
			}
		}
		if err := s.txExec(ctx, tx, `UPDATE analyses SET current = 0 WHERE ticket_id = ?`, ticketID); err != nil {
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
	if err := s.countMonths(ctx, tx, analysisID, month, 1); err != nil {
		return nil, err
	}
	if err := s.txExec(ctx, tx, `DELETE FROM current_roots WHERE ticket_id = ?`, ticketID); err != nil {
		return nil, err
	}
	if err := s.txExec(ctx, tx, `INSERT INTO current_roots (tenant, ticket_id, seen_at, customer, class, fingerprint, template)
		SELECT t.tenant, t.id, t.seen_at, t.customer, f.class, f.fingerprint, MIN(f.template)
		FROM tickets t JOIN findings f ON f.ticket_id = t.id AND f.analysis_id = ? AND f.root = 1
		WHERE t.id = ? GROUP BY t.tenant, t.id, t.seen_at, t.customer, f.class, f.fingerprint`, analysisID, ticketID); err != nil {
		return nil, err
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
				if err := s.countMonths(ctx, tx, current, monthOf(t.SeenAt), -1); err != nil {
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
