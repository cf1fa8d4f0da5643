package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// TestSignatures checks the built-in catalog: it loads (every pattern compiles and
// matches its firing examples and none of its quiet ones), IDs are unique among rules
// and signatures, and every signature names incidents of the corpus that exist.
func TestSignatures(t *testing.T) {
	sigs, err := Signatures()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		if len(s.Incidents) == 0 {
			t.Errorf("%s (%s:%d): names no incident of testdata/incidents", s.ID, s.File, s.Line)
		}
		for _, inc := range s.Incidents {
			if _, err := os.Stat(filepath.Join("..", "testdata", "incidents", inc, "case.yaml")); err != nil {
				t.Errorf("%s: incident %s: %v", s.ID, inc, err)
			}
		}
		if strings.TrimSpace(s.Doc) == "" || s.PrintedBy == "" {
			t.Errorf("%s: needs doc and printedBy (the source that prints the message)", s.ID)
		}
		// A signature is named and filed by its stage; a rule's own message knowledge
		// by its rule, whose ID stays stable when the design moves the rule to another
		// stage (volume-pvc-unbound is at scheduling: the scheduler holds the pod).
		family := string(s.Stage)
		if s.ForRule != "" {
			family, _, _ = strings.Cut(s.ForRule, "-")
			if !strings.HasPrefix(s.ID, s.ForRule+"-") {
				t.Errorf("%s: a rule's message signature ID starts with its rule's ID (%s-)", s.ID, s.ForRule)
			}
		}
		if !strings.HasPrefix(s.ID, family+"-") {
			t.Errorf("%s: a signature ID starts with its stage (%s-)", s.ID, family)
		}
		if base := strings.TrimPrefix(s.File, "rules/signatures/"); base != family+".yaml" && !strings.HasPrefix(base, family+"-") {
			t.Errorf("%s: %s belongs in rules/signatures/%s.yaml or %s-*.yaml, not %s", s.ID, family, family, family, s.File)
		}
	}
}

func TestParseSignaturesErrors(t *testing.T) {
	good := `- id: node-example
  stage: node
  title: t
  component: kubelet
  printedBy: f
  patterns: ['failed to run Kubelet: (?P<why>.+)']
  cause: 'kubelet exits: {why}'
  fix: fix it
  examples:
    fires: ['E0101 failed to run Kubelet: bad']
    quiet: ['kubelet started']
`
	if _, err := analyze.ParseSignatures("good.yaml", []byte(good)); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	for name, tc := range map[string]struct {
		text, want string
	}{
		"unknown field":       {strings.Replace(good, "  fix: fix it", "  fixx: fix it", 1), "bad.yaml:8: field fixx: unknown field"},
		"bad regexp":          {strings.Replace(good, "(?P<why>.+)", "(?P<why>.+", 1), "bad.yaml:6: field patterns[0]: error parsing regexp"},
		"bad stage":           {strings.Replace(good, "stage: node", "stage: nodes", 1), `bad.yaml:2: field stage: unknown stage "nodes"`},
		"placeholder":         {strings.Replace(good, "{why}", "{reason}", 1), "bad.yaml:7: field cause: {reason} is not a capture"},
		"quiet fires":         {strings.Replace(good, "['kubelet started']", "['failed to run Kubelet: x']", 1), "bad.yaml:9: field examples.quiet[0]: a pattern matches it"},
		"not a list":          {"id: x\n", "bad.yaml:1: a signature file is a YAML list"},
		"bad yaml":            {"- id: [\n", "bad.yaml:"},
		"bad unless":          {strings.Replace(good, "  cause:", "  unless: ['(']\n  cause:", 1), "bad.yaml:7: field unless[0]: error parsing regexp"},
		"unless vetoes fires": {strings.Replace(good, "  cause:", "  unless: [': bad$']\n  cause:", 1), "field examples.fires[0]: no pattern matches it"},
		"huge pattern":        {strings.Replace(good, "(?P<why>.+)", "(?P<why>.+)"+strings.Repeat("a", 1001), 1), "longer than 1000 bytes"},
	} {
		_, err := analyze.ParseSignatures("bad.yaml", []byte(tc.text))
		var se *analyze.SignatureError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func TestLoadSignaturesRefusesTakenID(t *testing.T) {
	dir := t.TempDir()
	text := `- id: image-pull-dns
  stage: image
  title: t
  component: kubelet
  printedBy: f
  patterns: ['x(?P<a>y)']
  cause: '{a}'
  fix: f
  examples: {fires: [xy], quiet: [x]}
`
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSignatures([]string{dir})
	if err == nil || !strings.Contains(err.Error(), `"image-pull-dns" is already taken by rule image-pull-dns`) {
		t.Fatalf("got %v", err)
	}
}
