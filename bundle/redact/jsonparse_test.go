package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `null`, ` {"a" : [1, 2, {"b": null}] } `,
		`{"a":"\u00e9\ud83d\ude00\n\"\\\/"}`, "\"\xff\xfe\"", `"\ud800"`,
		`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, `"\u12"`, "\"a\tb\"", `{"a" 1}`, `{"a":1}x`,
		`[`, `{`, `"`, `tru`, `nul`, `{"a":1 "b":2}`, `{1:2}`, "", " ",
		strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
		strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	} {
		_, err := parseJSON([]byte(in))
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Errorf("parseJSON(%.40q): err=%v, encoding/json valid=%v", in, err, valid)
		}
	}
}

func TestParseJSONSpansAndStrings(t *testing.T) {
	in := `{"a": "x\ny", "b": [1, "z"]}`
	root, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := root.member("a")
	if a.str != "x\ny" || in[a.start:a.end] != `"x\ny"` {
		t.Fatalf("a = %q span %q", a.str, in[a.start:a.end])
	}
	b := root.member("b")
	if in[b.start:b.end] != `[1, "z"]` || b.kids[1].str != "z" {
		t.Fatalf("b span %q", in[b.start:b.end])
	}
}

func TestQuoteJSONRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "<redacted:x:abcdef>", "tab\tnl\ncr\r\x00\x1f\x7f", `quote " back \ `, "é😀\u2028\u2029"} {
		var back string
		if err := json.Unmarshal(quoteJSON(s), &back); err != nil || back != s {
			t.Errorf("quoteJSON(%q) = %s -> %q, %v", s, quoteJSON(s), back, err)
		}
	}
	var back string
	if err := json.Unmarshal(quoteJSON("a\xffb"), &back); err != nil || back != "a\ufffdb" {
		t.Errorf("invalid UTF-8 = %q, %v", back, err)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",null]}`, `"\u00e9"`, `[1e5,-0]`, `{"a":}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := parseJSON(in)
		if valid := json.Valid(in); valid != (err == nil) {
			t.Fatalf("parseJSON(%q): err=%v, encoding/json valid=%v", in, err, valid)
		}
	})
}
