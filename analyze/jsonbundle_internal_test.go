package analyze

import (
	"encoding/json"
	"testing"

	"podflow.dev/podflow/bundle"
)

// jsonBundle is an in-memory bundle of the given files, each value encoded as JSON.
func jsonBundle(t testing.TB, files map[string]any) *bundle.Bundle {
	t.Helper()
	raw := map[string][]byte{}
	for path, v := range files {
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
