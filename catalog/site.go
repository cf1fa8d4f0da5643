package catalog

import "strings"

// Site is the identity of the call site that prints the entry, across releases: the
// component, the package and function that print it, the kind of call and its event
// reason or status code. Two entries of one site are the same message in other words
// (another release's template of the same function), or another message of the same
// function; a reader that ties knowledge to a site tells them apart by their words.
//
// An entry whose function is not known (a package-level error value, the errno table, a
// reason constant) has no site beyond itself: its Site is its ID.
func (e *Entry) Site() string {
	if e.Function == "" || e.Kind == "reason" {
		return "entry|" + e.ID
	}
	return e.Component + "|" + e.Package + "|" + e.Function + "|" + e.Kind + "|" + e.Reason
}

// Words returns the whole words of the entry's literal text, lower case, at least three
// characters long, in template order. The slice is the entry's own: do not modify.
func (e *Entry) Words() []string { return e.prep().words }

// Fragments returns the literal pieces every message of the entry holds, lower case,
// longest first. The slice is the entry's own: do not modify.
func (e *Entry) Fragments() []string { return e.prep().frags }

// LastCapture is the name of the capture of the verb that ends the template ("err" for
// a wrapped error), or "" when the template ends with literal text.
func (e *Entry) LastCapture() string { return e.prep().last }

// lastCapture is LastCapture of a template's segments.
func lastCapture(segs []segment) string {
	if n := len(segs); n > 0 && segs[n-1].verb != 0 {
		return segs[n-1].name
	}
	if n := len(segs); n > 1 && segs[n-2].verb != 0 && strings.TrimSpace(segs[n-1].lit) == "" {
		return segs[n-2].name
	}
	return ""
}
