package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
)

// BenchmarkIndex measures starting a server over the demo bundle: every list decoded
// and indexed.
func BenchmarkIndex(b *testing.B) {
	bun, err := bundle.Open(demo, bundle.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New([]*bundle.Bundle{bun}, Options{Token: token}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListPodsTable measures what kubectl get pods -A asks for: every pod as a
// Table row.
func BenchmarkListPodsTable(b *testing.B) {
	bun, err := bundle.Open(demo, bundle.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New([]*bundle.Bundle{bun}, Options{Token: token, Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/pods?limit=500", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", kubectlTable)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
