package analyze

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Location says where in a bundle a piece of evidence is: a path plus a JSON pointer
// (for objects in a List) or a line range (for logs and journals).
type Location struct {
	// Bundle is the bundle the path belongs to; set only when several bundles were loaded.
	Bundle string `json:"bundle,omitempty"`
	Path   string `json:"path"`
	// Pointer is an RFC 6901 JSON pointer into the file, e.g. /items/3/status.
	Pointer string `json:"pointer,omitempty"`
	// Line and EndLine are 1-based; EndLine is set only for ranges of several lines.
	Line    int `json:"line,omitempty"`
	EndLine int `json:"endLine,omitempty"`
}

// At returns the location of a field below l: l.At("status", "containerStatuses", 0).
func (l Location) At(parts ...any) Location {
	var b strings.Builder
	b.WriteString(l.Pointer)
	for _, p := range parts {
		b.WriteByte('/')
		switch v := p.(type) {
		case string:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1"))
		case int:
			b.WriteString(strconv.Itoa(v))
		default:
			fmt.Fprint(&b, v)
		}
	}
	l.Pointer = b.String()
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
	end := i + len(needle) + excerptMax/5
	if end > len(s) {
		end = len(s)
	}
	start := end - excerptMax
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
