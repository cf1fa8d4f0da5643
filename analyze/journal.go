package analyze

import (
	"time"

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
	text := e.Message
	if err, ok := e.Field("err"); ok {
		text += ": " + err
	}
	return e.Loc().Evidence(text, e.Time)
}

// EvidenceAround cites the entry with an excerpt centred on needle.
func (e *JournalEntry) EvidenceAround(needle string) Evidence {
	ev := e.Evidence()
	text := e.Message
	if err, ok := e.Field("err"); ok {
		text += ": " + err
	}
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
