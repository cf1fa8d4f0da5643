package redact

import (
	"path/filepath"
	"reflect"
	"testing"

	"podflow.dev/podflow/bundle"
)

func leakyFiles() map[string][]byte {
	return map[string][]byte{
		"cluster-resources/pods/shop.json":             []byte(podJSON),
		"cluster-resources/secrets/shop.json":          []byte("{\n  \"items\": [\n    {\"metadata\": {\"name\": \"db\"},\n     \"data\": {\"password\": \"aHVudGVyMg==\"}}\n  ]\n}\n"),
		"cluster-resources/pods/logs/shop/web/app.log": []byte("starting\nconnecting to postgres://app:hunter2@db/x\nAuthorization: Bearer abc123def456\n"),
		"nodes/n1/kubelet.log":                         syntheticKubeletJournal(64 << 10),
		"nodes/n1/kubelet-config.yaml":                 []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  webhook:\n    enabled: true\nauthorization:\n  mode: Webhook\ntlsPrivateKeyFile: /var/lib/kubelet/pki/kubelet.key\n"),
	}
}

func TestScanReportsFileLineRule(t *testing.T) {
	b, err := bundle.New("test", leakyFiles())
	if err != nil {
		t.Fatal(err)
	}
	got := Scan(b)
	want := []Hit{
		{File: "cluster-resources/pods/logs/shop/web/app.log", Line: 2, Rule: RuleURLPassword},
		{File: "cluster-resources/pods/logs/shop/web/app.log", Line: 3, Rule: RuleBearerToken},
		{File: "cluster-resources/pods/shop.json", Line: 10, Rule: RuleCredentialEnv},
		{File: "cluster-resources/pods/shop.json", Line: 18, Rule: RuleCredentialAssign},
		{File: "cluster-resources/pods/shop.json", Line: 20, Rule: RuleCredentialEnv},
		{File: "cluster-resources/pods/shop.json", Line: 21, Rule: RuleCredentialEnv},
		{File: "cluster-resources/pods/shop.json", Line: 22, Rule: RuleCredentialEnv},
		{File: "cluster-resources/secrets/shop.json", Line: 4, Rule: RuleSecretValue},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan:\ngot:  %+v\nwant: %+v", got, want)
	}
}

func TestRedactedBundleScansClean(t *testing.T) {
	p := testPolicy(t)
	target := filepath.Join(t.TempDir(), "out.tar.gz")
	w, err := bundle.Create(target, bundle.WriterOptions{Filter: p})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range leakyFiles() {
		if err := w.WriteFile(name, data); err != nil {
			t.Fatal(err)
		}
	}
	m := &bundle.Manifest{PodflowVersion: "test"}
	m.Redaction = p.Redaction()
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(target, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if problems := bundle.Verify(b); len(problems) != 0 {
		t.Fatalf("verify: %v", problems)
	}
	if hits := Scan(b); len(hits) != 0 {
		t.Fatalf("redacted bundle has hits: %+v", hits)
	}
	if b.Manifest.Redaction.Total != 8 {
		t.Fatalf("manifest redaction = %+v", b.Manifest.Redaction)
	}
}

func TestRealisticLogsScanClean(t *testing.T) {
	p := testPolicy(t)
	for name, data := range map[string][]byte{
		"nodes/n1/kubelet.log":                         syntheticKubeletJournal(1 << 20),
		"cluster-resources/pods/logs/shop/web/app.log": syntheticContainerLog(1<<20, false),
	} {
		if hits := p.ScanFile(name, data); len(hits) != 0 {
			t.Errorf("%s: false positives: %+v", name, hits[:min(len(hits), 5)])
		}
	}
	// With credentials sprinkled in, every one of them is found.
	log := syntheticContainerLog(1<<20, true)
	hits := p.ScanFile("app.log", log)
	byRule := map[string]int{}
	for _, h := range hits {
		byRule[h.Rule]++
	}
	if byRule[RuleURLPassword] == 0 || byRule[RuleBearerToken] == 0 || len(byRule) != 2 {
		t.Fatalf("hits by rule = %v", byRule)
	}
}

// TestScanFindsVendorTokensLeftByOlderPolicies checks that a bundle redacted before
// the vendor detectors existed (here: a token left as it was) scans with the token's
// gitleaks rule, so collect's leak check refuses to package it.
func TestScanFindsVendorTokensLeftByOlderPolicies(t *testing.T) {
	files := map[string][]byte{
		"cluster-resources/pods/logs/shop/web/app.log": []byte("pushing with <redacted:credential-assignment:3f9a1c> and ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo\n"),
		"nodes/n1/kubelet.log":                         []byte(`Nov 29 10:00:00 n1 kubelet[1]: I1129 10:00:00.0 1 a.go:1] "x" output="xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"` + "\n"),
	}
	b, err := bundle.New("test", files)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{
		{File: "cluster-resources/pods/logs/shop/web/app.log", Line: 1, Rule: "github-pat"},
		{File: "nodes/n1/kubelet.log", Line: 1, Rule: "slack-bot-token"},
	}
	if got := Scan(b); !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan:\ngot:  %+v\nwant: %+v", got, want)
	}
}
