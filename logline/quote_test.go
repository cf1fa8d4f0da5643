package logline

import (
	"strconv"
	"testing"
)

var quoteSeeds = []string{
	`"abc" rest`, `"a\"b\\c" k=v`, `"unterminated`, `"a` + "\n" + `b"`, `"\x41\u00e9\101" x`,
	`"\'"`, `"\q"`, `"\` + `"`, `'a'`, "`raw` x", `""`, `"` + "\xff\xfe" + `"`, `"\` + "\n" + `"`,
	`"\n\t\a\b\f\r\v" y`, `"a\\"b"`, `x"y"`, ``, `"`, `"\`,
}

// checkQuote fails t when quotedPrefix and strconv.QuotedPrefix differ on s.
func checkQuote(t *testing.T, s string) {
	t.Helper()
	got, err := quotedPrefix(s)
	want, wantErr := strconv.QuotedPrefix(s)
	if got != want || (err == nil) != (wantErr == nil) {
		t.Errorf("quotedPrefix(%q) = %q, %v; strconv.QuotedPrefix gives %q, %v", s, got, err, want, wantErr)
	}
}

func TestQuotedPrefixAsStrconv(t *testing.T) {
	for _, s := range quoteSeeds {
		checkQuote(t, s)
	}
}

func FuzzQuotedPrefix(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(checkQuote)
}
