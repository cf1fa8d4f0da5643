package redact

import (
	"fmt"
	"os"
	"strings"

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
	if f.SkipLeakScan || p == nil || !p.Enabled() {
		return nil
	}
	b, err := bundle.Open(path, limits)
	if err != nil {
		return fmt.Errorf("leak scan: %w", err)
	}
	hits := p.Scan(b)
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
