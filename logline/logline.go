// Package logline reads one line of node-agent or runtime log as the tools print it:
// journalctl's short forms (with and without the host name), klog headers and their
// structured key="value" pairs, logrus text and logfmt lines (containerd, CRI-O, dockerd),
// systemctl status header lines and kernel lines from dmesg or journalctl -k. It depends on
// the standard library only, so both the importer and the analyzer use it.
package logline

import (
	"strconv"
	"strings"
	"time"
)

// Format says which printer wrote a line. It is a byte so that it sits beside the
// severity in an Entry (Entry).
type Format uint8

// Line formats, as Parse tells them apart.
const (
	FormatNone    Format = iota
	FormatJournal        // a journalctl prefix (time, host, program[pid]:) before the body
	FormatKlog           // a bare klog header
	FormatLogrus         // logrus text: time="…" level=… msg="…", or LEVL[time] msg
	FormatLogfmt         // key=value pairs with a level= key but no time
	FormatKernel         // dmesg: [seconds] or [date] before the kernel message
	FormatStatus         // a systemctl status header line (● unit - description, Active:, …)
	FormatBracket        // a time, then [LEVEL][pid] source: message (calico and other CNI plugins)
)

// Entry is one log line: its time when the line gives an absolute one, the severity, the
// program, the message and the structured key=value pairs, parsed only when asked for.
type Entry struct {
	// Time is the line's absolute time, refined to microseconds from a klog header; zero
	// when the line gives none (dmesg's seconds since boot, logrus' seconds since start).
	Time time.Time
	// Severity is the klog level letter: 'I', 'W', 'E' or 'F' ('D' for debug and trace
	// levels of logrus); 0 for lines that give none.
	Severity byte
	// Format and quoted sit beside Severity and PID rather than after Uptime: 120 bytes
	// instead of 136, for each of the hundred thousand and more journal entries a large
	// cluster's analysis holds.
	Format Format
	// quoted says Message is still the quoted text of a structured klog message
	// (ParseJournalQuoted).
	quoted bool
	// PID is the journal's process ID, or the klog thread ID for bare klog lines.
	PID int32
	// Program is the journal identifier, e.g. "kubelet", "kernel" for dmesg lines and the
	// unit name for systemctl status headers; empty when the line does not say.
	Program string
	// Host is the journal's host name, when the line carries one.
	Host string
	// Source is the klog file:line, e.g. "pod_workers.go:1338".
	Source  string
	Message string
	// FieldText holds the raw key=value pairs after the message.
	FieldText string
	// Uptime is dmesg's seconds since boot; 0 when the line gives none.
	Uptime float64
}

// Field is one key/value pair of a structured log line.
type Field struct {
	Key   string
	Value string
}

// Field returns the value of key, unquoted, and whether the line has it.
func (e *Entry) Field(key string) (string, bool) {
	var v string
	found := false
	ScanFields(e.FieldText, func(k, raw string) bool {
		if k == key {
			v, found = FieldValue(raw), true
			return false
		}
		return true
	})
	return v, found
}

// Fields returns every key/value pair, values unquoted, in line order.
func (e *Entry) Fields() []Field {
	var out []Field
	ScanFields(e.FieldText, func(k, raw string) bool {
		out = append(out, Field{Key: k, Value: FieldValue(raw)})
		return true
	})
	return out
}

// Kind says what a parser found on a line.
type Kind int

// Kinds of lines.
const (
	// Entry is a log entry (possibly with a problem, e.g. a truncated message).
	KindEntry Kind = iota
	// KindContinuation continues the previous entry's multi-line value.
	KindContinuation
	// KindMarker is a journalctl marker such as "-- Boot 3f2a… --" or "-- No entries --".
	KindMarker
	// KindGarbage is a line the parser cannot read.
	KindGarbage
)

// ScanFields walks key=value pairs; value is raw (still quoted). It stops at anything
// it cannot read, so a damaged tail costs only the fields after the damage.
func ScanFields(s string, fn func(key, raw string) bool) {
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.IndexByte(s[:eq], ' ') >= 0 {
			return
		}
		key := s[:eq]
		s = s[eq+1:]
		n := valueLen(s)
		if n < 0 {
			return
		}
		if !fn(key, s[:n]) {
			return
		}
		s = s[n:]
	}
}

// valueLen is the length of the raw value at the start of s, or -1 when it is broken.
// A quoted value cut before its closing quote runs to the end of s.
func valueLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '"':
		q, err := quotedPrefix(s)
		if err != nil {
			// A quote that never closes: a line a terminal or a paste cut. The rest of
			// the line is what is left of the value (often the error that matters).
			return len(s)
		}
		return len(q)
	case '[', '{':
		return bracketLen(s)
	case '<':
		// klog's multi-line value marker: the value continues on the next lines. Joined
		// with them (JoinMessages), it ends at the " >" after which the entry's next
		// keys go on ("err=<…> pod=\"ns/name\" podUID=…").
		return joinedValueLen(s)
	}
	if sp := strings.IndexByte(s, ' '); sp >= 0 {
		return sp
	}
	return len(s)
}

// joinedValueLen is the length of a klog multi-line value at the start of s: up to the
// first '>' that ends s or is followed by a space and a key=, all of s when none is.
func joinedValueLen(s string) int {
	for i := 1; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		i += j
		rest := s[i+1:]
		if rest == "" {
			return len(s)
		}
		if rest[0] != ' ' {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		if eq := strings.IndexByte(rest, '='); eq > 0 && !strings.ContainsAny(rest[:eq], " \"'<>") {
			return i + 1
		}
	}
	return len(s)
}

// bracketLen finds the end of a [...] or {...} value, skipping quoted strings inside.
func bracketLen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			q, err := quotedPrefix(s[i:])
			if err != nil {
				return -1
			}
			i += len(q) - 1
		}
	}
	return -1
}

// FieldValue unquotes a raw value ScanFields gave.
func FieldValue(raw string) string {
	if strings.HasPrefix(raw, `"`) {
		return unquote(raw)
	}
	return raw
}

// unquote removes Go quoting; it avoids a copy when there is nothing to unescape.
func unquote(q string) string {
	if closed := len(q) >= 2 && strings.HasSuffix(q, `"`) && !strings.HasSuffix(q, `\"`); !closed && strings.HasPrefix(q, `"`) {
		// A value cut before its closing quote (valueLen): keep what there is.
		return strings.ReplaceAll(strings.TrimPrefix(q, `"`), `\"`, `"`)
	}
	if len(q) >= 2 && strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	if u, err := strconv.Unquote(q); err == nil {
		return u
	}
	return strings.Trim(q, `"`)
}

// ListValue splits a list value such as ["ns/a" "ns/b"] or [ns/a ns/b] into its items.
func ListValue(v string) []string {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	v = v[1 : len(v)-1]
	var out []string
	for v = strings.TrimLeft(v, " ,"); v != ""; v = strings.TrimLeft(v, " ,") {
		if v[0] == '"' {
			q, err := quotedPrefix(v)
			if err != nil {
				return out
			}
			out = append(out, unquote(q))
			v = v[len(q):]
			continue
		}
		end := strings.IndexAny(v, " ,")
		if end < 0 {
			end = len(v)
		}
		out = append(out, v[:end])
		v = v[end:]
	}
	return out
}

// IsDigit tells an ASCII digit.
func IsDigit(b byte) bool { return b >= '0' && b <= '9' }

// atoi parses a short run of decimal digits without allocating.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !IsDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
