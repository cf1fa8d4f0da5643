package bundle

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

var indentSeeds = []string{
	`{}`, `[]`, `{"a":{}}`, `[[],{},[{}]]`, `"x"`, `12.5e-3`, `null`, `true`,
	`{"a":"b","c":[1,2,{"d":null,"e":false}],"f":{"g":[]}}`,
	`{"quote":"say \"hi\", {not} [json]: ok","slash":"a\\","u":"\u003chtml\u003e \ud83d\ude00"}`,
	"{\"deep\":" + string(bytes.Repeat([]byte(`[`), 40)) + "1" + string(bytes.Repeat([]byte(`]`), 40)) + "}",
}

func FuzzIndentJSONMatchesIndent(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, src) != nil {
			return
		}
		checkIndent(t, compact.Bytes())
	})
}

func checkIndent(t *testing.T, src []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil {
		t.Fatal(err)
	}
	if got := indentJSON(nil, src); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("indentJSON(%q)\n got %q\nwant %q", src, got, want.Bytes())
	}
}

// WriteJSON writes what json.MarshalIndent writes, on every recorded bundle's lists.
func TestMarshalIndentMatchesEncodingJSON(t *testing.T) {
	for _, s := range indentSeeds {
		checkIndent(t, []byte(s))
	}
	files, err := filepath.Glob("../testdata/bundles/*/cluster-resources/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d recorded lists", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := marshalIndent(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("%s: marshalIndent differs from json.MarshalIndent", name)
		}
	}
}
