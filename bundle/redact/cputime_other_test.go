//go:build !unix

package redact

import "time"

// processCPU reports that the CPU time of the process is not known here.
func processCPU() (time.Duration, bool) { return 0, false }
