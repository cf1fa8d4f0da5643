package node

import (
	"bytes"
	"time"
	"unicode/utf8"
)

// Collection is collection.json: what was run on the node, how each step went and the
// node's clock, so an analyzer can correct for skew between the node and the API server
// and tell "no evidence" from "not collected".
type Collection struct {
	Node           string `json:"node"`
	HostRoot       string `json:"hostRoot"`
	PodflowVersion string `json:"podflowVersion,omitempty"`
	// CommandLine is the podflow invocation that produced the bundle.
	CommandLine []string  `json:"commandLine,omitempty"`
	StartedAt   time.Time `json:"startedAt"`
	// Clock is the node's wall clock when collection finished (RFC3339Nano).
	Clock time.Time `json:"clock"`
	// BootTime is the node's boot instant, for turning the kernel's seconds-since-boot
	// timestamps (plain dmesg, /dev/kmsg) into wall time.
	BootTime *time.Time `json:"bootTime,omitempty"`
	// Since is the lower bound asked of the journals.
	Since   time.Time    `json:"since"`
	Runtime *RuntimeInfo `json:"runtime,omitempty"`
	Steps   []Step       `json:"steps"`
}

// RuntimeInfo is what the container runtime said about itself over CRI.
type RuntimeInfo struct {
	Endpoint          string `json:"endpoint"`
	RuntimeName       string `json:"runtimeName,omitempty"`
	RuntimeVersion    string `json:"runtimeVersion,omitempty"`
	RuntimeAPIVersion string `json:"runtimeApiVersion,omitempty"`
}

// Step is one attempt at getting evidence: a command run, a file read or a CRI call.
type Step struct {
	// Source is the manifest source the step belongs to.
	Source string `json:"source"`
	// Command is the argv of a command that was run.
	Command []string `json:"command,omitempty"`
	// Read names a file read or a CRI call made instead of a command.
	Read     string `json:"read,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Error    string `json:"error,omitempty"`
	// Stderr is the end of the command's stderr, bounded.
	Stderr     string `json:"stderr,omitempty"`
	DurationMS int64  `json:"durationMs"`
	// Bytes is how much evidence the step produced, after bounding.
	Bytes int64 `json:"bytes"`
	// TruncatedBytes is how much older output was dropped to respect the byte cap.
	TruncatedBytes int64 `json:"truncatedBytes,omitempty"`
	// Used is true when the step's output went into the bundle (fallbacks that were not
	// needed, or found nothing, are false).
	Used bool `json:"used"`
	// Note explains a decision, e.g. why a fallback was tried.
	Note string `json:"note,omitempty"`
}

const stderrExcerpt = 2048

// excerpt keeps the end of a command's stderr, where the reason for a failure usually is,
// as valid UTF-8 so collection.json stays readable.
func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > stderrExcerpt {
		b = b[len(b)-stderrExcerpt:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func exitCode(n int) *int { return &n }
