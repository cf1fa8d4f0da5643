package redact

import (
	"testing"
)

// TestVendorRulesFollowGitleaks checks the converted rules against gitleaks' own
// samples: every true positive is masked, no false positive is.
func TestVendorRulesFollowGitleaks(t *testing.T) {
	for i, r := range gitleaksRules {
		p := testPolicy(t)
		p.detectors = vendorSet()[i : i+1]
		p.matcher = newMatcher(p.detectors)
		s, ok := gitleaksSamples[r.id]
		if !ok {
			t.Errorf("%s: no samples", r.id)
			continue
		}
		for _, tp := range s.tps {
			if !ruleMasks(p, tp, r.id) {
				t.Errorf("%s: true positive not masked: %q", r.id, tp)
			}
		}
		for _, fp := range s.fps {
			if out := p.RedactString("nodes/n1/kubelet.log", fp); out != fp {
				t.Errorf("%s: false positive masked: %q\n -> %q", r.id, fp, out)
			}
		}
	}
}

// ruleMasks reports whether redacting text masks something under rule id.
func ruleMasks(p *Policy, text, id string) bool {
	c := counter{}
	splice([]byte(text), p.textEdits([]byte(text), 0, -1, c, nil))
	return c[id] > 0
}
