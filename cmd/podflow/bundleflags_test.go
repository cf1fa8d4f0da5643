package main

import "testing"

// The size limits take bytes and the sizes kubectl users write, and refuse the rest.
func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "16Gi": 16 << 30, "16GiB": 16 << 30, "500Mi": 500 << 20, "500MiB": 500 << 20,
		"20G": 20e9, "20GB": 20e9, "512k": 512e3, "512kB": 512e3, " 2Gi ": 2 << 30,
	} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "1.5x", "-1Gi", "0", "0.5", "Gi", "16GiBB", "1B2"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, b)
		}
	}
	b := byteSize(8 << 30)
	if b.String() != "8Gi" {
		t.Errorf("String() = %q, want 8Gi", b.String())
	}
}
