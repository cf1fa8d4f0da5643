package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// largeInput is the input size from which analyze shows its progress: below it the
// report comes back before a bar would be worth reading.
const largeInput = 50 << 20

// progress shows long work on stderr while it runs. It uses mpb, which draws several
// bars and spinners at once (one per phase now, one per source for a concurrent
// collection) on any writer and redraws in place without hand-written escape codes.
// A nil *progress shows nothing: that is what a command gets when stderr is not a
// terminal or -q was given, so stdout and logs are never touched.
type progress struct {
	p *mpb.Progress
}

// newProgress returns a progress display on stderr, or nil when it must stay quiet.
func newProgress(ctx context.Context, g *globalOptions) *progress {
	if !g.streams.ErrTTY || g.quiet {
		return nil
	}
	return &progress{p: mpb.NewWithContext(ctx, mpb.WithOutput(g.streams.ErrOut), mpb.WithWidth(32),
		// The caller decided stderr is a terminal (ErrTTY); mpb need not guess again.
		mpb.WithAutoRefresh())}
}

// progressDelay is how long work on an input below largeInput runs before its progress
// shows: a small input with much work in it (thousands of pods in a few MiB of JSON)
// still shows what it is doing, and a quick one never flickers a bar.
var progressDelay = time.Second

// progressFor is the progress display for work on inputs, on a terminal without -q:
// from the start for inputs of at least largeInput bytes, and for smaller ones once the
// work has run for progressDelay.
func (g *globalOptions) progressFor(paths []string) *progress {
	if inputSize(paths) >= largeInput {
		return newProgress(context.Background(), g)
	}
	if !g.streams.ErrTTY || g.quiet {
		return nil
	}
	show := make(chan any)
	if progressDelay <= 0 {
		close(show)
	} else {
		time.AfterFunc(progressDelay, func() { close(show) })
	}
	return &progress{p: mpb.NewWithContext(context.Background(), mpb.WithOutput(g.streams.ErrOut), mpb.WithWidth(32),
		mpb.WithAutoRefresh(), mpb.WithRenderDelay(show))}
}

// task is one line of the display: a spinner for work of unknown length, a bar with
// counts for work that is counted.
type task struct {
	bar *mpb.Bar
	// total is the work planned so far, for a bar that grows (growing).
	mu    sync.Mutex
	total int64
}

// spinner starts a line for work whose length is unknown.
func (p *progress) spinner(name string) *task {
	if p == nil {
		return nil
	}
	b := p.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerOnComplete("done"),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return &task{bar: b}
}

// counter starts a line for total units of work, showing done/total.
func (p *progress) counter(name string, total int) *task {
	if p == nil {
		return nil
	}
	b := p.p.New(int64(total), mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return &task{bar: b}
}

// growing starts a bar whose total grows as the work is planned (a collection plans a
// pod's log sources once it has listed the pods), showing done/planned so far.
func (p *progress) growing(name string) *task {
	if p == nil {
		return nil
	}
	// A total of 0 leaves completion to done: reaching the total planned so far is not
	// the end.
	b := p.p.New(0, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return &task{bar: b}
}

// tally starts a spinner that counts units of work whose number is not known ahead:
// "redact  412 files".
func (p *progress) tally(name, unit string) *task {
	if p == nil {
		return nil
	}
	b := p.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerOnComplete("done"),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CurrentNoUnit("%d "+unit, decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return &task{bar: b}
}

// grow adds n units to the work planned.
func (t *task) grow(n int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(n)
	t.bar.SetTotal(t.total, false)
}

// printf writes a line above the bars, which keep drawing below it.
func (p *progress) printf(format string, args ...any) {
	if p != nil {
		fmt.Fprintf(p.p, format, args...)
	}
}

// inc counts one unit done.
func (t *task) inc() {
	if t != nil {
		t.bar.Increment()
	}
}

// done completes the line.
func (t *task) done() {
	if t != nil {
		t.bar.SetTotal(-1, true)
	}
}

// wait lets the display draw its last frame; call it before writing results.
func (p *progress) wait() {
	if p != nil {
		p.p.Wait()
	}
}

// inputSize is the size of the inputs on disk (a directory's files summed); stdin and
// unreadable paths count as nothing, the open itself reports their errors.
func inputSize(paths []string) int64 {
	var total int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			total += st.Size()
			continue
		}
		// A walk error only makes the estimate smaller; the open reports it.
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					total += info.Size()
				}
			}
			return nil
		})
	}
	return total
}

// sizeText is a byte count for people: 312 MB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	default:
		return fmt.Sprintf("%d kB", n>>10)
	}
}

// podLogEvery is how many pods make one progress line with -v when stderr is not a
// terminal.
var podLogEvery = 1000

// podProgress counts the pods a load reads: a "pods" line on the display (a terminal
// without -q), or with -v and stderr not a terminal, a log line every podLogEvery pods.
// Otherwise (-q, or a pipe without -v) it is nil and nothing is shown. done ends the
// count once the load has ended.
func (g *globalOptions) podProgress(prog *progress) (count func(), done func()) {
	switch {
	case g.quiet:
	case prog != nil:
		t := prog.tally("pods", "pods")
		return t.inc, t.done
	case g.verbosity > 0 && !g.streams.ErrTTY:
		n := 0
		log := g.log()
		return func() {
				if n++; n%podLogEvery == 0 {
					log.Infof("analyze: %d pods read", n)
				}
			}, func() {
				if n >= podLogEvery {
					log.Infof("analyze: %d pods read in all", n)
				}
			}
	}
	return nil, func() {}
}
