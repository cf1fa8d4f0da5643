//go:build tools

// Package tools pins crictl.
package tools

import _ "sigs.k8s.io/cri-tools/cmd/crictl"
