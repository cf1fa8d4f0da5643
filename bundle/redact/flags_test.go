package redact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func parseFlags(t *testing.T, args ...string) (*Policy, error) {
	t.Helper()
	var f Flags
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--" + FlagNoRedact:
			f.NoRedact = true
		case "--" + FlagContainsSecrets:
			f.ContainsSecrets = true
		case "--" + FlagKey:
			i++
			f.Key = args[i]
		case "--" + FlagConfig:
			i++
			f.ConfigFile = args[i]
		default:
			t.Fatalf("unknown flag %s", args[i])
		}
	}
	return f.Policy(nil)
}

func TestFlags(t *testing.T) {
	var ue *UsageError
	if _, err := parseFlags(t, "--no-redact"); !errors.As(err, &ue) {
		t.Fatalf("--no-redact alone: want a usage error, got %v", err)
	}
	if _, err := parseFlags(t, "--i-understand-bundle-contains-secrets"); !errors.As(err, &ue) {
		t.Fatalf("confirmation alone: want a usage error, got %v", err)
	}
	if _, err := parseFlags(t, "--no-redact", "--i-understand-bundle-contains-secrets", "--redact-key", "k"); !errors.As(err, &ue) {
		t.Fatalf("--no-redact with --redact-key: want a usage error, got %v", err)
	}
	p, err := parseFlags(t, "--no-redact", "--i-understand-bundle-contains-secrets")
	if err != nil || p.Enabled() {
		t.Fatalf("confirmed --no-redact: %v, enabled=%v", err, p != nil && p.Enabled())
	}
	p, err = parseFlags(t, "--redact-key", "fixed")
	if err != nil || !p.Enabled() || string(p.key) != "fixed" {
		t.Fatalf("--redact-key: %v", err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(cfg, []byte(userRules), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = parseFlags(t, "--redact-config", cfg)
	if err != nil || p.Redaction().Policy != "podflow+acme" {
		t.Fatalf("--redact-config: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n- name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if _, err := parseFlags(t, "--redact-config", bad); !errors.As(err, &ce) {
		t.Fatalf("bad config: want a *ConfigError, got %v", err)
	}
}
