package catalog

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// maxLayers bounds the layers of one message, so a hostile line cannot make Read slow.
const maxLayers = 48

var (
	klogHeader    = regexp.MustCompile(`^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[^\s\]]+:\d+\]\s*`)
	journalHeader = regexp.MustCompile(`^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+)\s+\S+\s+[\w.@/-]+(?:\[\d+\])?:\s+`)
	// A log time with its zone (fluentd writes " +0000") and level ("[error]:").
	timeHeader = regexp.MustCompile(`^\[?\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z| ?[+-]\d\d:?\d\d)?\]?\s+(?:\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|info|warn|warning|error|debug|fatal)\]?:?\s+)?`)
	rpcPrefix  = regexp.MustCompile(`^rpc error: code = \w+ desc = `)
	// fieldStart finds a structured field whose value is a message or an error.
	fieldStart = regexp.MustCompile(`(?:^|\s)(?:msg|message|err|error|reason|errorMessage|errorVerbose|cause)=`)
)

// Layers splits one message into its error-chain layers, outermost first: the message
// with klog, journal and timestamp headers stripped; the message and error fields of a
// structured line (klog `"msg" err="..."`, logrus `msg="..." error="..."`, JSON
// "msg"/"error"/"err"); each rest of the chain after a ": " wrapping or an
// "rpc error: code = X desc = " prefix; quoted and escaped layers unquoted.
func Layers(msg string) []string {
	l := layerer{out: make([]string, 0, 4)}
	l.walk(msg, 0)
	return l.out
}

type layerer struct {
	out []string
}

func (l *layerer) add(s string) bool {
	if s == "" || len(l.out) >= maxLayers {
		return false
	}
	for _, o := range l.out {
		if o == s {
			return false
		}
	}
	l.out = append(l.out, s)
	return true
}

func stripHeaders(s string) string {
	for range 4 {
		t := strings.TrimSpace(s)
		// Mail quoting and Markdown code spans around a pasted line.
		t = strings.TrimLeft(t, "> ")
		if len(t) > 2 && t[0] == '`' && t[len(t)-1] == '`' {
			t = strings.Trim(t, "`")
		}
		for _, re := range []*regexp.Regexp{journalHeader, klogHeader, timeHeader} {
			if loc := re.FindStringIndex(t); loc != nil {
				t = t[loc[1]:]
			}
		}
		if t == s {
			return t
		}
		s = t
	}
	return s
}

func (l *layerer) walk(s string, depth int) {
	if depth > 6 || len(l.out) >= maxLayers {
		return
	}
	s = stripHeaders(s)
	if s == "" {
		return
	}
	if s[0] == '{' && s[len(s)-1] == '}' {
		if l.walkJSON(s, depth) {
			return
		}
	}
	if !l.add(s) {
		return
	}
	// A structured line: a leading quoted message, then key="value" fields.
	if s[0] == '"' {
		if q, err := strconv.QuotedPrefix(s); err == nil {
			if u, err := strconv.Unquote(q); err == nil {
				l.walk(u, depth+1)
			}
		}
	}
	l.walkFields(s, depth)
	l.walkChain(s, depth)
	// Escaped quotes of a message printed inside another quoted string.
	if strings.Contains(s, `\"`) && onlyEscapedQuotes(s) {
		l.walk(UnescapeOnce(s), depth+1)
	}
}

// walkFields walks the values of msg=, err=, error= ... fields outside quotes.
func (l *layerer) walkFields(s string, depth int) {
	if !strings.Contains(s, "=") {
		return
	}
	for _, loc := range fieldStart.FindAllStringIndex(s, -1) {
		if inQuotes(s, loc[0]) {
			continue
		}
		v := s[loc[1]:]
		if strings.HasPrefix(v, `"`) {
			if q, err := strconv.QuotedPrefix(v); err == nil {
				if u, err := strconv.Unquote(q); err == nil {
					l.walk(u, depth+1)
				}
			}
			continue
		}
		if i := strings.IndexAny(v, " \t"); i >= 0 {
			v = v[:i]
		}
		if len(v) > 3 {
			l.walk(v, depth+1)
		}
	}
}

// walkChain adds each rest of the chain after a ": " (outside quotes) and after an
// "rpc error: code = X desc = " prefix, and the quoted cause after runc's " caused ";
// a rest that is one quoted string is unquoted.
func (l *layerer) walkChain(s string, depth int) {
	inq := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			continue
		case '"':
			inq = !inq
			continue
		}
		if inq {
			continue
		}
		var rest string
		switch {
		case s[i] == ':' && i+1 < len(s) && s[i+1] == ' ':
			rest = strings.TrimLeft(s[i+2:], " ")
		case s[i] == ' ' && strings.HasPrefix(s[i:], ` caused "`):
			// runc before 1.0 wrapped its errors as `%s caused %q`: the cause is
			// the quoted rest, escaped once more at each level.
			if q, err := strconv.QuotedPrefix(s[i+8:]); err == nil {
				if u, err := strconv.Unquote(q); err == nil {
					l.walk(u, depth+1)
				}
				i += 8 + len(q) - 1
				continue
			}
			rest = UnescapeOnce(strings.TrimPrefix(s[i+9:], `"`))
		case s[i] == 'r' && strings.HasPrefix(s[i:], "rpc error: code = "):
			if loc := rpcPrefix.FindStringIndex(s[i:]); loc != nil {
				rest = s[i+loc[1]:]
				i += loc[1] - 1
			}
		default:
			continue
		}
		if rest == "" {
			continue
		}
		if rest[0] == '"' {
			if q, err := strconv.QuotedPrefix(rest); err == nil && len(q) >= len(strings.TrimRight(rest, " .")) {
				if u, err := strconv.Unquote(q); err == nil {
					l.walk(u, depth+1)
					continue
				}
			}
		}
		if !l.add(rest) {
			if len(l.out) >= maxLayers {
				return
			}
		}
	}
}

func (l *layerer) walkJSON(s string, depth int) bool {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return false
	}
	// The object's own text is a layer only when it is the message alone (a component
	// prints such JSON bodies) or no field holds one: matched as text, a template's
	// closing verb would take the other fields after the message.
	msg := firstString(m, "msg", "message", "log", "MESSAGE")
	if msg == "" || len(m) == 1 {
		l.add(s)
	}
	// A structured logger's message with the error it was given (zap's and logr's
	// "error", klog's "err") is the chain "msg: error" the call wrapped.
	if e := firstString(m, "error", "err"); msg != "" && e != "" && !strings.Contains(msg, e) {
		l.add(strings.TrimRight(msg, " :.") + ": " + e)
	}
	for _, k := range []string{"msg", "message", "log", "MESSAGE", "error", "err", "reason", "cause"} {
		if v, ok := m[k].(string); ok {
			l.walk(v, depth+1)
		}
	}
	return true
}

// firstString is the first of keys whose value in m is a non-empty string.
func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// inQuotes reports whether position i of s is inside a double-quoted string.
func inQuotes(s string, i int) bool {
	inq := false
	for j := 0; j < i && j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			inq = !inq
		}
	}
	return inq
}

// UnescapeOnce removes one level of backslash escaping: \" → " and \\ → \; every other
// escape is kept as it is.
func UnescapeOnce(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// onlyEscapedQuotes reports whether every double quote of s is escaped: a message that
// was printed inside another quoted string and pasted without its outer quotes.
func onlyEscapedQuotes(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return false
		}
	}
	return true
}
