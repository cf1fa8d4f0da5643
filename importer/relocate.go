package importer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// Relocator rewrites the locations in a report so that evidence from imported bundles
// cites the original file and line rather than the produced bundle path.
type Relocator struct {
	// reports are keyed by the bundle label analyze puts on locations: empty when a
	// single bundle was loaded, its source otherwise.
	reports map[string]*Report
}

// NewRelocator reads the import reports of bundles loaded together, in the order they
// were passed to analyze.Load.
func NewRelocator(bundles []*bundle.Bundle) (*Relocator, error) {
	r := &Relocator{reports: map[string]*Report{}}
	for _, b := range bundles {
		rep, err := ReadReport(b)
		if err != nil {
			return nil, err
		}
		if rep == nil {
			continue
		}
		label := ""
		if len(bundles) > 1 {
			label = b.Source
		}
		r.reports[label] = rep
	}
	return r, nil
}

// Report relocates every location of an analysis report and adds a warning for each
// input file that could not be read, so an import never drops a file silently.
func (r *Relocator) Report(rep *analyze.Report) {
	if r == nil || len(r.reports) == 0 {
		return
	}
	for _, f := range rep.Findings {
		r.evidence(f.Evidence)
	}
	for i := range rep.Pods {
		for j := range rep.Pods[i].Timeline {
			r.evidence(rep.Pods[i].Timeline[j].Evidence)
		}
	}
	r.warnings(rep.Warnings)
	rep.Warnings = append(rep.Warnings, r.importWarnings()...)
}

// Explanation relocates every location of one pod's explanation.
func (r *Relocator) Explanation(x *analyze.Explanation) {
	if r == nil || len(r.reports) == 0 {
		return
	}
	if x.RootCause != nil {
		r.evidence(x.RootCause.Evidence)
	}
	for _, f := range x.Findings {
		if f != x.RootCause {
			r.evidence(f.Evidence)
		}
	}
	for i := range x.Stages {
		r.evidence(x.Stages[i].Evidence)
	}
	r.warnings(x.Warnings)
	x.Warnings = append(x.Warnings, r.importWarnings()...)
}

func (r *Relocator) evidence(es []analyze.Evidence) {
	for i := range es {
		if l, ok := r.Location(es[i].Location); ok {
			es[i].Location = l
			es[i].Locator = l.Locator()
		}
	}
}

func (r *Relocator) warnings(ws []analyze.Warning) {
	for i := range ws {
		w := &ws[i]
		l, ok := r.Location(analyze.Location{Bundle: w.Bundle, Path: w.Path, Line: w.Line, Pointer: w.Pointer})
		if ok {
			w.Path, w.Line, w.Pointer = l.Path, l.Line, l.Pointer
		}
	}
}

func (r *Relocator) importWarnings() []analyze.Warning {
	labels := make([]string, 0, len(r.reports))
	for label := range r.reports {
		labels = append(labels, label)
	}
	sort.Strings(labels)
	var out []analyze.Warning
	for _, label := range labels {
		// What the format cannot hold, so a stage without evidence reads as a property of
		// the input rather than of the cluster.
		if rep := r.reports[label]; len(rep.NotCarried) > 0 {
			out = append(out, analyze.Warning{Bundle: label, Path: rep.Input,
				Message: fmt.Sprintf("imported as %s; evidence this input does not hold: %s", rep.Format, strings.Join(rep.NotCarried, "; "))})
		}
		for _, f := range r.reports[label].Files {
			if f.Status == StatusUnreadable {
				out = append(out, analyze.Warning{Bundle: label, Path: f.Path, Message: "not imported, " + f.Detected + " unreadable: " + f.Reason})
			}
		}
	}
	return out
}

// Location maps a location in an imported bundle to the original file; false when the
// location is not in an imported file.
func (r *Relocator) Location(l analyze.Location) (analyze.Location, bool) {
	if r == nil {
		return l, false
	}
	rep := r.reports[l.Bundle]
	if rep == nil {
		return l, false
	}
	o, ok := rep.Origins[l.Path]
	if !ok {
		return l, false
	}
	l.Path = o.Path
	if l.Line > 0 {
		l.Line += o.LineOffset
		if l.EndLine > 0 {
			l.EndLine += o.LineOffset
		}
	}
	if i, ok := pointerItem(l.Pointer); ok {
		l.Path = o.itemPath(i)
		if line := o.itemLine(i); line > 0 {
			l.Line, l.EndLine = line, 0
		}
	}
	if !o.SameShape {
		l.Pointer = ""
	}
	return l, true
}

// pointerItem returns the item index a List pointer (/items/3/...), crictl ps pointer
// (/containers/3/...) or bare array pointer (/3/...) starts with.
func pointerItem(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/items/")
	if !ok {
		rest, ok = strings.CutPrefix(p, "/containers/")
	}
	if !ok {
		if rest, ok = strings.CutPrefix(p, "/"); !ok {
			return 0, false
		}
	}
	seg, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(seg)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}
