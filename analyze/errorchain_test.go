package analyze

import "testing"

// A program's wrapped error chain reads like a sentence (small words, most of them
// letters) but is output: its first link and another say what failed.
func TestErrorChainIsOutput(t *testing.T) {
	for s, want := range map[string]bool{
		"failed to start: daemon creation failed: error while initializing daemon: failed while reinitializing datapath: listing routing rules: address family not supported by protocol": true,
		"Error: failed to create containerd task: failed to create shim task: OCI runtime create failed":                                                                                  true,
		"failed to pull image: it is not there":                 false,
		"The pod failed: I think the node is down: please help": false,
		"error: the server doesn't have a resource type: pods":  false,
	} {
		if got := errorChain(s); got != want {
			t.Errorf("errorChain(%q) = %v, want %v", s, got, want)
		}
	}
}
