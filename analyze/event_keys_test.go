package analyze

import "testing"

// An event is added once by its UID, whichever way the UID is spelled: one in the
// form Kubernetes gives is kept as bytes, any other as it is, and two different
// spellings are two events.
func TestEventKeysTellEveryUIDApart(t *testing.T) {
	var k eventKeys
	keys := []string{
		"3f2a9c1e-7b4d-4e8a-9c0f-1a2b3c4d5e6f",
		"3F2A9C1E-7B4D-4E8A-9C0F-1A2B3C4D5E6F", // the same digits in capitals
		"3f2a9c1e7b4d4e8a9c0f1a2b3c4d5e6f",     // without dashes
		"3f2a9c1e-7b4d-4e8a-9c0f-1a2b3c4d5e6g", // not hex
		"3f2a9c1e-7b4d-4e8a-9c0f-1a2b3c4d5e60",
		"shop/web-5d85c85fbb.17a3",
		"uid-a",
		"",
	}
	for _, key := range keys {
		if k.has(key) {
			t.Errorf("%q seen before it was added", key)
		}
		if !k.add(key) {
			t.Errorf("%q taken for one added before", key)
		}
	}
	for _, key := range keys {
		if !k.has(key) || k.add(key) {
			t.Errorf("%q added twice", key)
		}
	}
	if len(k.uuids) != 2 {
		t.Errorf("%d UIDs kept as bytes, want 2", len(k.uuids))
	}
	if u, ok := parseUUID(keys[0]); !ok || u != [16]byte{0x3f, 0x2a, 0x9c, 0x1e, 0x7b, 0x4d, 0x4e, 0x8a, 0x9c, 0x0f, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f} {
		t.Errorf("parseUUID(%q) = %x, %v", keys[0], u, ok)
	}
}
