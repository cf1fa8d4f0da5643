package analyze

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A time read by timeUnmarshalers is what its UnmarshalJSON reads, and a value that
// UnmarshalJSON refuses is refused.
func TestTimeUnmarshalersAsUnmarshalJSON(t *testing.T) {
	type obj struct {
		T  metav1.Time       `json:"t"`
		P  *metav1.Time      `json:"p"`
		M  metav1.MicroTime  `json:"m"`
		MP *metav1.MicroTime `json:"mp"`
	}
	local := time.Local
	defer func() { time.Local = local }()
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("CET", 3600)} {
		time.Local = loc
		for _, v := range []string{
			`"2026-11-29T19:00:01Z"`, `"2026-11-29T19:00:01+02:00"`, `"2026-11-29T19:00:01.123456Z"`,
			`null`, `"\u0032026-11-29T19:00:01Z"`, `""`, `"yesterday"`, `12`, `{}`, `[]`, `true`,
		} {
			doc := []byte(`{"t":` + v + `,"p":` + v + `,"m":` + v + `,"mp":` + v + `}`)
			var want, got obj
			wantErr := json.Unmarshal(doc, &want)
			err := fastUnmarshal(doc, &got)
			if (err == nil) != (wantErr == nil) {
				t.Errorf("%s: fastUnmarshal error %v, encoding/json %v", v, err, wantErr)
				continue
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s: fastUnmarshal %+v, encoding/json %+v", v, got, want)
			}
			got = obj{}
			if err := newSharedDecode().unmarshal(doc, &got); (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s: shared decode %+v, %v; encoding/json %+v, %v", v, got, err, want, wantErr)
			}
		}
	}
}
