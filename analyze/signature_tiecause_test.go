package analyze

import (
	"strings"
	"testing"

	"podflow.dev/podflow/catalog"
)

// A line that fires a signature through the catalog in a wording that holds none of
// the signature's captures still gets a cause without "<name>" holes: the message the
// catalog read stands for what is missing.
func TestTieCauseFillsMissingCaptures(t *testing.T) {
	var sig *Signature
	for _, s := range builtinSignatures(t) {
		if s.ID == "node-cri-api-unimplemented" {
			sig = s
		}
	}
	if sig == nil {
		t.Fatal("no signature node-cri-api-unimplemented")
	}
	text := "unable to determine runtime API version: rpc error: code = Unimplemented desc = unknown method Version"
	e := &catalog.Entry{ID: "kubelet/test", Component: "kubelet", Template: "unable to determine runtime API version: %w", First: "v1.24.0"}
	l := &Line{kind: textKindOf(TextText), Text: text}
	f := sig.tieFinding(l, tiedLine{tieHit: tieHit{sig: sig, caps: map[string]string{}, m: catalog.Match{Entry: e, Text: text}}})
	if strings.Contains(f.Cause, "<detail>") || !strings.Contains(f.Cause, "unknown method Version") {
		t.Errorf("cause %q: want the catalog's message for the missing detail", f.Cause)
	}
}
