package redact

import (
	"context"
	"runtime"
	"sort"
	"sync"

	"podflow.dev/podflow/bundle"
)

// Hit is one secret that a scan found: where, and which rule; never the value.
type Hit struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Rule string `json:"rule"`
}

type hitSink struct {
	rules []string
	offs  []int
}

func (h *hitSink) hit(rule string, off int) {
	h.rules = append(h.rules, rule)
	h.offs = append(h.offs, off)
}

// Scan looks for secrets in every file of a bundle with the built-in detectors, the
// same ones redaction uses; a redacted bundle scans clean.
func Scan(b *bundle.Bundle) []Hit {
	return build(Options{}, []byte("scan")).Scan(b)
}

// ScanContext is Scan that stops, with ctx's error, once ctx is done.
func ScanContext(ctx context.Context, b *bundle.Bundle) ([]Hit, error) {
	return build(Options{}, []byte("scan")).ScanContext(ctx, b)
}

// Scan looks for secrets in every file of a bundle with this policy's rules. Hits are
// sorted by file, line and rule.
func (p *Policy) Scan(b *bundle.Bundle) []Hit {
	hits, _ := p.ScanContext(context.Background(), b) // never cancelled
	return hits
}

// ScanContext is Scan that stops, with ctx's error, once ctx is done.
func (p *Policy) ScanContext(ctx context.Context, b *bundle.Bundle) ([]Hit, error) {
	names := b.Names()
	results := make([][]Hit, len(names))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				data, err := b.ReadFile(names[i])
				if err != nil {
					continue // Names lists only files the bundle holds
				}
				results[i] = p.ScanFile(names[i], data)
			}
		}()
	}
	for i := range names {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var hits []Hit
	for _, r := range results {
		hits = append(hits, r...)
	}
	return hits, nil
}

// ScanFile looks for secrets in one file.
func (p *Policy) ScanFile(name string, data []byte) []Hit {
	var hits []Hit
	// The rounds mirror redactFile, so a file scans clean exactly when redaction would
	// leave it unchanged.
	for round := 1; ; round++ {
		s := &hitSink{}
		edits, retry := p.fileEdits(name, data, s)
		hits = append(hits, hitLines(name, data, s)...)
		if len(edits) == 0 || !retry || round == maxRounds {
			break
		}
		data = splice(data, edits)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Line != hits[j].Line {
			return hits[i].Line < hits[j].Line
		}
		return hits[i].Rule < hits[j].Rule
	})
	return hits
}

func hitLines(name string, data []byte, s *hitSink) []Hit {
	if len(s.rules) == 0 {
		return nil
	}
	var newlines []int
	for i, c := range data {
		if c == '\n' {
			newlines = append(newlines, i)
		}
	}
	hits := make([]Hit, len(s.rules))
	for i := range s.rules {
		hits[i] = Hit{File: name, Line: 1 + sort.SearchInts(newlines, s.offs[i]), Rule: s.rules[i]}
	}
	return hits
}
