package main

import (
	"context"
	"sync"
)

// pipeline is how podflow records many analyses in one store: feed hands out the work
// (inputs to add, jobs claimed from the store), n goroutines analyze side by side, and
// the calling goroutine alone writes, committing whatever results are waiting when it
// is free (at most maxBatch), so the analyzers never wait on the store's one writer and
// results that finish together share a commit.
//
// feed stops when send returns false (the pipeline is ending). A write error ends the
// pipeline: feeding and analyzing stop, the results still coming are dropped, and the
// error is returned beside feed's. When ctx ends, feed and the analyzers see it; every
// result they return is still handed to write, which decides what to keep.
func pipeline[I, R any](ctx context.Context, n, maxBatch int,
	feed func(ctx context.Context, send func(I) bool) error,
	analyze func(ctx context.Context, item I) R,
	write func(batch []R) error) (feedErr, writeErr error) {
	n, maxBatch = max(n, 1), max(maxBatch, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan I, n)
	done := make(chan R, 2*n)
	go func() {
		defer close(todo)
		feedErr = feed(ctx, func(it I) bool {
			select {
			case todo <- it:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for it := range todo {
				done <- analyze(ctx, it)
			}
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	var batch []R
	flush := func() {
		if len(batch) > 0 && writeErr == nil {
			if writeErr = write(batch); writeErr != nil {
				cancel() // the store is gone: stop feeding and analyzing
			}
		}
		batch = batch[:0]
	}
	for r := range done {
		batch = append(batch, r)
		// Commit when no other result waits, or a batch is full: under load results
		// come together and share a commit, and a quiet store sees each at once.
		if len(done) == 0 || len(batch) >= maxBatch {
			flush()
		}
	}
	flush()
	// feedErr is set before todo closes, and done closes only after that.
	return feedErr, writeErr
}
