//go:build tools

// Package tools pins the distribution registry (cmd/registry).
package tools

import _ "github.com/distribution/distribution/v3/cmd/registry"
