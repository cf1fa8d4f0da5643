package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"podflow.dev/podflow/analyze"
)

// Reanalyzed records a new analysis of a ticket already in the index (by a newer
// knowledge version) and makes it the current one; older analyses are kept, so two
// knowledge versions can be compared. One already recorded returns ErrExists.
func (s *Store) Reanalyzed(ctx context.Context, ticketID int64, a Analysis) ([]Finding, error) {
	var out []Finding
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.reanalyzed(ctx, tx, ticketID, a)
		return err
	})
	return out, err
}

func (s *Store) reanalyzedTx(ctx context.Context, tx *sql.Tx, ticketID int64, a Analysis) error {
	_, err := s.reanalyzed(ctx, tx, ticketID, a)
	return err
}

func (s *Store) reanalyzed(ctx context.Context, tx *sql.Tx, ticketID int64, a Analysis) ([]Finding, error) {
	var n int
	if err := s.txRow(ctx, tx, `SELECT COUNT(*) FROM analyses WHERE tenant = ? AND ticket_id = ? AND knowledge = ?`, s.tenant, ticketID, a.Knowledge).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, ErrExists
	}
	sl, err := s.ticketSlot(ctx, tx, ticketID)
	if err != nil {
		return nil, err
	}
	return s.addAnalysis(ctx, tx, ticketID, sl, a, false)
}

// Plan says what re-analysis to a knowledge version would do.
type Plan struct {
	Knowledge string `json:"knowledge"`
	Tickets   int    `json:"tickets"`
	// Current counts the tickets whose current analysis is by this knowledge already.
	Current int `json:"current"`
	// Stale are the tickets to re-analyze; WithBlob of them have a kept input to
	// re-analyze from, the rest only their trouble lines (enough for signatures).
	Stale    int `json:"stale"`
	WithBlob int `json:"withBlob"`
	// Lines counts the stored trouble lines a signature re-run reads.
	Lines int `json:"lines"`
	// ByKnowledge counts the stale tickets per knowledge version they are at.
	ByKnowledge map[string]int `json:"byKnowledge"`
}

// PlanReanalysis counts what re-analysis to knowledge would touch.
func (s *Store) PlanReanalysis(ctx context.Context, knowledge string) (Plan, error) {
	p := Plan{Knowledge: knowledge, ByKnowledge: map[string]int{}}
	rows, err := s.query(ctx, `SELECT COALESCE(a.knowledge, ''), COUNT(*), SUM(CASE WHEN t.blob <> '' THEN 1 ELSE 0 END)
		FROM tickets t LEFT JOIN analyses a ON a.ticket_id = t.id AND a.current = 1
		WHERE t.tenant = ? GROUP BY a.knowledge`, s.tenant)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n, blobs int
		if err := rows.Scan(&k, &n, &blobs); err != nil {
			return p, err
		}
		p.Tickets += n
		if k == knowledge {
			p.Current += n
			continue
		}
		p.Stale += n
		p.WithBlob += blobs
		p.ByKnowledge[k] += n
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	err = s.queryRow(ctx, `SELECT COUNT(*) FROM lines WHERE tenant = ?`, s.tenant).Scan(&p.Lines)
	return p, err
}

// SignatureHit is one stored trouble line a signature explains.
type SignatureHit struct {
	TicketID  int64  `json:"ticketId"`
	Ticket    string `json:"ticket"`
	Signature string `json:"signature"`
	Cause     string `json:"cause"`
	// Key is the fleet key the signature's fingerprint captures make, if it has one.
	Key  string `json:"key,omitempty"`
	Line string `json:"line"`
}

// RunSignatures tries signatures on every stored trouble line without reopening any
// input: the lines are streamed from the store and each signature's literal is
// checked before its pattern. It returns the first hit per ticket and signature.
func (s *Store) RunSignatures(ctx context.Context, sigs []*analyze.Signature) ([]SignatureHit, int, error) {
	rows, err := s.query(ctx, `SELECT l.ticket_id, t.ticket, l.text FROM lines l JOIN tickets t ON t.id = l.ticket_id WHERE l.tenant = ? ORDER BY l.ticket_id, l.id`, s.tenant)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	type key struct {
		id  int64
		sig string
	}
	seen := map[key]bool{}
	var hits []SignatureHit
	n := 0
	for rows.Next() {
		var id int64
		var ticket, line string
		if err := rows.Scan(&id, &ticket, &line); err != nil {
			return nil, n, err
		}
		n++
		for _, sig := range sigs {
			if seen[key{id, sig.ID}] {
				continue
			}
			cause, fk, ok := sig.ExplainKey(line)
			if !ok {
				continue
			}
			seen[key{id, sig.ID}] = true
			hits = append(hits, SignatureHit{TicketID: id, Ticket: ticket, Signature: sig.ID, Cause: cause, Key: fk, Line: line})
		}
	}
	return hits, n, rows.Err()
}

// Job states.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Job is one ticket to re-analyze to one knowledge version.
type Job struct {
	ID        int64
	TicketID  int64
	Knowledge string
	Blob      string
	Attempts  int
}

// Enqueue queues a job per ticket not yet at knowledge; it returns how many it queued.
func (s *Store) Enqueue(ctx context.Context, knowledge string) (int, error) {
	res, err := s.exec(ctx, `INSERT INTO jobs (tenant, ticket_id, knowledge, state, updated_at)
		SELECT t.tenant, t.id, ?, 'queued', ? FROM tickets t
		WHERE t.tenant = ? AND t.blob <> ''
		AND NOT EXISTS (SELECT 1 FROM analyses a WHERE a.ticket_id = t.id AND a.knowledge = ?)
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.ticket_id = t.id AND j.knowledge = ?)`,
		knowledge, nowUnix(), s.tenant, knowledge, knowledge)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Claim takes the next queued job for worker. On PostgreSQL many workers claim at
// once: FOR UPDATE SKIP LOCKED hands each a different row without waiting. SQLite
// serializes writers, so one transaction claims there.
func (s *Store) Claim(ctx context.Context, worker string) (*Job, error) {
	return s.ClaimShard(ctx, worker, 0, 1)
}

// ClaimShard is Claim limited to the tickets whose ID modulo shards is shard: the
// share of one index of a Kubernetes Indexed Job.
func (s *Store) ClaimShard(ctx context.Context, worker string, shard, shards int) (*Job, error) {
	js, err := s.ClaimBatch(ctx, worker, shard, shards, 1)
	if err != nil || len(js) == 0 {
		return nil, err
	}
	return js[0], nil
}

// ClaimBatch takes up to n queued jobs of the shard at once, oldest first, so a worker
// that analyzes several inputs side by side claims them in one statement.
func (s *Store) ClaimBatch(ctx context.Context, worker string, shard, shards, n int) ([]*Job, error) {
	if shards < 1 {
		shards = 1
	}
	stmt := `UPDATE jobs SET state = 'running', worker = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (SELECT id FROM jobs WHERE tenant = ? AND state = 'queued' AND ticket_id % ? = ? ORDER BY id LIMIT ?)
		RETURNING id, ticket_id, knowledge, attempts`
	if s.dialect == Postgres {
		stmt = `UPDATE jobs SET state = 'running', worker = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (SELECT id FROM jobs WHERE tenant = ? AND state = 'queued' AND ticket_id % ? = ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
		RETURNING id, ticket_id, knowledge, attempts`
	}
	var out []*Job
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, s.q(stmt), worker, nowUnix(), s.tenant, shards, shard, max(n, 1))
		if err != nil {
			return err
		}
		for rows.Next() {
			var j Job
			if err := rows.Scan(&j.ID, &j.TicketID, &j.Knowledge, &j.Attempts); err != nil {
				rows.Close()
				return err
			}
			out = append(out, &j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, j := range out {
			if err := tx.QueryRowContext(ctx, s.q(`SELECT blob FROM tickets WHERE id = ?`), j.TicketID).Scan(&j.Blob); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// JobResult is one claimed job's outcome: the new analysis, or the error that ended it.
type JobResult struct {
	Job      *Job
	Analysis *Analysis
	Err      error
}

// FinishBatch records the analyses of finished jobs and marks each job done or failed,
// all in one transaction, so the one goroutine that writes for many analyzing ones
// commits once per batch. An analysis recorded already (ErrExists) counts as done. If
// the batch fails, each job is recorded again on its own, and a job whose recording
// fails is marked failed with that error. It returns each job's final error.
func (s *Store) FinishBatch(ctx context.Context, rs []JobResult) ([]error, error) {
	errs := make([]error, len(rs))
	one := func(tx *sql.Tx, i int) error {
		r := rs[i]
		jobErr := r.Err
		if jobErr == nil && r.Analysis != nil {
			jobErr = s.reanalyzedTx(ctx, tx, r.Job.TicketID, *r.Analysis)
			if errors.Is(jobErr, ErrExists) {
				jobErr = nil
			}
		}
		errs[i] = jobErr
		if jobErr != nil && r.Err == nil {
			return jobErr // a failure to record: the batch is retried one job at a time
		}
		return s.finishTx(ctx, tx, r.Job, jobErr)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for i := range rs {
			if err := one(tx, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return errs, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for i := range rs {
		err := s.tx(ctx, func(tx *sql.Tx) error { return one(tx, i) })
		if err != nil && errs[i] != nil && rs[i].Err == nil {
			// The analysis could not be recorded: the job fails with why.
			err = s.tx(ctx, func(tx *sql.Tx) error { return s.finishTx(ctx, tx, rs[i].Job, errs[i]) })
		}
		if err != nil {
			return nil, fmt.Errorf("finish job %d: %w", rs[i].Job.ID, err)
		}
	}
	return errs, nil
}

// Requeue puts a shard's failed jobs back in the queue, and with owned (the shard
// belongs to this worker alone, as an Indexed Job's index does) its running ones too:
// a retried index tries its failures again and takes over what a killed pod held.
func (s *Store) Requeue(ctx context.Context, knowledge string, shard, shards int, owned bool) (int, error) {
	if shards < 1 {
		shards = 1
	}
	res, err := s.exec(ctx, `UPDATE jobs SET state = 'queued', updated_at = ?
		WHERE tenant = ? AND knowledge = ? AND ticket_id % ? = ? AND (state = 'failed' OR (? = 1 AND state = 'running'))`,
		nowUnix(), s.tenant, knowledge, shards, shard, boolInt(owned))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Release puts claimed jobs that were not finished back in the queue, as if never
// claimed: a worker stopped by a signal hands back what it held, so the next run
// (which queues only what has no job yet and claims only queued jobs) takes them. A
// job no longer running (finished, or taken over) is left as it is.
func (s *Store) Release(ctx context.Context, jobs []*Job) error {
	if len(jobs) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, j := range jobs {
			if err := s.txExec(ctx, tx, `UPDATE jobs SET state = 'queued', worker = '', attempts = attempts - 1, updated_at = ?
				WHERE id = ? AND tenant = ? AND state = 'running' AND attempts = ?`, nowUnix(), j.ID, s.tenant, j.Attempts); err != nil {
				return fmt.Errorf("release job %d: %w", j.ID, err)
			}
		}
		return nil
	})
}

// Finish marks a job done, or failed with the error's text.
func (s *Store) Finish(ctx context.Context, j *Job, jobErr error) error {
	if err := s.tx(ctx, func(tx *sql.Tx) error { return s.finishTx(ctx, tx, j, jobErr) }); err != nil {
		return fmt.Errorf("finish job %d: %w", j.ID, err)
	}
	return nil
}

func (s *Store) finishTx(ctx context.Context, tx *sql.Tx, j *Job, jobErr error) error {
	state, msg := JobDone, ""
	if jobErr != nil {
		state, msg = JobFailed, clip(jobErr.Error(), maxCauseBytes)
	}
	return s.txExec(ctx, tx, `UPDATE jobs SET state = ?, error = ?, updated_at = ? WHERE id = ?`, state, msg, nowUnix(), j.ID)
}

// Jobs counts jobs per state for a knowledge version.
func (s *Store) Jobs(ctx context.Context, knowledge string) (map[string]int, error) {
	rows, err := s.query(ctx, `SELECT state, COUNT(*) FROM jobs WHERE tenant = ? AND knowledge = ? GROUP BY state`, s.tenant, knowledge)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// SignatureRun is what trying signatures on the stored lines did.
type SignatureRun struct {
	Hits []SignatureHit `json:"hits"`
	// Lines counts the stored lines read.
	Lines int `json:"lines"`
	// Tickets counts the tickets in the index; Changed those whose analysis the
	// signatures change, Recorded the new analyses recorded (0 on a dry run).
	Tickets  int `json:"tickets"`
	Changed  int `json:"changed"`
	Recorded int `json:"recorded"`
	// Knowledge maps each knowledge version the changed tickets were at to the new
	// version their new analyses are recorded under.
	Knowledge map[string]string `json:"knowledge"`
	// Over the whole index: tickets the signatures now explain that nothing explained
	// (MoreExplain), that a changed signature no longer explains (StopExplain), and
	// whose explained root cause changes (ChangedCause).
	MoreExplain  int `json:"explainsMore"`
	StopExplain  int `json:"stopsExplaining"`
	ChangedCause int `json:"changedCause"`
}

// SignatureKnowledge names the knowledge version of base with the signatures added or
// replaced: a digest of base and of each signature's identity and text.
func SignatureKnowledge(base string, sigs []*analyze.Signature) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", base, FingerprintVersion)
	for _, s := range sigs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%q\x00%q\x00%s\x00%q\x00", s.ID, s.Stage, s.Severity, s.Patterns, s.Unless, s.Cause, s.Fingerprint)
	}
	return "k-" + hex.EncodeToString(h.Sum(nil)[:6])
}

// ReanalyzeSignatures runs new or changed signatures over the stored trouble lines of
// every ticket, without reopening any input, and (unless dryRun) records for each
// ticket whose analysis they change a new analysis, under the knowledge version
// SignatureKnowledge names; the older analyses are kept. The new analysis is the
// current one with:
//   - the findings of the given signatures' IDs replaced by what the signatures now
//     find in the ticket's lines (nothing, if a changed signature no longer matches:
//     the ticket's trouble is then unexplained again);
//   - the unexplained findings at a matching signature's stage dropped, since the
//     signature now explains that stage's trouble;
//   - a signature's finding a root cause when the ticket had no explained root
//     cause, and a finding beside the Go rules' root otherwise (which stage broke
//     first among the rules' causes needs the whole evidence, which is not reopened).
func (s *Store) ReanalyzeSignatures(ctx context.Context, sigs []*analyze.Signature, podflowVersion string, dryRun bool) (SignatureRun, error) {
	run := SignatureRun{Knowledge: map[string]string{}}
	hits, n, err := s.RunSignatures(ctx, sigs)
	if err != nil {
		return run, err
	}
	run.Hits, run.Lines = hits, n
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM tickets WHERE tenant = ?`, s.tenant).Scan(&run.Tickets); err != nil {
		return run, err
	}
	byID := map[string]*analyze.Signature{}
	for _, sig := range sigs {
		byID[sig.ID] = sig
	}
	// The tickets to look at: those a signature matches, and those whose current
	// analysis has a finding of one of the signatures' IDs (a changed signature).
	affected := map[int64][]SignatureHit{}
	var order []int64
	for _, h := range hits {
		if _, ok := affected[h.TicketID]; !ok {
			order = append(order, h.TicketID)
		}
		affected[h.TicketID] = append(affected[h.TicketID], h)
	}
	for _, sig := range sigs {
		rows, err := s.query(ctx, `SELECT DISTINCT f.ticket_id FROM findings f JOIN analyses a ON a.id = f.analysis_id AND a.current = 1
			WHERE f.tenant = ? AND f.class = ? ORDER BY f.ticket_id`, s.tenant, sig.ID)
		if err != nil {
			return run, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return run, err
			}
			if _, ok := affected[id]; !ok {
				affected[id] = nil
				order = append(order, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return run, err
		}
	}
	for _, id := range order {
		old, a, err := s.CurrentFindings(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			continue // a ticket without an analysis has nothing to change
		}
		if err != nil {
			return run, err
		}
		next := signatureFindings(old, affected[id], byID)
		before, after := explainedRoot(old), explainedRoot(next)
		if sameFindings(old, next) {
			continue
		}
		run.Changed++
		switch {
		case before == "" && after != "":
			run.MoreExplain++
		case before != "" && after == "":
			run.StopExplain++
		case before != after:
			run.ChangedCause++
		}
		to := SignatureKnowledge(a.Knowledge, sigs)
		run.Knowledge[a.Knowledge] = to
		if dryRun {
			continue
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			var have int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM analyses WHERE ticket_id = ? AND knowledge = ?`), id, to).Scan(&have); err != nil {
				return err
			}
			if have > 0 {
				return ErrExists
			}
			sl, err := s.ticketSlot(ctx, tx, id)
			if err != nil {
				return err
			}
			_, err = s.addFindings(ctx, tx, id, sl, podflowVersion, to, next, false)
			return err
		})
		if errors.Is(err, ErrExists) {
			continue
		}
		if err != nil {
			return run, fmt.Errorf("ticket %d: %w", id, err)
		}
		run.Recorded++
	}
	return run, nil
}

// signatureFindings is a ticket's findings after the signatures ran on its lines.
func signatureFindings(old []Finding, hits []SignatureHit, sigs map[string]*analyze.Signature) []Finding {
	stages := map[string]bool{}
	for _, h := range hits {
		stages[string(sigs[h.Signature].Stage)] = true
	}
	var next []Finding
	for _, f := range old {
		if sigs[f.Class] != nil {
			continue // the signature's own findings are made again below
		}
		if f.Class == analyze.UnexplainedRule && stages[f.Stage] {
			continue
		}
		next = append(next, f)
	}
	explained := explainedRoot(next) != ""
	seen := map[string]bool{}
	for _, h := range hits {
		sig := sigs[h.Signature]
		k := FindingKey(&analyze.Finding{Rule: sig.ID, Stage: sig.Stage, Cause: h.Cause, FleetKey: h.Key})
		if seen[k.Fingerprint] {
			continue
		}
		seen[k.Fingerprint] = true
		next = append(next, Finding{Class: sig.ID, Stage: string(sig.Stage), Severity: string(sig.Severity), Root: !explained,
			Fingerprint: k.Fingerprint, Template: k.Template, Cause: clip(h.Cause, maxCauseBytes)})
	}
	return next
}

// explainedRoot is the class of the first root finding a rule or signature explains.
func explainedRoot(fs []Finding) string {
	for _, f := range fs {
		if f.Root && f.Class != analyze.UnexplainedRule {
			return f.Class
		}
	}
	return ""
}

func sameFindings(a, b []Finding) bool {
	key := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s\x00%s\x00%t\x00%s", f.Class, f.Fingerprint, f.Root, f.Cause))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}
