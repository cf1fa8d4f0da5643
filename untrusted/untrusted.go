// Package untrusted makes text that comes from a bundle or a paste safe to show: on a
// terminal, in a table or Markdown report, and inside a shell command a user copies.
// Everything read from evidence is untrusted: a pod name, an event message or a log line
// may carry terminal escape sequences, forged newlines or shell metacharacters.
package untrusted

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every control character (C0, DEL, C1, and the Unicode format
// characters that reorder text) written as a Go escape (\x1b, \n, \u202e), so it prints
// as one inert line. Printable text, including non-ASCII letters, is unchanged.
func Text(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i]), 16))
		case unsafeRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Text for multi-line text shown as several lines: newlines are kept, a
// carriage return or any other control character is escaped.
func Lines(s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Text(p)
	}
	return strings.Join(parts, "\n")
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return true
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) ||
		r == '\u2028' || r == '\u2029'
}

// ShellArg quotes s for a POSIX shell: unchanged when it holds only characters no shell
// treats specially, otherwise in single quotes with each embedded single quote written
// as '\”.
func ShellArg(s string) string {
	if s != "" && reShellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var reShellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// reName is a Kubernetes object name: a DNS subdomain (RFC 1123), which also covers
// DNS labels (namespaces, most names) and node names.
var reName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// IsName reports whether s is a valid Kubernetes object name (a DNS-1123 subdomain of
// at most 253 characters). A name that is not one cannot have come from a real API
// server and must not be put into a command.
func IsName(s string) bool {
	return len(s) <= 253 && reName.MatchString(s)
}
