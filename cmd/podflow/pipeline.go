package main

import (
	"context"
	"sync"
	"time"
)

// batching says when pipeline's writer commits.
type batching struct {
	// max is the most results one commit takes.
	max int
	// linger is how long a result may wait for others to share its commit. Zero
	// commits whenever no other result waits: a quiet store sees each at once, and
	// the analyzers get at most a few results ahead of the writer.
	linger time.Duration
	// ahead is how many items may wait for an analyzer (at least one per analyzer):
	// a feeder that claims items in batches hands a whole batch over at once and
	// claims the next while the analyzers work through it.
	ahead int
}

// pipeline is how podflow records many analyses in one store: feed hands out the work
// (inputs to add, jobs claimed from the store), n goroutines analyze side by side, and
// the calling goroutine alone writes, committing whatever results are waiting when it
// is free (at most b.max), so results that finish together share a commit. With
// b.linger, a result waits up to that long for others, and up to b.max results wait
// for the writer without holding up an analyzer: when analyses are short, a commit per
// result would cost the one writer more than the analyses cost each analyzer, and the
// analyzers would wait on it.
//
// feed stops when send returns false (the pipeline is ending). A write error ends the
// pipeline: feeding and analyzing stop, the results still coming are dropped, and the
// error is returned beside feed's. When ctx ends, feed and the analyzers see it; every
// result they return is still handed to write, which decides what to keep.
func pipeline[I, R any](ctx context.Context, n int, b batching,
	feed func(ctx context.Context, send func(I) bool) error,
	analyze func(ctx context.Context, item I) R,
	write func(batch []R) error) (feedErr, writeErr error) {
	n, maxBatch := max(n, 1), max(b.max, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan I, max(n, b.ahead))
	waiting := 2 * n
	if b.linger > 0 {
		waiting = max(waiting, maxBatch)
	}
	done := make(chan R, waiting)
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
	var due <-chan time.Time // set while a result waits for its commit
	for {
		select {
		case r, ok := <-done:
			if !ok {
				flush()
				// feedErr is set before todo closes, and done closes only after that.
				return feedErr, writeErr
			}
			batch = append(batch, r)
			// Commit when a batch is full, or without linger when no other result
			// waits: under load results come together and share a commit.
			if len(batch) >= maxBatch || (b.linger == 0 && len(done) == 0) {
				flush()
				due = nil
			} else if due == nil {
				due = time.After(b.linger)
			}
		case <-due:
			flush()
			due = nil
		}
	}
}
