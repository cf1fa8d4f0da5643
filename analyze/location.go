package analyze

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
)

// Location says where a piece of evidence is: a path plus a JSON pointer (for objects
// in a List) or a line range (for logs and journals). In a bundle podflow collected
// that is the bundle's own file; in a bundle imported from another tool's output, Load
// stamps each location with the original file and line the import read it from (the
// bundle's import report), so every citation leads to the user's own file.
type Location struct {
	// Bundle is the bundle the path belongs to; set only when several bundles were loaded.
	Bundle string `json:"bundle,omitempty"`
	Path   string `json:"path"`
	// Pointer is an RFC 6901 JSON pointer into the file, e.g. /items/3/status.
	Pointer string `json:"pointer,omitempty"`
	// Line and EndLine are 1-based; EndLine is set only for ranges of several lines.
	Line    int `json:"line,omitempty"`
	EndLine int `json:"endLine,omitempty"`
	// in is, for a file an import produced, the place in it that the fields above cite
	// in the original; nil for a bundle's own file.
	in *produced
}

// produced is a place in a file an import produced: the file, where its content came
// from, and the pointer and lines into it.
type produced struct {
	path    string
	origin  *bundle.Origin
	pointer string
	line    int
	endLine int
}

// stamped is the location of the whole of file path of an imported bundle.
func stamped(bundleLabel, path string, origin *bundle.Origin) Location {
	return Location{Bundle: bundleLabel, Path: path}.at(produced{path: path, origin: origin})
}

// at returns l at place p of its produced file, the exported fields citing the original.
func (l Location) at(p produced) Location {
	s := p.origin.Cite(p.pointer, p.line, p.endLine)
	l.Path, l.Pointer, l.Line, l.EndLine = s.Path, s.Pointer, s.Line, s.EndLine
	l.in = &p
	return l
}

// inBundle is l as the place in the bundle's own file: what analysis groups and
// de-duplicates evidence by, so that two places in an import's files stay apart even
// where they cite the same original line.
func (l Location) inBundle() Location {
	if l.in == nil {
		return l
	}
	return Location{Bundle: l.Bundle, Path: l.in.path, Pointer: l.in.pointer, Line: l.in.line, EndLine: l.in.endLine}
}

// placeKey names the place of the evidence a reader is shown: the file and line (a
// pasted line), or the file and pointer when there is no line. Two citations of the
// same pasted line, one through the object an import made of it, share it.
func (l Location) placeKey() string {
	if l.Line > 0 {
		return l.Bundle + "\x00" + l.Path + "\x00" + strconv.Itoa(l.Line)
	}
	return l.Bundle + "\x00" + l.Path + "\x00" + l.Pointer
}

// At returns the location of a field below l: l.At("status", "containerStatuses", 0).
func (l Location) At(parts ...any) Location {
	if l.in != nil {
		p := *l.in
		p.pointer = appendPointer(p.pointer, parts)
		return l.at(p)
	}
	l.Pointer = appendPointer(l.Pointer, parts)
	return l
}

func appendPointer(pointer string, parts []any) string {
	var b strings.Builder
	// One allocation for the usual parts (names and indexes) rather than the builder's
	// growing: the rules cite a place in every container's status.
	n := len(pointer)
	for _, p := range parts {
		n++
		if v, ok := p.(string); ok {
			n += len(v)
		} else {
			n += 4
		}
	}
	b.Grow(n)
	b.WriteString(pointer)
	for _, p := range parts {
		b.WriteByte('/')
		switch v := p.(type) {
		case string:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1"))
		case int:
			b.WriteString(strconv.Itoa(v))
		default:
			// Not Fprint(&b, …): b would move to the heap for every pointer.
			b.WriteString(fmt.Sprint(v))
		}
	}
	return b.String()
}

// Lines returns the location of lines first to last (1-based) of l's file; last 0, or
// not past first, means the single line first.
func (l Location) Lines(first, last int) Location {
	if last <= first {
		last = 0
	}
	if l.in != nil {
		p := *l.in
		p.line, p.endLine = first, last
		return l.at(p)
	}
	l.Line, l.EndLine = first, last
	return l
}

// lineBelow returns the single line n lines below l's first line (n 0: that line).
func (l Location) lineBelow(n int) Location {
	return l.Lines(l.inBundle().Line+n, 0)
}

// itemPointers are the pointers to the first items of a list ("/items/0", ...), made
// once: every object a load reads is cited by one, and most lists are short.
var itemPointers = func() []string {
	out := make([]string, 1<<12)
	for i := range out {
		out[i] = "/items/" + strconv.Itoa(i)
	}
	return out
}()

// itemPointer is the pointer to item i of the list at pointer base ("/items", or ""
// for a bare array).
func itemPointer(base string, i int) string {
	if base == "/items" && i < len(itemPointers) {
		return itemPointers[i]
	}
	return base + "/" + strconv.Itoa(i)
}

// withPointer returns l with pointer p into its file.
func (l Location) withPointer(pointer string) Location {
	if l.in != nil {
		p := *l.in
		p.pointer = pointer
		return l.at(p)
	}
	l.Pointer = pointer
	return l
}

// Locator is the part after the path: the JSON pointer, or the line or line range.
// Evidence imported from another tool's file can know both the line an item starts on
// in the original and the pointer into it: that reads line#pointer.
func (l Location) Locator() string {
	switch {
	case l.Pointer != "" && l.Line > 0:
		return strconv.Itoa(l.Line) + "#" + l.Pointer
	case l.Pointer != "":
		return l.Pointer
	case l.EndLine > l.Line:
		return fmt.Sprintf("%d-%d", l.Line, l.EndLine)
	case l.Line > 0:
		return strconv.Itoa(l.Line)
	}
	return ""
}

// String renders path:locator, prefixed with the bundle when there are several.
func (l Location) String() string {
	s := l.Path
	if loc := l.Locator(); loc != "" {
		s += ":" + loc
	}
	if l.Bundle != "" {
		s = l.Bundle + "!" + s
	}
	return s
}

// Evidence cites l with a short excerpt and, when known, the time it speaks of.
func (l Location) Evidence(excerpt string, at time.Time) Evidence {
	return Evidence{Location: l, Locator: l.Locator(), Excerpt: Excerpt(excerpt), Time: timePtr(at)}
}

// Evidence is one cited fact: where it is, a short excerpt and the time it refers to.
type Evidence struct {
	Location
	// Locator repeats Location.Locator() so readers of the report need not rebuild it.
	Locator string     `json:"locator,omitempty"`
	Excerpt string     `json:"excerpt"`
	Time    *time.Time `json:"time,omitempty"`
}

// excerptMax caps excerpts so a report stays readable; the location leads to the rest.
const excerptMax = 300

// Excerpt trims s to one line of at most a few hundred characters.
func Excerpt(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if len(s) > excerptMax {
		cut := excerptMax
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// ExcerptAround is Excerpt for long texts whose telling part is not at the start (a pull
// error ends with the reason): it keeps the window around needle.
func ExcerptAround(s, needle string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	i := strings.Index(s, needle)
	if len(s) <= excerptMax || i < 0 || needle == "" {
		return Excerpt(s)
	}
	// The window keeps the needle and what follows it (an error ends with its
	// reason): to the end of the text when that is near, else to the end of a word, so
	// the decisive words ("no such host") are never cut.
	end := i + len(needle) + excerptMax/5
	if len(s)-end < excerptMax/5 {
		end = len(s)
	}
	if end > len(s) {
		end = len(s)
	}
	for end < len(s) && end < i+len(needle)+excerptMax/2 && !wordEnd(s, end) {
		end++
	}
	start := end - excerptMax
	if start > i {
		start = i
	}
	if start < 0 {
		start = 0
	}
	for start > 0 && !utf8Start(s[start]) {
		start++
	}
	for end < len(s) && !utf8Start(s[end]) {
		end++
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

// wordEnd reports whether s[i] ends a word: it is followed by a space or the end.
func wordEnd(s string, i int) bool {
	return i+1 >= len(s) || s[i+1] == ' '
}

// EvidenceAround cites l with an excerpt of text centred on needle.
func (l Location) EvidenceAround(text, needle string, at time.Time) Evidence {
	e := l.Evidence("", at)
	e.Excerpt = ExcerptAround(text, needle)
	return e
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// Warning is something in a bundle podflow could not read; the rest still loads.
type Warning struct {
	Bundle  string `json:"bundle,omitempty"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Pointer string `json:"pointer,omitempty"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	l := Location{Bundle: w.Bundle, Path: w.Path, Line: w.Line, Pointer: w.Pointer}
	return l.String() + ": " + w.Message
}
