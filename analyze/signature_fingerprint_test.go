package analyze

import (
	"strings"
	"testing"
)

const fingerprintSig = `- id: disk-full-on-path
  stage: runtime
  title: the program ran out of disk
  component: application
  patterns: ['write (?P<path>/\S+): no space left on device \((?P<device>\w+)\)']
  cause: 'the program cannot write {path} on {device}, the disk is full'
  fix: free space on {device}
  fingerprint: [device]
  examples:
    fires: ['write /data/x: no space left on device (sda)']
    quiet: ['write /data/x: permission denied']
`

// TestSignatureFingerprint checks the fingerprint field: it names captures, and the
// key is made of their values alone, so two lines differing only in the path share it.
func TestSignatureFingerprint(t *testing.T) {
	sigs, err := ParseSignatures("fp.yaml", []byte(fingerprintSig))
	if err != nil {
		t.Fatal(err)
	}
	s := sigs[0]
	cause, key, ok := s.ExplainKey("write /data/a/b: no space left on device (sdb)")
	if !ok || key != "device=sdb" || !strings.Contains(cause, "/data/a/b") {
		t.Fatalf("ExplainKey: %q %q %v", cause, key, ok)
	}
	_, key2, _ := s.ExplainKey("write /var/lib/other: no space left on device (sdb)")
	if key2 != key {
		t.Errorf("same device, other path: key %q, want %q", key2, key)
	}
	if _, key3, _ := s.ExplainKey("write /data/a/b: no space left on device (nvme0)"); key3 == key {
		t.Errorf("another device shares the key %q", key3)
	}
	// Without the field, there is no key and the index keeps its default.
	plain := strings.Replace(fingerprintSig, "  fingerprint: [device]\n", "", 1)
	sigs, err = ParseSignatures("plain.yaml", []byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	if _, k, ok := sigs[0].ExplainKey("write /x: no space left on device (sda)"); !ok || k != "" {
		t.Errorf("no fingerprint field: key %q", k)
	}
	// A name that is no capture is refused, naming file, line and field.
	bad := strings.Replace(fingerprintSig, "[device]", "[device, volume]", 1)
	_, err = ParseSignatures("bad.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:") || !strings.Contains(err.Error(), "fingerprint[1]") {
		t.Errorf("unknown capture in fingerprint: %v", err)
	}
}
