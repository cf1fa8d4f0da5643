package catalog

import (
	"bytes"
	"testing"
)

// BenchmarkLoadOnly is decoding the embedded catalog, without building the index.
func BenchmarkLoadOnly(b *testing.B) {
	for b.Loop() {
		if _, err := Load(bytes.NewReader(embedded)); err != nil {
			b.Fatal(err)
		}
	}
}
