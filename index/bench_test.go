package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
)

// benchTickets are n tickets of three findings each, with the names, addresses and
// numbers a cluster's own evidence holds (which fingerprints mask).
func benchTickets(n int) []Entry {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Entry, n)
	for i := range out {
		pod, ns := fmt.Sprintf("web-%d-7d9f8c6b5-x%04d", i%50, i), fmt.Sprintf("shop-%d", i%7)
		out[i] = Entry{
			Ticket: Ticket{Digest: fmt.Sprintf("%064x", i+1), Ticket: fmt.Sprintf("T-%06d", i+1), Customer: fmt.Sprintf("customer-%03d", i%300),
				Source: "bundle.tgz", InputKind: "bundle", SeenAt: at.Add(time.Duration(i) * time.Hour)},
			Analysis: Analysis{PodflowVersion: "bench", Knowledge: "k-bench", Findings: []*analyze.Finding{
				finding("image-tag-not-found", analyze.StageImage, fmt.Sprintf("the image registry.example.com/shop/web:1.%d does not exist", i%9), ns, pod,
					fmt.Sprintf(`Failed to pull image "registry.example.com/shop/web:1.%d": rpc error: code = NotFound desc = not found`, i%9)),
				finding("runtime-oom-killed", analyze.StageRuntime, fmt.Sprintf("container app was killed for memory at %dMi", 128+i%4*64), ns, pod,
					fmt.Sprintf("Memory cgroup out of memory: Killed process %d (app) total-vm:%dkB", 4000+i, 900000+i)),
				finding("catalog", analyze.StageRuntime, "dial tcp 10.0.3.7:5432: connect: connection refused", ns, pod,
					fmt.Sprintf("dial tcp 10.0.%d.7:5432: connect: connection refused", i%250)),
			}},
		}
		out[i].Analysis.Findings[1].Root = false
		out[i].Analysis.Findings[2].Root = false
	}
	return out
}

// BenchmarkAddBatch measures the index's writer per ticket (fingerprints, findings,
// summaries, trouble lines and their full-text index), 64 tickets per transaction as
// index add and the workers commit, beside its floor: each ticket written as one JSON
// row into a table without any index, in the same batches, in a SQLite file of the
// same settings. ns/op is per ticket.
func BenchmarkAddBatch(b *testing.B) {
	const batch = 64
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) {
		s, err := Open(ctx, filepath.Join(b.TempDir(), "floor.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := s.db.ExecContext(ctx, "CREATE TABLE bench_floor (digest TEXT, body TEXT)"); err != nil {
			b.Fatal(err)
		}
		tickets := benchTickets(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for lo := 0; lo < len(tickets); lo += batch {
			err := s.tx(ctx, func(tx *sql.Tx) error {
				for _, e := range tickets[lo:min(lo+batch, len(tickets))] {
					body, err := json.Marshal(e)
					if err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, "INSERT INTO bench_floor (digest, body) VALUES (?, ?)", e.Ticket.Digest, string(body)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		s, err := Open(ctx, filepath.Join(b.TempDir(), "index.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		tickets := benchTickets(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for lo := 0; lo < len(tickets); lo += batch {
			added, err := s.AddBatch(ctx, tickets[lo:min(lo+batch, len(tickets))])
			if err != nil {
				b.Fatal(err)
			}
			for _, a := range added {
				if a.Err != nil {
					b.Fatal(a.Err)
				}
			}
		}
	})
}
