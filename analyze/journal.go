package analyze

import (
	"strings"
	"time"
	"unsafe"

	"podflow.dev/podflow/logline"
)

// JournalEntry is one line of a kubelet or container runtime journal (see logline.Entry:
// the klog header, the message and the structured key="value" pairs), with the bundle
// file and line it was read from.
type JournalEntry struct {
	logline.Entry
	file    *sourceFile
	line    int32
	endLine int32
}

// sourceFile is a node file entries were read from; entries share it to stay small.
type sourceFile struct {
	// at is the location of the whole file.
	at   Location
	path string
	node string
}

// Node is the node whose journal holds the entry.
func (e *JournalEntry) Node() string {
	if e.file == nil {
		return ""
	}
	return e.file.node
}

// Loc is where the entry is: journal path and line (range, for multi-line entries).
func (e *JournalEntry) Loc() Location {
	var at Location
	if e.file != nil {
		at = e.file.at
	}
	return at.Lines(int(e.line), int(e.endLine))
}

// Evidence cites the entry with its message and error.
func (e *JournalEntry) Evidence() Evidence {
	text := entryText(&e.Entry)
	return e.Loc().Evidence(text, e.Time)
}

// EvidenceAround cites the entry with an excerpt centred on needle.
func (e *JournalEntry) EvidenceAround(needle string) Evidence {
	ev := e.Evidence()
	text := entryText(&e.Entry)
	ev.Excerpt = ExcerptAround(text, needle)
	return ev
}

// Field is one key/value pair of a structured log line.
type Field = logline.Field

// LineKind says what ParseJournalLine found on a line.
type LineKind = logline.Kind

// Kinds of journal lines.
const (
	// LineEntry is a log entry (possibly with a problem, e.g. a truncated message).
	LineEntry = logline.KindEntry
	// LineContinuation continues the previous entry's multi-line value.
	LineContinuation = logline.KindContinuation
	// LineMarker is a journalctl marker such as "-- Boot 3f2a… --" or "-- No entries --".
	LineMarker = logline.KindMarker
	// LineGarbage is a line podflow cannot read.
	LineGarbage = logline.KindGarbage
)

// ParseJournalLine parses one line of a bundle's journal with logline.ParseJournal:
// journalctl short-iso, journalctl short and bare klog.
func ParseJournalLine(line string, ref time.Time) (JournalEntry, LineKind, error) {
	e, kind, problem := logline.ParseJournal(line, ref)
	return JournalEntry{Entry: e}, kind, problem
}

// ListValue splits a list value such as ["ns/a" "ns/b"] or [ns/a ns/b] into its items.
func ListValue(v string) []string { return logline.ListValue(v) }

func scanFields(s string, fn func(key, raw string) bool) { logline.ScanFields(s, fn) }

func fieldValue(raw string) string { return logline.FieldValue(raw) }

func isDigit(b byte) bool { return logline.IsDigit(b) }

// journalText keeps what journal entries say once their file's bytes are let go of: the
// text an entry's strings point into is copied into large shared blocks, without the
// journal prefix (time, host, program, klog header) that the entry holds parsed, and the
// few distinct programs, hosts and klog sources are shared. On generated bundles it
// keeps about two thirds of the journal's bytes, and the file's bytes go. What an entry
// says after its prefix is shared too when an earlier entry said the same (spans): a
// kubelet repeats a pod's update, probe failure or volume mount word for word, and a
// runtime its shim's lines.
type journalText struct {
	block    []byte
	common   map[string]string
	messages map[string]string
	spans    map[string]string
}

const (
	journalTextBlock = 1 << 20
	// journalTextCommon caps the shared strings: a journal of unique sources (hostile or
	// odd) copies them instead of growing the map without end.
	journalTextCommon = 1 << 14
	// journalTextSpans caps the entries' texts kept for sharing. On a generated bundle
	// of 5k pods 37k entries said 7.6 MB in 7k distinct texts of 1.8 MB.
	journalTextSpans = 1 << 16
)

// keep rewrites e's strings (parsed from line) to point into the blocks instead of line.
// An empty string cut from line still points into it, and so would hold the whole
// file's buffer: those become the empty string literal.
func (t *journalText) keep(e *logline.Entry, line string) {
	for _, s := range []*string{&e.Program, &e.Host, &e.Source, &e.Message, &e.FieldText} {
		if *s == "" {
			*s = ""
		}
	}
	e.Program, e.Host, e.Source = t.shared(e.Program, line), t.shared(e.Host, line), t.shared(e.Source, line)
	if e.FieldText != "" {
		// A structured line's message is a constant of the code that logged it
		// ("Pod update broadcasted"); what varies is in its fields.
		e.Message = t.sharedMessage(e.Message, line)
	}
	lo, hi, ok := span(line, e.Message)
	if l2, h2, ok2 := span(line, e.FieldText); ok2 {
		if !ok || l2 < lo {
			lo = l2
		}
		if !ok || h2 > hi {
			hi = h2
		}
		ok = true
	}
	if !ok {
		return
	}
	kept := t.span(line[lo:hi])
	e.Message = rebase(e.Message, line, lo, kept)
	e.FieldText = rebase(e.FieldText, line, lo, kept)
}

// shared returns s from the shared strings when it points into line, adding it when
// there is room; s is returned as it is when it does not point into line.
func (t *journalText) shared(s, line string) string {
	if _, _, in := span(line, s); !in {
		return s
	}
	return t.intern(&t.common, s, journalTextCommon)
}

// intern is m's copy of s, or s copied into the blocks and kept in m while m holds
// fewer than limit strings.
func (t *journalText) intern(m *map[string]string, s string, limit int) string {
	if c, ok := (*m)[s]; ok {
		return c
	}
	c := t.copy(s)
	if *m == nil {
		*m = map[string]string{}
	}
	if len(*m) < limit {
		(*m)[c] = c
	}
	return c
}

// sharedMessage is shared for messages, which have a map of their own so that varied
// messages do not crowd out the few programs, hosts and sources.
func (t *journalText) sharedMessage(s, line string) string {
	if _, _, in := span(line, s); !in {
		return s
	}
	if c, ok := t.messages[s]; ok {
		return c
	}
	if len(t.messages) >= journalTextCommon {
		return s
	}
	c := t.copy(s)
	if t.messages == nil {
		t.messages = map[string]string{}
	}
	t.messages[c] = c
	return c
}

// span is s, the text of an entry after its prefix, copied into the blocks or, when an
// earlier entry said the same, that entry's copy.
func (t *journalText) span(s string) string {
	return t.intern(&t.spans, s, journalTextSpans)
}

// copy copies s into the current block, starting a new one when it is full. Blocks are
// only ever appended to: the strings handed out stay as they are.
func (t *journalText) copy(s string) string {
	if s == "" {
		return ""
	}
	if cap(t.block)-len(t.block) < len(s) {
		t.block = make([]byte, 0, max(journalTextBlock, len(s)))
	}
	at := len(t.block)
	t.block = append(t.block, s...)
	return unsafe.String(&t.block[at], len(s))
}

// span is where s lies in line, when it is a non-empty part of it.
func span(line, s string) (lo, hi int, ok bool) {
	if s == "" || line == "" {
		return 0, 0, false
	}
	base, p := uintptr(unsafe.Pointer(unsafe.StringData(line))), uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p < base || p+uintptr(len(s)) > base+uintptr(len(line)) {
		return 0, 0, false
	}
	lo = int(p - base)
	return lo, lo + len(s), true
}

// rebase moves s, a part of line, to the same place in kept, the copy of line from lo.
func rebase(s, line string, lo int, kept string) string {
	l, h, ok := span(line, s)
	if !ok {
		return s
	}
	return kept[l-lo : h-lo]
}

// entryText is what a structured log line says: its message and, after ": ", the error
// it carries. The error is the err field the kubelet's ErrorS writes; without one, the
// first other field whose value reads as an error of several words or an error chain ("listen tcp :8080:
// bind: address already in use" under exitCode=, reason=, error=), since components log
// their failures under keys of their own choosing and a line read without that value
// says only "http server stopped".
func entryText(e *logline.Entry) string {
	if err, ok := e.Field("err"); ok {
		return e.Message + ": " + err
	}
	var extra string
	logline.ScanFields(e.FieldText, func(k, raw string) bool {
		v := logline.FieldValue(raw)
		if k == "msg" || !strings.Contains(v, " ") || !(looksLikeError(v) || strings.Contains(v, ": ")) || strings.Contains(e.Message, v) {
			return true
		}
		extra = v
		return false
	})
	if extra == "" {
		return e.Message
	}
	if e.Message == "" {
		return extra
	}
	return e.Message + ": " + extra
}

// journalBlockBits sets the size of journalList's blocks: 8192 entries, about 1 MB.
const journalBlockBits = 13

// journalBlockLen is how many entries a journalList block holds.
const journalBlockLen = 1 << journalBlockBits

// journalList is the kubelet journals' entries in file order, in blocks of
// journalBlockLen entries (the last one filling), and an entry is at the same place
// for as long as the list lives: the indexes keep entries by their place. The load
// adds each file's entries as it is parsed; in one slice it grew by doubling, or when
// healthy pods' lines are left out (and so the count is not known from the lines)
// the files' entries were kept aside and copied into one slice of their own size at
// the end: at 80k pods that was two copies of 360k entries (about 50 MB each) at
// once, at the load's end.
type journalList struct {
	blocks [][]JournalEntry
	n      int
}

// len is how many entries the list holds.
func (j *journalList) len() int { return j.n }

// at is the entry at place i.
func (j *journalList) at(i int) *JournalEntry {
	return &j.blocks[i>>journalBlockBits][i&(journalBlockLen-1)]
}

// add appends entries, copied: the last block grows by doubling up to its full size,
// so a small journal takes room of about its own size.
func (j *journalList) add(entries []JournalEntry) {
	for len(entries) > 0 {
		if len(j.blocks) == 0 || len(j.blocks[len(j.blocks)-1]) == journalBlockLen {
			j.blocks = append(j.blocks, nil)
		}
		last := &j.blocks[len(j.blocks)-1]
		k := min(len(entries), journalBlockLen-len(*last))
		if need := len(*last) + k; need > cap(*last) {
			grown := make([]JournalEntry, len(*last), min(journalBlockLen, max(need, 2*cap(*last))))
			copy(grown, *last)
			*last = grown
		}
		*last = append(*last, entries[:k]...)
		entries = entries[k:]
		j.n += k
	}
}
