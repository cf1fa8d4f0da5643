package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/index"
	"podflow.dev/podflow/internal/checkpoint"
	"podflow.dev/podflow/untrusted"
)

// reanalyzeBlob re-analyzes one kept input with the catalog.
func reanalyzeBlob(ctx context.Context, g *globalOptions, blobs string, j *index.Job, catalog []*analyze.Rule) (*analyze.Report, error) {
	if j.Blob == "" || strings.ContainsAny(j.Blob, `/\`) || strings.HasPrefix(j.Blob, ".") {
		return nil, fmt.Errorf("ticket %d: no kept input to re-analyze", j.TicketID)
	}
	p := filepath.Join(blobs, j.Blob)
	b, err := bundle.OpenContext(ctx, p, bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("ticket %d: %w", j.TicketID, err)
	}
	graph, err := analyze.LoadWith(ctx, []*bundle.Bundle{b}, g.log(), analyze.LoadOptions{TroubleOnly: true})
	if err != nil {
		return nil, fmt.Errorf("ticket %d: analyze %s: %w", j.TicketID, j.Blob, err)
	}
	return analyze.RunContext(ctx, graph, catalog, analyze.Options{PodflowVersion: version, Unexplained: true})
}

// workerResult counts what a worker did.
type workerResult struct {
	done, failed int
	// released counts the jobs it claimed and handed back unfinished (stopped).
	released int
	errs     []string
}

// reanalyzeBatching is when a worker with n analyzers commits: a re-analysis from a
// kept input takes a few milliseconds, so a commit per job would keep the one writer
// busier than the analyzers; a quarter of a second's results share one instead. A
// whole claim waits for the analyzers, so the next is claimed while they work.
func reanalyzeBatching(n int) batching {
	return batching{max: 64, linger: 250 * time.Millisecond, ahead: claimSize(n)}
}

// claimSize is how many jobs a worker claims at once with n analyzers: enough that
// claiming (a write transaction, which on SQLite waits for the writer's commit) is
// rare beside analyses of a few milliseconds, few enough that workers sharing a queue
// end together.
func claimSize(n int) int { return min(max(4*n, 16), 64) }

// work claims jobs until none is left and records each re-analysis through pipeline:
// one goroutine claims jobs in batches, n analyze side by side, and the calling
// goroutine alone writes, committing the finished analyses (and their jobs' states) a
// batch at a time. A job that fails is marked failed with its error and the others go
// on; the caller decides what a failure means for its exit code. When ctx ends, the
// analyses finished are still recorded, and the jobs claimed but not finished (not
// started, or stopped half way) go back to the queue for the next run.
func work(ctx context.Context, g *globalOptions, s *index.Store, worker, blobs string, catalog []*analyze.Rule, shard, shards, n int) (workerResult, error) {
	n = max(n, 1)
	var r workerResult
	var mu sync.Mutex
	held := map[int64]*index.Job{} // claimed, not finished
	// What is analyzed is recorded even when a signal stops the run.
	wctx := context.WithoutCancel(ctx)
	claimErr, writeErr := pipeline(ctx, n, reanalyzeBatching(n),
		func(ctx context.Context, send func(*index.Job) bool) error {
			for ctx.Err() == nil {
				js, err := s.ClaimBatch(ctx, worker, shard, shards, claimSize(n))
				if err != nil || len(js) == 0 {
					return err
				}
				mu.Lock()
				for _, j := range js {
					held[j.ID] = j
				}
				mu.Unlock()
				for _, j := range js {
					if !send(j) {
						return nil
					}
				}
			}
			return nil
		},
		func(ctx context.Context, j *index.Job) index.JobResult {
			if ctx.Err() != nil {
				return index.JobResult{Job: j, Err: context.Cause(ctx)}
			}
			res := index.JobResult{Job: j}
			rep, err := reanalyzeBlob(ctx, g, blobs, j, catalog)
			if err != nil {
				res.Err = err
			} else {
				res.Analysis = &index.Analysis{PodflowVersion: version, Knowledge: j.Knowledge, Findings: rep.Findings}
				res.Analysis.Prepare()
			}
			checkpoint.Reach("reanalyze")
			return res
		},
		func(batch []index.JobResult) error {
			var finished []index.JobResult
			for _, res := range batch {
				// A job the signal stopped is not the input's failure: it stays held,
				// and is handed back below.
				if res.Err == nil || ctx.Err() == nil {
					finished = append(finished, res)
				}
			}
			if len(finished) == 0 {
				return nil
			}
			errs, err := s.FinishBatch(wctx, finished)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, res := range finished {
				delete(held, res.Job.ID)
			}
			mu.Unlock()
			for _, jobErr := range errs {
				if jobErr != nil {
					r.failed++
					r.errs = append(r.errs, jobErr.Error())
					g.log().WithField("worker", worker).Errorf("%v", jobErr)
					continue
				}
				r.done++
			}
			return nil
		})
	if len(held) > 0 {
		back := make([]*index.Job, 0, len(held))
		for _, j := range held {
			back = append(back, j)
		}
		if err := s.Release(wctx, back); err != nil && writeErr == nil {
			writeErr = err
		}
		r.released = len(back)
	}
	if writeErr != nil {
		return r, writeErr
	}
	if claimErr != nil && ctx.Err() == nil {
		return r, claimErr
	}
	if ctx.Err() != nil {
		return r, &keptError{err: context.Cause(ctx), kept: fmt.Sprintf("%d re-analyzed and %d failed are kept, %d handed back to the queue (run the same command again to go on)",
			r.done, r.failed, r.released)}
	}
	return r, nil
}

// runWorkers enqueues the tickets not at the catalog's knowledge and re-analyzes them
// with n inputs analyzed side by side in this process.
func runWorkers(ctx context.Context, g *globalOptions, sf *storeFlags, blobs string, n int) (workerResult, error) {
	s, catalog, err := openWithCatalog(ctx, sf)
	if err != nil {
		return workerResult{}, err
	}
	defer s.Close()
	knowledge := knowledgeVersion(catalog)
	if _, err := s.Enqueue(ctx, knowledge); err != nil {
		return workerResult{}, err
	}
	return work(ctx, g, s, "local", blobs, catalog, 0, 1, n)
}

type fleetWorkerOptions struct {
	*globalOptions
	store  storeFlags
	blobs  string
	shard  int
	shards int
	jobs   int
}

func newFleetCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Re-analyze the index's kept inputs with workers: here, or as a Kubernetes Indexed Job",
		Example: `  podflow fleet worker --db postgres://podflow@db/podflow --blobs /blobs
  podflow fleet run --kube podflow --parallelism 4 --db postgres://podflow@db/podflow --image podflow:v1`,
	}
	cmd.AddCommand(newFleetWorkerCmd(g), newFleetRunCmd(g))
	return cmd
}

func newFleetWorkerCmd(g *globalOptions) *cobra.Command {
	o := &fleetWorkerOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Claim re-analysis jobs from the index's job table until none is left",
		Long: `A worker queues the tickets that the current knowledge has not analyzed (once, for all
workers), then claims them one at a time (PostgreSQL: FOR UPDATE SKIP LOCKED, so many workers
never take the same one), re-analyzes each from its kept input and records the analysis.
With --shard I --shards N (an Indexed Job sets I from JOB_COMPLETION_INDEX) it takes only the
tickets whose ID modulo N is I. It exits 1 when any of its jobs failed.`,
		Example: `  podflow fleet worker --db postgres://podflow@db/podflow --blobs /blobs`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.shard < 0 {
				if v := os.Getenv("JOB_COMPLETION_INDEX"); v != "" {
					if _, err := fmt.Sscanf(v, "%d", &o.shard); err != nil {
						return usageError("JOB_COMPLETION_INDEX %q: not a number", v)
					}
				} else {
					o.shard = 0
				}
			}
			if o.jobs < 1 {
				return usageError("--jobs %d: want at least 1", o.jobs)
			}
			if o.shards < 1 || o.shard >= o.shards {
				return usageError("--shard %d of --shards %d: want 0 <= shard < shards", o.shard, o.shards)
			}
			return runFleetWorker(cmd.Context(), o)
		},
	}
	o.store.add(cmd.Flags())
	cmd.Flags().StringVar(&o.blobs, "blobs", "", "the folder of kept inputs")
	cmd.Flags().IntVar(&o.shard, "shard", -1, "take only this shard's tickets (default $JOB_COMPLETION_INDEX, else 0)")
	cmd.Flags().IntVar(&o.shards, "shards", 1, "the number of shards")
	cmd.Flags().IntVar(&o.jobs, "jobs", 1, "analyze this many inputs side by side (one goroutine writes the results)")
	return cmd
}

func runFleetWorker(ctx context.Context, o *fleetWorkerOptions) error {
	s, catalog, err := openWithCatalog(ctx, &o.store)
	if err != nil {
		return err
	}
	defer s.Close()
	knowledge := knowledgeVersion(catalog)
	if _, err := s.Enqueue(ctx, knowledge); err != nil {
		return err
	}
	if _, err := s.Requeue(ctx, knowledge, o.shard, o.shards, o.shards > 1); err != nil {
		return err
	}
	host, _ := os.Hostname()
	r, err := work(ctx, o.globalOptions, s, fmt.Sprintf("%s/%d", host, o.shard), o.blobs, catalog, o.shard, o.shards, o.jobs)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "shard %d of %d: %d re-analyzed, %d failed (knowledge %s)\n", o.shard, o.shards, r.done, r.failed, knowledge)
	if r.failed > 0 {
		return &codeError{code: exitError, err: fmt.Errorf("shard %d: %d job(s) failed: %s", o.shard, r.failed, untrusted.Text(strings.Join(r.errs, "; ")))}
	}
	return nil
}
