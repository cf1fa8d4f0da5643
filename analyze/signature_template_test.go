package analyze

import (
	"strings"
	"testing"
)

// A registry refusal in the two wordings of one message: the one names the image pulled,
// the other only the repository and its tag (the shapes of containerd's and the
// containers/image library's 429 messages).
const templateSig = `- id: registry-refusal
  stage: image
  title: the registry refuses the pull
  component: container runtime
  patterns:
    - 'pull image "(?P<image>[^"]+)": (?P<err>429 Too Many Requests)'
    - 'reading manifest (?P<tag>\S+) in (?P<repo>[^\s:]+): (?P<err>toomanyrequests)'
  cause: 'the registry refuses {image|repo}[[ (tag {tag})]]: {err}'
  fix: wait, or authenticate[[ to pull {image}]]
  confirm:
    - crictl pull {image|repo}
  examples:
    fires:
      - 'Failed to pull image "app:1": 429 Too Many Requests'
    quiet:
      - 'Failed to pull image "app:1": not found'
`

// TestCauseTemplateAlternativesAndOptionalParts checks {a|b} (the first name with a
// value) and [[ ... ]] (written only when its placeholders have values) in a cause.
func TestCauseTemplateAlternativesAndOptionalParts(t *testing.T) {
	sigs, err := ParseSignatures("t.yaml", []byte(templateSig))
	if err != nil {
		t.Fatal(err)
	}
	s := sigs[0]
	for _, c := range []struct{ text, cause, fix string }{
		{`Failed to pull image "app:1": 429 Too Many Requests`, "the registry refuses app:1: 429 Too Many Requests", "wait, or authenticate to pull app:1"},
		{`Error reading manifest 2.0 in quay.io/x/app: toomanyrequests`, "the registry refuses quay.io/x/app (tag 2.0): toomanyrequests", "wait, or authenticate"},
	} {
		cause, fix, ok := s.Explain(c.text, nil)
		if !ok || cause != c.cause || fix != c.fix {
			t.Errorf("Explain(%q) = %q, %q, %v; want %q, %q", c.text, cause, fix, ok, c.cause, c.fix)
		}
	}
	// A placeholder outside [[ ]] that some pattern does not capture is refused, and
	// the message says how to write it.
	bad := strings.Replace(templateSig, "{image|repo}[[ (tag {tag})]]", "{image|repo} (tag {tag})", 1)
	if _, err := ParseSignatures("bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "[[ ]]") {
		t.Errorf("{tag} outside an optional part: %v", err)
	}
	// Inside one, a name no pattern captures is refused too.
	bad = strings.Replace(templateSig, "(tag {tag})", "(tag {version})", 1)
	if _, err := ParseSignatures("bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "{version}") {
		t.Errorf("{version} in an optional part: %v", err)
	}
}

// TestSignatureReadsAWrappedMessageAsOneLine checks that a message an events table
// wrapped over lines (kubectl describe in a narrow terminal) matches as printed.
func TestSignatureReadsAWrappedMessageAsOneLine(t *testing.T) {
	sigs, err := ParseSignatures("t.yaml", []byte(templateSig))
	if err != nil {
		t.Fatal(err)
	}
	caps, ok := sigs[0].match("Failed to pull image \"app:1\":\n      429 Too Many Requests")
	if !ok || caps["err"] != "429 Too Many Requests" {
		t.Errorf("wrapped message: %v %v", caps, ok)
	}
	if _, ok := sigs[0].match("Failed to pull image \"app:1\":\n\n not found"); ok {
		t.Error("a wrapped near miss matches")
	}
}

// TestCauseNamesThePodOfPastedLinesAboutIt checks that a signature's {pod} is filled
// from the subject of pasted lines the import found to be about a named pod, and that
// an optional part naming it is left out when the pod is not named.
func TestCauseNamesThePodOfPastedLinesAboutIt(t *testing.T) {
	sig := strings.Replace(templateSig, "cause: 'the registry refuses {image|repo}", "cause: 'the registry refuses[[ pod {pod}]] {image|repo}", 1)
	sigs, err := ParseSignatures("t.yaml", []byte(sig))
	if err != nil {
		t.Fatal(err)
	}
	text := `Failed to pull image "app:1": 429 Too Many Requests`
	caps, _ := sigs[0].match(text)
	for _, c := range []struct {
		about ObjectRef
		want  string
	}{
		{ObjectRef{Kind: "Pod", Namespace: "default", Name: "web"}, "the registry refuses pod web app:1"},
		{ObjectRef{Kind: "Pod", Namespace: "default", Name: UnknownSubject}, "the registry refuses app:1"},
	} {
		l := new(Line{kind: textKindOf(TextText), Text: text, Fragment: true}.withMore(&lineMore{object: c.about}))
		if f := sigs[0].finding(l, caps); !strings.HasPrefix(f.Cause, c.want) {
			t.Errorf("about %v: cause %q, want it to begin %q", c.about, f.Cause, c.want)
		}
	}
}
