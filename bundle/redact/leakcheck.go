package redact

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"podflow.dev/podflow/bundle"
)

// FlagSkipLeakScan turns off the scan of a freshly written bundle.
const FlagSkipLeakScan = "skip-leak-scan"

// LeakError reports secrets that the detectors still find in a bundle that was just
// redacted. It names where they are, never what they are.
type LeakError struct {
	Path    string
	Hits    []Hit
	Removed bool
}

func (e *LeakError) Error() string {
	const show = 10
	var b strings.Builder
	fmt.Fprintf(&b, "leak scan of %q found %d possible secret(s) that redaction left in place", e.Path, len(e.Hits))
	if e.Removed {
		b.WriteString("; the bundle was removed")
	}
	for i, h := range e.Hits {
		if i == show {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Hits)-show)
			break
		}
		fmt.Fprintf(&b, "\n  %s:%d: %s", h.File, h.Line, h.Rule)
	}
	fmt.Fprintf(&b, "\nadd a rule with --%s, or keep such a bundle with --%s", FlagConfig, FlagSkipLeakScan)
	return b.String()
}

// CheckWritten scans the bundle just written at path with the policy that redacted it.
// When anything is found the bundle is removed, so a leak never stays on disk by
// accident, and a *LeakError says where. A disabled policy (--no-redact) is not scanned:
// the user asked for secrets.
func (f *Flags) CheckWritten(path string, p *Policy, limits bundle.Limits) error {
	return f.CheckWrittenContext(context.Background(), path, p, limits)
}

// CheckWrittenContext is CheckWritten that stops with ctx. The bundle is read as a
// stream: each file is scanned, on every core, as it goes by and is then let go, so a
// large bundle is never held in memory; a bundle whose entries lack one top directory
// (a directory bundle can be so) is read whole first, as Open does.
func (f *Flags) CheckWrittenContext(ctx context.Context, path string, p *Policy, limits bundle.Limits) error {
	if f.SkipLeakScan || p == nil || !p.Enabled() {
		return nil
	}
	hits, err := scanStreaming(ctx, path, p, limits)
	if errors.Is(err, bundle.ErrMixedRoot) {
		var b *bundle.Bundle
		if b, err = bundle.Open(path, limits); err == nil {
			hits = p.Scan(b)
		}
	}
	if err != nil {
		return fmt.Errorf("leak scan: %w", err)
	}
	return removeLeaking(path, hits)
}

// removeLeaking removes the bundle at path when the scan found anything in it.
func removeLeaking(path string, hits []Hit) error {
	if len(hits) == 0 {
		return nil
	}
	leak := &LeakError{Path: path, Hits: hits}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("%w (removing it failed: %w)", leak, err)
	}
	leak.Removed = true
	return leak
}

// scanStreaming scans every file of the bundle at path as the archive is read, the
// manifest last, and returns the hits in file and line order.
func scanStreaming(ctx context.Context, path string, p *Policy, limits bundle.Limits) ([]Hit, error) {
	type file struct {
		name string
		data []byte
	}
	files := make(chan file, 2*runtime.GOMAXPROCS(0))
	var (
		mu   sync.Mutex
		hits []Hit
		wg   sync.WaitGroup
	)
	scan := func(name string, data []byte) {
		h := p.ScanFile(name, data)
		mu.Lock()
		hits = append(hits, h...)
		mu.Unlock()
	}
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for f := range files {
				scan(f.name, f.data)
			}
		})
	}
	b, err := bundle.ScanContext(ctx, path, limits, bundle.ScanOptions{Each: func(name string, data []byte) error {
		files <- file{name, bytes.Clone(data)} // data is only valid during the call
		return nil
	}})
	close(files)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if data, err := b.ReadFile(bundle.ManifestPath); err == nil {
		scan(bundle.ManifestPath, data)
	}
	sortHits(hits)
	return hits, nil
}

// sortHits puts hits in file and line order.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), strings.Compare(a.Rule, b.Rule))
	})
}

// LeakScan is the leak scan of a bundle while it is written: the writer hands it each
// file's final bytes (bundle.WriterOptions.Scan), which are what the archive holds, and
// Check then judges the bundle as CheckWritten would, without reading it back.
//
// A file the policy's Apply left as it came is not scanned again: ScanFile runs the
// very search Apply ran (every hit comes with an edit), on the same bytes, so it could
// only find nothing. Most of a collection is such files.
type LeakScan struct {
	p    *Policy
	mu   sync.Mutex
	hits []Hit
}

// LeakScan returns the scan to run while writing a bundle with p, or nil when none is
// due: --skip-leak-scan, or redaction turned off (the user asked for secrets).
func (f *Flags) LeakScan(p *Policy) *LeakScan {
	if f.SkipLeakScan || p == nil || !p.Enabled() {
		return nil
	}
	p.mu.Lock()
	if p.untouched == nil {
		p.untouched = map[string]bool{}
	}
	p.mu.Unlock()
	return &LeakScan{p: p}
}

// File scans one file as written. It is safe for concurrent use.
func (s *LeakScan) File(name string, data []byte) {
	if s.p.takeUntouched(name) {
		return
	}
	h := s.p.ScanFile(name, data)
	if len(h) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits = append(s.hits, h...)
}

// Check judges the finished bundle at path from what File saw: when anything was found
// the bundle is removed and a *LeakError says where. A nil LeakScan finds nothing.
func (s *LeakScan) Check(path string) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	hits := slices.Clone(s.hits)
	s.mu.Unlock()
	sortHits(hits)
	return removeLeaking(path, hits)
}
