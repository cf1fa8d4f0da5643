package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
)

// Table is a query's answer: named columns and rows of text, rendered by the caller as
// a table, JSON or CSV.
type Table struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// Grouping names what `query causes` counts by besides the cause.
type Grouping string

// The groupings `query causes --by` accepts: none, or the ticket's customer, product
// release, Kubernetes version, or the finding's stage.
const (
	ByNone     Grouping = ""
	ByCustomer Grouping = "customer"
	ByRelease  Grouping = "release"
	ByKube     Grouping = "kube"
	ByStage    Grouping = "stage"
	ByMonth    Grouping = "month"
)

// Groupings lists the valid groupings.
var Groupings = []Grouping{ByCustomer, ByRelease, ByKube, ByStage, ByMonth}

// groupExpr is the column each grouping reads: constants, chosen by name.
func (s *Store) groupExpr(g Grouping) (string, error) {
	switch g {
	case ByNone:
		return "''", nil
	case ByCustomer:
		return "t.customer", nil
	case ByRelease:
		return "t.product_release", nil
	case ByKube:
		return "t.kube_version", nil
	case ByStage:
		return "f.stage", nil
	case ByMonth:
		if s.dialect == Postgres {
			return "to_char(to_timestamp(t.seen_at) AT TIME ZONE 'UTC', 'YYYY-MM')", nil
		}
		return "strftime('%Y-%m', t.seen_at, 'unixepoch')", nil
	}
	return "", fmt.Errorf("unknown grouping %q (want one of customer, release, kube, stage, month)", g)
}

// CauseQuery selects what `query causes` counts.
type CauseQuery struct {
	Since time.Time
	By    Grouping
	// Unexplained keeps only the findings no rule or signature explains: the biggest
	// groups are the next signatures to write.
	Unexplained bool
	Limit       int
}

// Causes counts the tickets per cause (class and fingerprint) among the current root
// findings of tickets seen since q.Since, most tickets first.
//
// By month, q.Limit counts causes rather than rows: the answer is the top causes over
// the whole span, each with its tickets per month, so a year of many causes is a few
// rows per cause. The counts are exact from q.Since and made in SQL from the summaries
// the store keeps: whole months from cause_months, the first month's whole days from
// cause_days, its first, partial day from current_roots. There is no customers column.
func (s *Store) Causes(ctx context.Context, q CauseQuery) (Table, error) {
	if q.By == ByMonth {
		return s.causesByMonth(ctx, q)
	}
	if q.By == ByNone || q.By == ByCustomer {
		// Whole days from the per-day summary, the first, partial day from the current
		// root causes with their ticket's date and customer: both are one index range.
		g := "''"
		if q.By == ByCustomer {
			g = "customer"
		}
		since := q.Since.Unix()
		fullFrom := since / secondsPerDay
		if since%secondsPerDay != 0 {
			fullFrom++
		}
		if since < 0 {
			since, fullFrom = 0, 0
		}
		cols := []string{"cause", string(q.By), "tickets", "customers", "template", "fingerprint"}
		t, err := s.table(ctx, cols, `SELECT class, `+g+` AS grp, SUM(n) AS tickets, COUNT(DISTINCT customer) AS customers,
				MIN(template), fingerprint
			FROM (SELECT class, fingerprint, customer, template, tickets AS n FROM cause_days
					WHERE tenant = ? AND day >= ? AND (? = 0 OR class = ?)
				UNION ALL
				SELECT class, fingerprint, customer, template, 1 FROM current_roots
					WHERE tenant = ? AND seen_at >= ? AND seen_at < ? AND (? = 0 OR class = ?)) c
			GROUP BY class, fingerprint, grp
			HAVING SUM(n) > 0
			ORDER BY tickets DESC, class, grp
			LIMIT ?`, s.tenant, fullFrom, boolInt(q.Unexplained), analyze.UnexplainedRule,
			s.tenant, since, fullFrom*secondsPerDay, boolInt(q.Unexplained), analyze.UnexplainedRule, limit(q.Limit))
		if q.By == ByNone {
			t = t.drop(1)
		}
		return t, err
	}
	g, err := s.groupExpr(q.By)
	if err != nil {
		return Table{}, err
	}
	stmt := `SELECT f.class, ` + g + ` AS grp, COUNT(DISTINCT f.ticket_id) AS tickets, COUNT(DISTINCT t.customer) AS customers,
			MIN(f.template), f.fingerprint
		FROM tickets t CROSS JOIN analyses a CROSS JOIN findings f
		WHERE t.tenant = ? AND t.seen_at >= ? AND a.ticket_id = t.id AND a.current = 1 AND f.analysis_id = a.id
			AND f.root = 1 AND (? = 0 OR f.class = ?)
		GROUP BY f.class, f.fingerprint, grp
		ORDER BY tickets DESC, f.class, grp
		LIMIT ?`
	cols := []string{"cause", string(q.By), "tickets", "customers", "template", "fingerprint"}
	if q.By == ByNone {
		cols[1] = ""
	}
	t, err := s.table(ctx, cols, stmt, s.tenant, q.Since.Unix(), boolInt(q.Unexplained), analyze.UnexplainedRule, limit(q.Limit))
	if q.By == ByNone {
		t = t.drop(1)
	}
	return t, err
}

// causesByMonth is Causes by month (see Causes).
func (s *Store) causesByMonth(ctx context.Context, q CauseQuery) (Table, error) {
	since := q.Since.UTC()
	if since.Unix() < 0 {
		since = time.Unix(0, 0).UTC()
	}
	// The first month counts from since: its whole days from the per-day summary, its
	// first, partial day from the current root causes. Later months are whole. (A year
	// read from the per-day summary alone would read about a row per ticket: it keys
	// the customer too.)
	first := time.Date(since.Year(), since.Month(), 1, 0, 0, 0, 0, time.UTC)
	wholeMonths := first
	if !since.Equal(first) {
		wholeMonths = first.AddDate(0, 1, 0)
	}
	fullDayFrom := since.Unix() / secondsPerDay
	if since.Unix()%secondsPerDay != 0 {
		fullDayFrom++
	}
	unx := boolInt(q.Unexplained)
	t, err := s.table(ctx, []string{"cause", "month", "tickets", "template", "fingerprint"},
		`WITH c AS (
			SELECT class, fingerprint, month, template, tickets AS n FROM cause_months
				WHERE tenant = ? AND month >= ? AND (? = 0 OR class = ?)
			UNION ALL
			SELECT class, fingerprint, CAST(? AS INTEGER), template, tickets FROM cause_days
				WHERE tenant = ? AND day >= ? AND day < ? AND (? = 0 OR class = ?)
			UNION ALL
			SELECT class, fingerprint, CAST(? AS INTEGER), template, 1 FROM current_roots
				WHERE tenant = ? AND seen_at >= ? AND seen_at < ? AND (? = 0 OR class = ?)),
		m AS (SELECT class, fingerprint, month, SUM(n) AS tickets, MIN(template) AS template
			FROM c GROUP BY class, fingerprint, month HAVING SUM(n) > 0),
		r AS (SELECT class, fingerprint, month, tickets,
			MIN(template) OVER (PARTITION BY class, fingerprint) AS template,
			SUM(tickets) OVER (PARTITION BY class, fingerprint) AS total FROM m),
		k AS (SELECT class, fingerprint, month, tickets, template,
			DENSE_RANK() OVER (ORDER BY total DESC, class, fingerprint) AS rnk FROM r)
		SELECT class, month, tickets, template, fingerprint FROM k WHERE rnk <= ? ORDER BY rnk, month`,
		s.tenant, monthOf(wholeMonths), unx, analyze.UnexplainedRule,
		monthOf(since), s.tenant, fullDayFrom, wholeMonths.Unix()/secondsPerDay, unx, analyze.UnexplainedRule,
		monthOf(since), s.tenant, since.Unix(), fullDayFrom*secondsPerDay, unx, analyze.UnexplainedRule,
		limit(q.Limit))
	return t.monthText(1), err
}

// Who lists the tickets whose current analysis has a finding of the cause (a class
// or a fingerprint), newest first.
func (s *Store) Who(ctx context.Context, cause string, since time.Time, lim int) (Table, error) {
	return s.table(ctx, []string{"ticket", "customer", "release", "kube", "seen", "stage", "cause"},
		`SELECT t.ticket, t.customer, t.product_release, t.kube_version, t.seen_at, MIN(f.stage), MIN(f.cause)
		FROM findings f
		JOIN analyses a ON a.id = f.analysis_id AND a.current = 1
		JOIN tickets t ON t.id = f.ticket_id
		WHERE f.tenant = ? AND (f.class = ? OR f.fingerprint = ?) AND t.seen_at >= ?
		GROUP BY t.id, t.ticket, t.customer, t.product_release, t.kube_version, t.seen_at
		ORDER BY t.seen_at DESC, t.id DESC LIMIT ?`, s.tenant, cause, cause, since.Unix(), limit(lim))
}

// Similar lists the other tickets that share a root fingerprint with the ticket: is
// this a known issue, and where was it seen before.
func (s *Store) Similar(ctx context.Context, ref string, lim int) (Table, error) {
	t, err := s.Lookup(ctx, ref)
	if err != nil {
		return Table{}, err
	}
	// The current root causes of the ticket, and of every other ticket with one of
	// their fingerprints: ranges of current_roots' fingerprint index, no finding read.
	return s.table(ctx, []string{"ticket", "customer", "release", "seen", "cause", "shared"},
		`SELECT o.ticket, o.customer, o.product_release, o.seen_at, c.class, c.shared
		FROM (SELECT r2.ticket_id, MIN(r2.class) AS class, COUNT(DISTINCT r2.fingerprint) AS shared, MAX(r2.seen_at) AS seen
			FROM current_roots r2
			WHERE r2.tenant = ? AND r2.ticket_id <> ? AND r2.fingerprint IN (
				SELECT r1.fingerprint FROM current_roots r1 WHERE r1.tenant = ? AND r1.ticket_id = ?)
			GROUP BY r2.ticket_id
			ORDER BY shared DESC, seen DESC, r2.ticket_id DESC LIMIT ?) c
		JOIN tickets o ON o.id = c.ticket_id
		ORDER BY c.shared DESC, c.seen DESC, o.id DESC`, s.tenant, t.ID, s.tenant, t.ID, limit(lim))
}

// Trend counts tickets per month for one cause (class or fingerprint), or for every
// cause when cause is empty, from the per-month summary (whole months from since's).
// A ticket with two root causes of one class counts for each of their fingerprints.
func (s *Store) Trend(ctx context.Context, cause string, since time.Time) (Table, error) {
	t, err := s.table(ctx, []string{"month", "cause", "tickets"},
		`SELECT month, class, SUM(tickets) FROM cause_months
		WHERE tenant = ? AND month >= ? AND (? = '' OR class = ? OR fingerprint = ?)
		GROUP BY month, class HAVING SUM(tickets) > 0
		ORDER BY month, SUM(tickets) DESC, class`, s.tenant, monthOf(since), cause, cause, cause)
	return t.monthText(0), err
}

// monthText shows a yyyymm column as yyyy-mm.
func (t Table) monthText(col int) Table {
	for _, r := range t.Rows {
		if m := r[col]; len(m) == 6 {
			r[col] = m[:4] + "-" + m[4:]
		}
	}
	return t
}

// Search finds a phrase in the stored trouble lines (SQLite FTS5, PostgreSQL
// tsvector), the most recently added first. The phrase is a parameter: its words must
// appear in this order.
func (s *Store) Search(ctx context.Context, phrase string, lim int) (Table, error) {
	phrase = strings.TrimSpace(phrase)
	if phrase == "" {
		return Table{}, errors.New("search: empty phrase")
	}
	cols := []string{"ticket", "customer", "seen", "line"}
	if s.dialect == Postgres {
		return s.searchPostgres(ctx, cols, phrase, limit(lim))
	}
	// An FTS5 string: one phrase, its quotes doubled, so no operator in it counts.
	fts := `"` + strings.ReplaceAll(phrase, `"`, `""`) + `"`
	return s.table(ctx, cols, `SELECT t.ticket, t.customer, t.seen_at, l.text
		FROM lines_fts JOIN lines l ON l.id = lines_fts.rowid JOIN tickets t ON t.id = l.ticket_id
		WHERE lines_fts MATCH ? AND l.tenant = ?
		ORDER BY lines_fts.rowid DESC LIMIT ?`, fts, s.tenant, limit(lim))
}

// searchWindow is how many of the newest lines the first PostgreSQL search round
// looks at; each further round looks at searchGrowth times more.
const (
	searchWindow = 4096
	searchGrowth = 8
)

// searchStatement finds a phrase among the lines whose ID is above a bound, newest
// first. The GIN index on tsv gives the lines holding the phrase's words and the
// primary key the window; only the lines in both are read from the table and checked
// for the words' order.
const searchStatement = `SELECT t.ticket, t.customer, t.seen_at, l.text
	FROM lines l JOIN tickets t ON t.id = l.ticket_id
	WHERE l.tenant = ? AND l.id > ? AND l.tsv @@ phraseto_tsquery('simple', ?)
	ORDER BY l.id DESC LIMIT ?`

// searchPostgres looks for the phrase in windows of the newest lines, growing until it
// has lim lines or has looked at all: a phrase in many lines is answered from the
// newest few thousand, never by checking every line that holds its words (a tsvector
// phrase match is checked against each candidate row), and a rare phrase's last round
// is the whole table, whose candidates are few.
func (s *Store) searchPostgres(ctx context.Context, cols []string, phrase string, lim int) (Table, error) {
	var top int64
	if err := s.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM lines WHERE tenant = ?`, s.tenant).Scan(&top); err != nil {
		return Table{}, err
	}
	for window := int64(searchWindow); ; window *= searchGrowth {
		above := top - window
		if above < 0 {
			above = -1
		}
		t, err := s.table(ctx, cols, searchStatement, s.tenant, above, phrase, lim)
		if err != nil || len(t.Rows) >= lim || above < 0 {
			return t, err
		}
	}
}

// Diff compares two tickets' current root causes by fingerprint.
func (s *Store) Diff(ctx context.Context, refA, refB string) (Table, error) {
	a, err := s.Lookup(ctx, refA)
	if err != nil {
		return Table{}, err
	}
	b, err := s.Lookup(ctx, refB)
	if err != nil {
		return Table{}, err
	}
	fa, _, err := s.CurrentFindings(ctx, a.ID)
	if err != nil {
		return Table{}, err
	}
	fb, _, err := s.CurrentFindings(ctx, b.ID)
	if err != nil {
		return Table{}, err
	}
	in := func(fs []Finding, fp string) bool {
		for _, f := range fs {
			if f.Fingerprint == fp {
				return true
			}
		}
		return false
	}
	t := Table{Columns: []string{"in", "cause", "stage", "root", "template"}}
	seen := map[string]bool{}
	for _, side := range []struct {
		name  string
		fs    []Finding
		other []Finding
	}{{refA, fa, fb}, {refB, fb, fa}} {
		for _, f := range side.fs {
			if seen[f.Fingerprint] {
				continue
			}
			seen[f.Fingerprint] = true
			where := side.name
			if in(side.other, f.Fingerprint) {
				where = "both"
			}
			t.Rows = append(t.Rows, []string{where, f.Class, f.Stage, strconv.FormatBool(f.Root), f.Template})
		}
	}
	return t, nil
}

// KnowledgeDiff compares two knowledge versions over every ticket analyzed by both:
// which tickets the newer explains that the older did not, and the reverse.
type KnowledgeDiff struct {
	From, To     string
	Both         int      `json:"ticketsAnalyzedByBoth"`
	MoreExplain  int      `json:"explainsMore"`
	StopExplain  int      `json:"stopsExplaining"`
	ChangedCause int      `json:"changedCause"`
	Examples     []string `json:"examples,omitempty"`
}

// DiffKnowledge compares the analyses of two knowledge versions.
func (s *Store) DiffKnowledge(ctx context.Context, from, to string) (KnowledgeDiff, error) {
	d := KnowledgeDiff{From: from, To: to}
	rows, err := s.query(ctx, `SELECT a.ticket_id, a.knowledge,
			COALESCE(MIN(CASE WHEN f.root = 1 AND f.class <> ? THEN f.class END), '')
		FROM analyses a LEFT JOIN findings f ON f.analysis_id = a.id
		WHERE a.tenant = ? AND a.knowledge IN (?, ?)
		GROUP BY a.ticket_id, a.knowledge`, analyze.UnexplainedRule, s.tenant, from, to)
	if err != nil {
		return d, err
	}
	defer rows.Close()
	type pair struct{ from, to *string }
	byTicket := map[int64]*pair{}
	var order []int64
	for rows.Next() {
		var id int64
		var k, class string
		if err := rows.Scan(&id, &k, &class); err != nil {
			return d, err
		}
		p := byTicket[id]
		if p == nil {
			p = &pair{}
			byTicket[id] = p
			order = append(order, id)
		}
		c := class
		if k == from {
			p.from = &c
		} else {
			p.to = &c
		}
	}
	if err := rows.Err(); err != nil {
		return d, err
	}
	for _, id := range order {
		p := byTicket[id]
		if p.from == nil || p.to == nil {
			continue
		}
		d.Both++
		switch {
		case *p.from == "" && *p.to != "":
			d.MoreExplain++
			if len(d.Examples) < 10 {
				d.Examples = append(d.Examples, fmt.Sprintf("ticket %d: now %s", id, *p.to))
			}
		case *p.from != "" && *p.to == "":
			d.StopExplain++
			if len(d.Examples) < 10 {
				d.Examples = append(d.Examples, fmt.Sprintf("ticket %d: no longer %s", id, *p.from))
			}
		case *p.from != *p.to:
			d.ChangedCause++
		}
	}
	return d, nil
}

// Knowledge lists the knowledge versions in the index with their analyses.
func (s *Store) Knowledge(ctx context.Context) (Table, error) {
	return s.table(ctx, []string{"knowledge", "podflow", "analyses", "current", "last"},
		`SELECT knowledge, MIN(podflow_version), COUNT(*), SUM(current), MAX(analyzed_at) FROM analyses WHERE tenant = ?
		GROUP BY knowledge ORDER BY MAX(analyzed_at) DESC`, s.tenant)
}

// SQL runs one read-only statement: on SQLite the store must have been opened with
// Options.ReadOnly (mode=ro, query_only); on PostgreSQL it runs in a read-only
// transaction as the podflow_reader role, under the tenant's row-level security.
func (s *Store) SQL(ctx context.Context, stmt string, lim int) (Table, error) {
	if !s.readOnly {
		return Table{}, errors.New("sql: the store must be opened read-only")
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Table{}, err
	}
	defer func() { _ = tx.Rollback() }() // a read-only transaction: nothing to keep
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "SET LOCAL ROLE podflow_reader"); err != nil {
			return Table{}, fmt.Errorf("sql: take the read-only role podflow_reader: %w", err)
		}
	}
	rows, err := tx.QueryContext(ctx, stmt)
	if err != nil {
		return Table{}, fmt.Errorf("sql on the index %s, opened read-only: %w", s.Where, err)
	}
	defer rows.Close()
	t, err := readTable(rows, nil, lim)
	if err != nil {
		return Table{}, fmt.Errorf("sql on the index %s, opened read-only: %w", s.Where, err)
	}
	return t, nil
}

func (s *Store) table(ctx context.Context, cols []string, stmt string, args ...any) (Table, error) {
	rows, err := s.query(ctx, stmt, args...)
	if err != nil {
		return Table{}, err
	}
	defer rows.Close()
	return readTable(rows, cols, 0)
}

// readTable reads rows as text; a column named "seen" holds Unix seconds and is shown
// as a date.
func readTable(rows *sql.Rows, cols []string, lim int) (Table, error) {
	names, err := rows.Columns()
	if err != nil {
		return Table{}, err
	}
	if cols == nil {
		cols = names
	}
	t := Table{Columns: cols, Rows: [][]string{}}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if lim > 0 && len(t.Rows) >= lim {
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return t, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = text(v)
			if i < len(cols) && (cols[i] == "seen" || cols[i] == "last") {
				if n, err := strconv.ParseInt(row[i], 10, 64); err == nil {
					row[i] = time.Unix(n, 0).UTC().Format("2006-01-02")
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, rows.Err()
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	default:
		return fmt.Sprint(x)
	}
}

func (t Table) drop(col int) Table {
	t.Columns = append(t.Columns[:col:col], t.Columns[col+1:]...)
	for i, r := range t.Rows {
		t.Rows[i] = append(r[:col:col], r[col+1:]...)
	}
	return t
}

func limit(n int) int {
	if n <= 0 {
		return 1000
	}
	return n
}
