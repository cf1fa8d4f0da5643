package analyze

import "testing"

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
