package importer

import (
	"fmt"
	"sort"
	"strings"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted"
)

// ReportVersion versions import-report.json; readers accept any 1.x.
const ReportVersion = bundle.ImportReportVersion

// File statuses in an import report.
const (
	// StatusUsed means the file was turned into bundle evidence.
	StatusUsed = bundle.ImportUsed
	// StatusIgnored means the file was recognised but carries nothing podflow reads.
	StatusIgnored = bundle.ImportIgnored
	// StatusUnreadable means the file looked like evidence but could not be parsed.
	StatusUnreadable = bundle.ImportUnreadable
	// StatusFailed means the file records that the other tool failed to collect a source.
	StatusFailed = bundle.ImportFailed
)

// Report is the import report an import writes into its bundle as
// import-report.json (the bundle package defines and reads it), with the helpers that
// fill it in.
type Report struct {
	bundle.ImportReport
}

// FileReport is what one input file was taken for.
type FileReport = bundle.ImportedFile

// BlockReport is what one contiguous block of lines of an input file was read as.
type BlockReport = bundle.ImportedBlock

// Origin says where a produced bundle file came from.
type Origin = bundle.Origin

func newReport(format Format, input string) *Report {
	return &Report{bundle.ImportReport{Version: ReportVersion, Format: string(format), Input: input, Origins: map[string]Origin{}}}
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

// ReadReport returns the import report a bundle carries, or nil for a bundle podflow
// collected itself.
func ReadReport(b *bundle.Bundle) (*Report, error) {
	r, err := bundle.ReadImportReport(b)
	if r == nil || err != nil {
		return nil, err
	}
	return &Report{*r}, nil
}
