//go:build tools

// Package tools pins kwok, which the scale phase runs to keep thousands of fake nodes and
// pods alive on the test bed's real API server.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
