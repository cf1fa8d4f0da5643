package analyze

import (
	"encoding/json"
	"testing"

	"podflow.dev/podflow/bundle"
)

// jsonBundle is an in-memory bundle of the given files, each value encoded as JSON but
// a string, which is the file's bytes as they are (a broken file, say).
func jsonBundle(t testing.TB, files map[string]any) *bundle.Bundle {
	t.Helper()
	raw := map[string][]byte{}
	for path, v := range files {
		if s, ok := v.(string); ok {
			raw[path] = []byte(s)
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw[path] = data
	}
	b, err := bundle.New("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
