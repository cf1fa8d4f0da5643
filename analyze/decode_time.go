package analyze

import (
	"bytes"
	"errors"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timeUnmarshalers read the times of Kubernetes objects as their UnmarshalJSON does
// (time.Parse of the string, in the local zone) without its encoding/json.Unmarshal of
// the string: that call sets up a decoder and checks the text in a pass of its own for
// every creation, start and transition time, and at 20k pods it was a twentieth of all
// an analysis allocated. A null, or a string that holds an escape, is left to the
// type's own UnmarshalJSON; a value that is not a string is refused, as UnmarshalJSON
// refuses it (and the load's slow path then decodes the document with encoding/json).
var timeUnmarshalers = jsonv2.JoinUnmarshalers(
	jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.Time) error {
		pt, err := readTime(dec, time.RFC3339)
		if err == nil {
			t.Time = pt
		}
		return err
	}),
	jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.MicroTime) error {
		pt, err := readTime(dec, metav1.RFC3339Micro)
		if err == nil {
			t.Time = pt
		}
		return err
	}),
)

// errNotTimeString is a time's JSON value that is not a string.
var errNotTimeString = errors.New("a time that is not a JSON string")

// readTime reads a time's JSON string with layout, in the local zone.
func readTime(dec *jsontext.Decoder, layout string) (time.Time, error) {
	switch dec.PeekKind() {
	case 'n':
		return time.Time{}, errors.ErrUnsupported
	case '"':
	default:
		return time.Time{}, errNotTimeString
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return time.Time{}, err
	}
	if bytes.IndexByte(raw, '\\') >= 0 {
		return time.Time{}, errors.ErrUnsupported
	}
	pt, err := time.Parse(layout, string(raw[1:len(raw)-1]))
	if err != nil {
		return time.Time{}, err
	}
	return pt.Local(), nil
}

// fastOptions are the options of fastUnmarshal: encoding/json's semantics, with the
// times read by timeUnmarshalers.
var fastOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.WithUnmarshalers(timeUnmarshalers))
