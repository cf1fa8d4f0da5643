package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted"
)

// ReportVersion versions import-report.json; readers accept any 1.x.
const ReportVersion = "1.0"

// File statuses in an import report.
const (
	// StatusUsed means the file was turned into bundle evidence.
	StatusUsed = "used"
	// StatusIgnored means the file was recognised but carries nothing podflow reads.
	StatusIgnored = "ignored"
	// StatusUnreadable means the file looked like evidence but could not be parsed.
	StatusUnreadable = "unreadable"
	// StatusFailed means the file records that the other tool failed to collect a source.
	StatusFailed = "source-failed"
)

// Report is import-report.json: every input file with what it was detected as, and the
// origin of every produced file so findings can cite the original.
type Report struct {
	Version string `json:"version"`
	// Format is the detected or forced input format.
	Format Format `json:"format"`
	// Input is the path the import was read from, as given.
	Input string `json:"input"`
	// Files lists every input file, sorted by path.
	Files []FileReport `json:"files"`
	// Origins maps each produced bundle path to where its content came from.
	Origins map[string]Origin `json:"origins"`
	// NotCarried names evidence the input format cannot hold, so an absent source is
	// read as a property of the format rather than of the cluster.
	NotCarried []string `json:"notCarried,omitempty"`
	// CollectedAt is when the input was gathered, when the format records it (a
	// must-gather's timestamp file); analysis measures ages against it.
	CollectedAt *time.Time `json:"collectedAt,omitempty"`
}

// FileReport is what one input file was taken for.
type FileReport struct {
	Path     string   `json:"path"`
	Detected string   `json:"detected"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	Produced []string `json:"produced,omitempty"`
	// Blocks lists, for loose evidence, each block of lines and what it was read as.
	Blocks []BlockReport `json:"blocks,omitempty"`
}

// Origin says where a produced bundle file came from.
type Origin struct {
	// Path is the original file, relative to the input.
	Path string `json:"path"`
	// LineOffset is added to a line of the produced file to get the original line.
	LineOffset int `json:"lineOffset,omitempty"`
	// ItemLines holds, for a produced List, the original line where items[i] starts
	// (0 when unknown).
	ItemLines []int `json:"itemLines,omitempty"`
	// ItemPaths holds, for a List gathered from several files, the original file of
	// items[i] ("" means Path).
	ItemPaths []string `json:"itemPaths,omitempty"`
	// SameShape is true when a JSON pointer into the produced file also points at the
	// same value in the original, so citations may keep it.
	SameShape bool `json:"sameShape,omitempty"`
}

// itemPath is the original file of items[i].
func (o Origin) itemPath(i int) string {
	if i >= 0 && i < len(o.ItemPaths) && o.ItemPaths[i] != "" {
		return o.ItemPaths[i]
	}
	return o.Path
}

// itemLine is the original line of items[i], or 0.
func (o Origin) itemLine(i int) int {
	if i < 0 || i >= len(o.ItemLines) {
		return 0
	}
	return o.ItemLines[i]
}

func newReport(format Format, input string) *Report {
	return &Report{Version: ReportVersion, Format: format, Input: input, Origins: map[string]Origin{}}
}

func (r *Report) add(f FileReport) { r.Files = append(r.Files, f) }

func (r *Report) used(path, detected string, produced ...string) {
	r.add(FileReport{Path: path, Detected: detected, Status: StatusUsed, Produced: produced})
}

func (r *Report) ignored(path, detected, reason string) {
	r.add(FileReport{Path: path, Detected: detected, Status: StatusIgnored, Reason: reason})
}

func (r *Report) unreadable(path, detected string, err error) {
	r.add(FileReport{Path: path, Detected: detected, Status: StatusUnreadable, Reason: err.Error()})
}

// whyNothing says, per file looked at (the first few), what it looked like and why
// nothing in it was usable, for the error of an import that read nothing.
func (r *Report) whyNothing() string {
	const most = 5
	var b strings.Builder
	for i, f := range r.Files {
		if i == most {
			fmt.Fprintf(&b, "\n  ... and %d more (podflow convert writes the import report)", len(r.Files)-most)
			break
		}
		what := f.Detected
		if what == "" {
			what = "unrecognized"
		}
		fmt.Fprintf(&b, "\n  %s: %s, %s", untrusted.Text(f.Path), what, f.Status)
		if f.Reason != "" {
			fmt.Fprintf(&b, ": %s", untrusted.Text(f.Reason))
		}
	}
	return b.String()
}

func (r *Report) sort() {
	sort.SliceStable(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
}

// Count returns how many input files have status.
func (r *Report) Count(status string) int {
	n := 0
	for _, f := range r.Files {
		if f.Status == status {
			n++
		}
	}
	return n
}

// File returns the report entry of an input file, or nil.
func (r *Report) File(path string) *FileReport {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}

// ReadReport returns the import report a bundle carries, or nil for a bundle podflow
// collected itself.
func ReadReport(b *bundle.Bundle) (*Report, error) {
	data, err := b.ReadFile(bundle.ImportReportPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode %s in %q: %w", bundle.ImportReportPath, b.Source, err)
	}
	if r.Origins == nil {
		r.Origins = map[string]Origin{}
	}
	return &r, nil
}
