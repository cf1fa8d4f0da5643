package redact

import (
	"bytes"
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
		_, _, err := parseJSON([]byte(in))
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Errorf("parseJSON(%.40q): err=%v, encoding/json valid=%v", in, err, valid)
		}
	}
}

func TestParseJSONSpansAndStrings(t *testing.T) {
	in := `{"a": "x\ny", "b": [1, "z"]}`
	root, doc, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := doc.member(root, "a")
	if doc.str(a) != "x\ny" || in[a.start:a.end] != `"x\ny"` {
		t.Fatalf("a = %q span %q", doc.str(a), in[a.start:a.end])
	}
	b := doc.member(root, "b")
	if in[b.start:b.end] != `[1, "z"]` || doc.str(&doc.kids(b)[1]) != "z" {
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
	for _, s := range []string{`{"a":[1,"b",null]}`, `"\u00e9"`, `[1e5,-0]`, `{"a":}`, `{"a":{"b":[1,2]},"c":{"token":[1,]}}`, `[[1],[2,{"x":"secret"}],[3]]`} {
		f.Add([]byte(s))
	}
	p := testPolicy(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _, err := parseJSON(in)
		valid := json.Valid(in)
		if valid != (err == nil) {
			t.Fatalf("parseJSON(%q): err=%v, encoding/json valid=%v", in, err, valid)
		}
		h := p.matcher.scan(in)
		if _, _, err := parse(&jparser{data: in, prune: true, hits: &h}); valid != (err == nil) {
			t.Fatalf("pruning parse(%q): err=%v, encoding/json valid=%v", in, err, valid)
		}
	})
}

// TestPrunedParseExpandsToTheFullTree checks that pruning keeps every container with
// a keyword that counts or an escape, and that expanding the pruned ones gives
// parseJSON's tree. The keywords that count are those in strings and in member names
// that can make a value masked.
func TestPrunedParseExpandsToTheFullTree(t *testing.T) {
	p := testPolicy(t)
	for _, in := range [][]byte{
		syntheticPodList(256 << 10),
		[]byte(`{"a":{"b":[1,{"c":"d"}],"e":"t\u006fken"},"f":[{"g":"h"},{"secret":"x"}],"i":{},"j":{"mountPath":"/x","topologyKey":"zone","secretKeyRef":{"name":"db"}}}`),
	} {
		full, fullDoc, err := parseJSON(in)
		if err != nil {
			t.Fatal(err)
		}
		h := p.matcher.scan(in)
		pruned, doc, err := parse(&jparser{data: in, prune: true, hits: &h})
		if err != nil {
			t.Fatal(err)
		}
		// counts says whether a keyword ends in the member name of a, and whether it
		// is one that counts.
		counts := func(a *jnode) (inName, counted bool) {
			inName, _ = h.endIn(a.keyAt-1, a.keyAt+int(a.keyLen)+1)
			return inName, inName && (a.keyDec != 0 || nameMatters(fullDoc.key(a)))
		}
		var flags func(a *jnode) (kw, name bool)
		flags = func(a *jnode) (kw, name bool) {
			switch a.kind {
			case jString:
				return h.endIn(a.start, a.end)
			case jObject, jArray:
				kids := fullDoc.kids(a)
				for i := range kids {
					k, n := flags(&kids[i])
					_, c := counts(&kids[i])
					kw, name = kw || k || a.kind == jObject && c, name || n
				}
			}
			return kw, name
		}
		prunedCount := 0
		// An expanded container is parsed again without the hits: its members' flags
		// are not set.
		var same func(a, b *jnode, member, expanded bool)
		same = func(a, b *jnode, member, expanded bool) {
			kw, name := flags(a)
			if expanded {
				kw, name = false, false
			}
			if b.pruned {
				prunedCount++
				if b.esc || kw || name {
					t.Fatalf("pruned %s, which holds a keyword or an escape", in[b.start:b.end])
				}
				doc.expand(b)
				expanded = true
			}
			ak, bk := fullDoc.kids(a), doc.kids(b)
			if a.kind != b.kind || a.start != b.start || a.end != b.end || fullDoc.key(a) != doc.key(b) || fullDoc.str(a) != doc.str(b) || a.esc != b.esc || len(ak) != len(bk) {
				t.Fatalf("pruned tree differs at %s", in[a.start:a.end])
			}
			if !b.pruned && (b.kw != kw || b.nameKw != name) {
				t.Fatalf("keyword flags wrong at %s", in[a.start:a.end])
			}
			if _, c := counts(a); member && !expanded && b.keyInert != (a.keyDec == 0 && !c) {
				t.Fatalf("keyInert wrong at %q", fullDoc.key(a))
			}
			for i := range ak {
				same(&ak[i], &bk[i], a.kind == jObject, expanded)
			}
		}
		same(full, pruned, false, false)
		if prunedCount == 0 {
			t.Fatalf("nothing pruned in %.60s", in)
		}
	}
	// Keywords in names that make nothing of their values do not keep a container.
	in := []byte(`{"j":{"mountPath":"/x","topologyKey":"zone","secretKeyRef":{"name":"db"}},"k":{"dbPassword":"x"}}`)
	h := p.matcher.scan(in)
	root, doc, err := parse(&jparser{data: in, prune: true, hits: &h})
	if err != nil {
		t.Fatal(err)
	}
	if j := doc.member(root, "j"); !j.pruned {
		t.Errorf("kept %s", in[j.start:j.end])
	}
	if k := doc.member(root, "k"); k.pruned {
		t.Errorf("pruned %s", in[k.start:k.end])
	}
}

// TestShortcutsChangeNothing redacts documents with and without the shortcuts.
func TestShortcutsChangeNothing(t *testing.T) {
	fast := testPolicy(t)
	slow := testPolicy(t)
	slow.exhaustive = true
	for name, in := range map[string][]byte{
		"cluster-resources/pods/shop.json":             syntheticPodList(256 << 10),
		"cluster-resources/pods/recorded.json":         recordedPodList(t, 256<<10),
		"cluster-resources/pods/logs/shop/web/app.log": syntheticContainerLog(256<<10, true),
		"nodes/node-1/kubelet.log":                     syntheticKubeletJournal(256 << 10),
		"cluster-resources/secrets/shop.json":          []byte(`{"kind":"SecretList","items":[{"metadata":{"name":"a"},"data":{"k":"aHVudGVyMg=="}}]}`),
		"cluster-resources/configmaps/shop.json":       []byte(`{"items":[{"data":{"cfg":"{\"env\":[{\"name\":\"gitlabPat\",\"value\":\"glx-1234567890abcdef\"}]}","dsn":"x"}}]}`),
	} {
		got, _ := fast.Apply(name, in)
		want, _ := slow.Apply(name, in)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the shortcuts changed the output", name)
		}
	}
	if fast.Redaction().Total != slow.Redaction().Total || fast.Redaction().Total == 0 {
		t.Errorf("masks: %d with shortcuts, %d without", fast.Redaction().Total, slow.Redaction().Total)
	}
}

func TestPlainRunStopsWhereTheByteLoopDoes(t *testing.T) {
	for c := range 256 {
		for at := range 20 {
			b := bytes.Repeat([]byte("a\xffZ~"), 6)
			b[at] = byte(c)
			want := 0
			for want < len(b) && !stringStop[b[want]] {
				want++
			}
			if got := plainRun(b, 0); got != want {
				t.Fatalf("byte %#x at %d: plainRun = %d, want %d", c, at, got, want)
			}
		}
	}
}
