package analyze

import (
	"strings"
	"testing"
)

func TestSaysStarted(t *testing.T) {
	for line, want := range map[string]bool{
		"Listening on :8080":                             true,
		"INFO server started in 41.2s":                   true,
		"Tomcat started on port(s): 8080 (http)":         true,
		"database system is ready to accept connections": true,
		"server not started: config missing":             false,
		"failed to start listening on :8080":             false,
		"loading configuration":                          false,
	} {
		if got := SaysStarted(line); got != want {
			t.Errorf("SaysStarted(%q) = %t, want %t", line, got, want)
		}
	}
}

// A probe's HTTP status says what is wrong with the probe when it is an answer the
// application gives to a request it does not accept.
func TestProbeStatusMeaning(t *testing.T) {
	for out, want := range map[string]string{
		"HTTP probe failed with statuscode: 401":              "credentials",
		"HTTP probe failed with statuscode: 403":              "credentials",
		"HTTP probe failed with statuscode: 404":              "path",
		"HTTP probe failed with statuscode: 503":              "",
		"dial tcp 10.0.0.1:8080: connect: connection refused": "",
	} {
		got := ProbeStatusMeaning(out)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("ProbeStatusMeaning(%q) = %q, want one about %q", out, got, want)
		}
	}
}
