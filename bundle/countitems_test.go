package bundle

import (
	"encoding/json"
	"testing"
)

// countItems accepts the documents json.Unmarshal accepts into a struct with an Items
// []json.RawMessage field, and counts the same items.
func FuzzCountItems(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"List","items":[{"a":1},{"b":[1,2]},null,"x"]}`,
		`{"items":[]}`, `{"items":null}`, `null`, `{}`, `[]`, `"x"`, `{"items":{}}`,
		`{"Items":[1],"items":[1,2]}`, `{"ITEMS":[1,2,3]}`, `{"items":[1]} x`, `{"items":[1,]}`,
		`{"items":[1]}` + "\n\t ", `{"itemſ":[1]}`, "{\"items\":[\"\xff\"]}", `{"a":"b","a":"c","items":[1]}`,
		`{"items":[1e400]}`, `{"items":[01]}`, ``, ` `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		wantErr := json.Unmarshal(data, &list)
		got, err := countItems(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: countItems error %v, json.Unmarshal error %v", data, err, wantErr)
		}
		if err == nil && got != len(list.Items) {
			t.Fatalf("%q: countItems = %d, json.Unmarshal found %d", data, got, len(list.Items))
		}
	})
}
