package redact

import (
	"strings"
	"testing"
)

// TestVendorRulesFollowGitleaks checks the converted rules against gitleaks' own
// samples: every true positive is masked, no false positive is.
func TestVendorRulesFollowGitleaks(t *testing.T) {
	for i, r := range gitleaksRules {
		p := testPolicy(t)
		p.detectors = vendorSet()[i : i+1]
		p.matcher = newMatcher(p.detectors, envNameKeywords)
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
	splice([]byte(text), p.textEdits([]byte(text), -1, c))
	return c[id] > 0
}

// TestVendorTokensInPlaces checks tokens named in bug reports, in the places they
// were found, and that each mask names its rule and covers the whole token.
func TestVendorTokensInPlaces(t *testing.T) {
	p := testPolicy(t)
	for _, c := range []struct {
		file, in, secret, rule string
	}{
		{"cluster-resources/pods/shop.json", `{"kind":"PodList","items":[{"spec":{"containers":[{"env":[{"name":"AWS_ACCESS_KEY_ID","value":"AKIAZ3MHKQ7XW2PLNB4R"}]}]}}]}`, "AKIAZ3MHKQ7XW2PLNB4R", RuleAWSAccessKeyID},
		{"cluster-resources/pods/logs/shop/web/app.log", "using token ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo for the API\n", "ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo", "github-pat"},
		{"cluster-resources/pods/logs/shop/web/app.log", `{"msg":"clone","token":"glpat-x2Rk9vLmQ7bN3cT5yW1z"}` + "\n", "glpat-x2Rk9vLmQ7bN3cT5yW1z", "credential-field"},
		{"nodes/n1/kubelet.log", `Nov 29 10:00:00 n1 kubelet[1]: I1129 10:00:00.0 1 a.go:1] "x" output="posting to https://hooks.slack.com/services/T01ABCDEF23/B04GHIJKL56/a1B2c3D4e5F6g7H8i9J0k1L2"` + "\n", "https://hooks.slack.com/services/T01ABCDEF23/B04GHIJKL56/a1B2c3D4e5F6g7H8i9J0k1L2", "slack-webhook-url"},
		{"nodes/n1/kubelet.log", `Nov 29 10:00:00 n1 kubelet[1]: E1129 10:00:00.0 1 kuberuntime_manager.go:1] "Unhandled Error" err="container &Container{Name:app,Env:[]EnvVar{EnvVar{Name:DB_PASSWORD,Value:hunter2,ValueFrom:nil,},EnvVar{Name:MODE,Value:fast,ValueFrom:nil,},}}"` + "\n", "hunter2", RuleCredentialEnv},
		{"cluster-resources/configmaps/shop.json", `{"kind":"ConfigMapList","items":[{"data":{"db":"postgres://app:s3cr3t@db.shop.svc/orders"}}]}`, "app:s3cr3t", RuleURLPassword},
		{"cluster-resources/pods/shop.json", `{"kind":"PodList","items":[{"spec":{"containers":[{"env":[{"name":"SENTRY_DSN","value":"3f9a1c0b7d2e4f6a8b9c"},{"name":"STRIPE_KEY","value":"rk_prod_notaformat"}]}]}}]}`, "rk_prod_notaformat", RuleCredentialEnv},
	} {
		out, rules := applyOnce(t, p, c.file, c.in)
		if strings.Contains(out, c.secret) || rules[c.rule] == 0 {
			t.Errorf("%s: %q not masked as %s:\n%s\n%v", c.file, c.secret, c.rule, out, rules)
		}
		if !strings.Contains(out, mask(p, c.rule, c.secret)) {
			t.Errorf("%s: mask of the whole %q missing:\n%s", c.file, c.secret, out)
		}
	}
	// Runtime and plain values under credential-like names stay.
	in := `{"kind":"PodList","items":[{"spec":{"containers":[{"env":[{"name":"CACHE_KEY","value":"true"},{"name":"TOKEN_FILE","value":"/var/run/token"},{"name":"WEBHOOK_URL","value":"https://hooks.example.com/notify"},{"name":"MAX_KEY","value":"300"},{"name":"SECRET_NAME","value":"regcred"}]}]}}]}`
	if out, rules := applyOnce(t, p, "cluster-resources/pods/shop.json", in); out != in {
		t.Errorf("plain values masked:\n%s\n%v", out, rules)
	}
}

// TestLiteralPrefix checks the case-sensitive start an anchored pattern's matches
// share, which decides where the pattern is not run.
func TestLiteralPrefix(t *testing.T) {
	for re, want := range map[string]string{
		`\b(API-[A-Z0-9]{26})(?:[\x60'"\s;]|\\[nr]|$)`:          "API-",
		`ghp_[0-9a-zA-Z]{36}`:                                   "ghp_",
		`(?:ghp|gho)_x`:                                         "gh",
		`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`: "A",
		`(?i)\b(api-[a-z]{3})`:                                  "",
		`(a|b)c`:                                                "",
		`é_x`:                                                   "",
		`^abc`:                                                  "",
	} {
		if got := string(literalPrefix(re)); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", re, got, want)
		}
	}
}
