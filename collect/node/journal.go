package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
)

// logSpec says where one component logs: its systemd unit (also tried as a syslog
// identifier, for setups that run it outside a unit of that name) and an optional file.
type logSpec struct {
	source string
	unit   string
	file   string
	dest   string
}

// journalResult is the outcome of one attempt at a log: a journalctl or dmesg run, or a
// file read.
type journalResult int

const (
	journalFound   journalResult = iota
	journalEmpty                 // worked, found nothing
	journalFailed                // could not read
	journalMissing               // the command is not installed
)

// collectLog gets a component's log: the journal by unit, then by identifier, then a
// file, keeping the first that has entries. Nothing found anywhere is "skipped" when every
// attempt worked and simply had nothing, "failed" when one could not run.
func (c *collector) collectLog(ctx context.Context, spec logSpec) bundle.Source {
	src := bundle.Source{Name: spec.source}
	var reasons []string
	failed := false
	attempts := [][]string{{"-u", spec.unit}, {"-t", spec.unit}}
	for i, sel := range attempts {
		data, res, reason := c.journal(ctx, spec.source, sel, i > 0)
		if res == journalFound {
			return c.finishLog(src, spec, data, reason)
		}
		reasons = append(reasons, reason)
		failed = failed || res != journalEmpty
		if res == journalMissing {
			break
		}
	}
	if spec.file != "" {
		data, res, reason := c.readLogFile(spec.source, spec.file)
		if res == journalFound {
			return c.finishLog(src, spec, data, "")
		}
		reasons = append(reasons, reason)
		failed = failed || res != journalEmpty
	} else {
		reasons = append(reasons, "no log file configured")
	}
	src.Error = strings.Join(reasons, "; ")
	src.Status = bundle.StatusSkipped
	if failed {
		src.Status = bundle.StatusFailed
	}
	return src
}

// finishLog writes the log; partial is a reason the log may be incomplete.
func (c *collector) finishLog(src bundle.Source, spec logSpec, data []byte, partial string) bundle.Source {
	p, err := c.write(spec.dest, data)
	if err != nil {
		src.Status, src.Error = bundle.StatusFailed, err.Error()
		return src
	}
	src.Files = []string{p}
	src.Status = bundle.StatusOK
	if partial != "" {
		src.Status, src.Error = bundle.StatusPartial, partial
	}
	return src
}

// journal runs journalctl for one selector. On journalFound, reason is non-empty when the
// output may be incomplete; otherwise it says why nothing was found.
func (c *collector) journal(ctx context.Context, source string, selector []string, fallback bool) ([]byte, journalResult, string) {
	args := append(append([]string{}, selector...), "-o", "short-iso", "--no-pager",
		"--since", "@"+strconv.FormatInt(c.since.Unix(), 10))
	if c.opts.HostRoot != "/" {
		// Under a debug Pod the journal lives in the host's /var/log/journal or /run/log/journal.
		args = append(args, "--root", c.opts.HostRoot)
	}
	what := "journal " + strings.Join(selector, " ")
	st := Step{Source: source, Command: append([]string{"journalctl"}, args...)}
	if fallback {
		st.Note = "fallback: the previous attempt found no entries"
	}
	t0 := time.Now()
	out, err := c.opts.Runner.Run(ctx, "journalctl", args...)
	st.DurationMS = time.Since(t0).Milliseconds()
	st.Stderr = excerpt(out.Stderr)
	if err != nil {
		st.Error = err.Error()
		c.step(st)
		if errors.Is(err, exec.ErrNotFound) {
			return nil, journalMissing, "journalctl is not installed"
		}
		return nil, journalFailed, fmt.Sprintf("%s: %v", what, err)
	}
	st.ExitCode = exitCode(out.ExitCode)
	data, dropped := boundOutput(out, c.opts.MaxLogBytes)
	st.TruncatedBytes = dropped
	if !hasJournalEntries(data) {
		c.step(st)
		if out.ExitCode != 0 && !bytes.Contains(data, []byte("-- No entries --")) {
			return nil, journalFailed, fmt.Sprintf("%s: exit code %d: %s", what, out.ExitCode, orNone(st.Stderr))
		}
		reason := fmt.Sprintf("%s: no entries since %s", what, c.since.UTC().Format(time.RFC3339))
		if st.Stderr != "" {
			// e.g. "No journal files were found." under a wrong --host-root.
			reason += " (" + st.Stderr + ")"
		}
		return nil, journalEmpty, reason
	}
	st.Used, st.Bytes = true, int64(len(data))
	c.step(st)
	if out.ExitCode != 0 {
		return data, journalFound, fmt.Sprintf("%s: exit code %d: %s", what, out.ExitCode, orNone(st.Stderr))
	}
	return data, journalFound, ""
}

// boundOutput applies the byte cap to a command's stdout whatever the runner did, and
// returns the kept bytes and how many were dropped in all.
func boundOutput(out Output, max int64) ([]byte, int64) {
	data, dropped := out.Stdout, out.Dropped
	if out.Dropped > 0 {
		// The runner cut mid-line; the first line is a fragment.
		t := trimPartialLine(data, false)
		dropped += int64(len(data) - len(t))
		data = t
	}
	data, more := keepTail(data, max)
	return data, dropped + more
}

// hasJournalEntries tells real entries from journalctl's own markers ("-- No entries --",
// "-- Journal begins at ... --", "-- Boot ... --"), which it prints even when nothing matched.
func hasJournalEntries(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || (bytes.HasPrefix(line, []byte("-- ")) && bytes.HasSuffix(line, []byte(" --"))) {
			continue
		}
		return true
	}
	return false
}

// readLogFile reads the tail of a log file under the host root. A missing or empty file
// is journalEmpty: nothing to find, rather than a failure.
func (c *collector) readLogFile(source, file string) ([]byte, journalResult, string) {
	p := c.hostPath(file)
	st := Step{Source: source, Read: p, Note: "fallback: the journal has no entries"}
	t0 := time.Now()
	data, dropped, err := readTail(p, c.opts.MaxLogBytes)
	st.DurationMS = time.Since(t0).Milliseconds()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.step(st)
		return nil, journalEmpty, fmt.Sprintf("no log file at %s", p)
	case err != nil:
		st.Error = err.Error()
		c.step(st)
		return nil, journalFailed, err.Error()
	case len(bytes.TrimSpace(data)) == 0:
		c.step(st)
		return nil, journalEmpty, fmt.Sprintf("log file %s is empty", p)
	}
	st.Used, st.Bytes, st.TruncatedBytes = true, int64(len(data)), dropped
	c.step(st)
	return data, journalFound, ""
}

// readTail reads at most max bytes from the end of a regular file, from a line boundary.
func readTail(p string, max int64) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("stat %s: %w", p, err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("read %s: not a regular file (%s)", p, info.Mode().Type())
	}
	var off int64
	if info.Size() > max {
		// One byte before the cut tells whether the tail starts on a line boundary.
		off = info.Size() - max - 1
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("seek %s: %w", p, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", p, err)
	}
	if off == 0 {
		kept, dropped := keepTail(data, max)
		return kept, dropped, nil
	}
	kept := trimPartialLine(data[1:], data[0] == '\n')
	return kept, off + int64(len(data)-len(kept)), nil
}

func orNone(s string) string {
	if s == "" {
		return "no error output"
	}
	return s
}
