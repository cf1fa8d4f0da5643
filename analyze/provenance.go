package analyze

import (
	"fmt"
	"slices"
	"strings"

	"podflow.dev/podflow/bundle"
)

// readImport reads the import report a bundle made from another tool's output carries:
// the origin of each produced file, which every location read from that file is
// stamped with, and what the import could not carry or read, which become warnings
// once the bundles are loaded. A report that does not decode is a warning too: the
// bundle then cites its own files.
func (l *loader) readImport(lb *loadedBundle) {
	rep, err := bundle.ReadImportReport(lb.b)
	if err != nil {
		l.warn(lb, bundle.ImportReportPath, 0, "", "citations name this bundle's files, not the imported originals: %v", err)
		return
	}
	if rep == nil {
		return
	}
	lb.imported = rep
	if len(rep.Origins) > 0 {
		origins := make(map[string]*bundle.Origin, len(rep.Origins))
		for path, o := range rep.Origins {
			origins[path] = &o
		}
		l.g.origins[lb.label] = origins
	}
}

// importWarnings adds, after everything the bundles hold, what each import says of
// itself: the evidence its format cannot hold, then every input file it could not read,
// so that no input file is dropped silently.
func (l *loader) importWarnings() {
	bs := slices.Clone(l.bundles)
	slices.SortStableFunc(bs, func(a, b *loadedBundle) int { return strings.Compare(a.label, b.label) })
	for _, lb := range bs {
		rep := lb.imported
		if rep == nil {
			continue
		}
		if len(rep.NotCarried) > 0 {
			l.g.warnings = append(l.g.warnings, Warning{Bundle: lb.label, Path: rep.Input,
				Message: fmt.Sprintf("imported as %s; evidence this input does not hold: %s", rep.Format, strings.Join(rep.NotCarried, "; "))})
		}
		for _, f := range rep.Files {
			if f.Status == bundle.ImportUnreadable {
				l.g.warnings = append(l.g.warnings, Warning{Bundle: lb.label, Path: f.Path,
					Message: "not imported, " + f.Detected + " unreadable: " + f.Reason})
			}
		}
	}
}

// fileLoc is the location of a whole file of the bundle labelled bundleLabel, stamped
// with the file's origin when an import produced it.
func (g *Graph) fileLoc(bundleLabel, path string) Location {
	if o, ok := g.origins[bundleLabel][path]; ok {
		return stamped(bundleLabel, path, o)
	}
	return Location{Bundle: bundleLabel, Path: path}
}

// loc is the location of the whole of file path of lb.
func (l *loader) loc(lb *loadedBundle, path string) Location { return l.g.fileLoc(lb.label, path) }

// ListLocation is the location of the list of kind k in namespace (ignored for
// cluster-scoped kinds), for a finding that cites what a list does not hold.
func (v *View) ListLocation(k Kind, namespace string) Location {
	return v.g.fileLoc("", strings.Replace(k.Where(), "<namespace>", namespace, 1)).withPointer("/items")
}
