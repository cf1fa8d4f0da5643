package redact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncryptedMappingRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapping.yaml")
	m := &Mapping{Version: MappingVersion, Names: map[string]string{"shop": "namespace-1"},
		IPs: map[string]string{"10.0.0.7": "10.1.0.1"}, UIDs: map[string]string{}}
	if err := m.SaveWith(path, []byte("correct horse")); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "shop") || strings.Contains(string(raw), "10.0.0.7") || !strings.Contains(string(raw), mappingCipher) {
		t.Fatalf("encrypted mapping shows what it maps or not its scheme:\n%s", raw)
	}
	got, err := LoadMappingWith(path, []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Names["shop"] != "namespace-1" || got.IPs["10.0.0.7"] != "10.1.0.1" {
		t.Fatalf("round trip lost entries: %+v", got)
	}
	for _, pass := range []string{"", "wrong horse"} {
		if _, err := LoadMappingWith(path, []byte(pass)); !errors.Is(err, ErrMappingPassphrase) || !strings.Contains(err.Error(), path) {
			t.Errorf("passphrase %q: err = %v, want ErrMappingPassphrase naming the file", pass, err)
		}
	}
	// Tampering with the ciphertext is caught by the authentication tag.
	tampered := strings.Replace(string(raw), "data: ", "data: AAAA", 1)
	if err := os.WriteFile(path, []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMappingWith(path, []byte("correct horse")); err == nil {
		t.Fatal("a tampered mapping must not load")
	}
}

func TestPlainMappingReadsWithOrWithoutPassphrase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapping.yaml")
	m := &Mapping{Version: MappingVersion, Names: map[string]string{"shop": "namespace-1"}, IPs: map[string]string{}, UIDs: map[string]string{}}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"", "new passphrase"} {
		got, err := LoadMappingWith(path, []byte(pass))
		if err != nil || got.Names["shop"] != "namespace-1" {
			t.Fatalf("passphrase %q: %v %+v", pass, err, got)
		}
	}
}

// TestEncryptedMappingIterationsBounded: the key-derivation count is read from the
// file; 2e9 is refused before any derivation runs.
func TestEncryptedMappingIterationsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapping.yaml")
	m := &Mapping{Version: MappingVersion, Names: map[string]string{}, IPs: map[string]string{}, UIDs: map[string]string{}}
	if err := m.SaveWith(path, []byte("correct horse")); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Replace(string(raw), "iterations: 600000", "iterations: 2000000000", 1)
	if huge == string(raw) {
		t.Fatalf("no iterations field to change in:\n%s", raw)
	}
	if err := os.WriteFile(path, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMappingWith(path, []byte("correct horse")); err == nil || !strings.Contains(err.Error(), "iterations") {
		t.Errorf("2e9 iterations: %v, want refused", err)
	}
}
