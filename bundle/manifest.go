package bundle

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is the bundle format this podflow writes. Readers accept any minor
// version of the same major and refuse other majors.
const FormatVersion = "1.0"

// FormatMajor is the major part of FormatVersion.
const FormatMajor = 1

// Source statuses recorded in the manifest.
const (
	StatusOK      = "ok"
	StatusPartial = "partial"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Manifest is podflow.json: what a bundle holds, how it was collected and the checksum
// of every other file.
type Manifest struct {
	FormatVersion  string    `json:"formatVersion"`
	PodflowVersion string    `json:"podflowVersion"`
	CollectedAt    time.Time `json:"collectedAt"`
	// Type is "cluster" for `podflow collect`, "node" for `podflow collect node`,
	// "merged" for a merge of several bundles, "converted" for an import.
	Type      string    `json:"type,omitempty"`
	Scope     Scope     `json:"scope"`
	Cluster   Cluster   `json:"cluster"`
	Sources   []Source  `json:"sources"`
	Files     []File    `json:"files"`
	Redaction Redaction `json:"redaction"`
	// Identity is who collected and what it could do (optional, cluster bundles only).
	Identity *Identity `json:"identity,omitempty"`
}

// Scope records what the collector was asked for.
type Scope struct {
	AllNamespaces bool     `json:"allNamespaces,omitempty"`
	Namespaces    []string `json:"namespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	Pod           string   `json:"pod,omitempty"`
	Since         string   `json:"since,omitempty"`
	Node          string   `json:"node,omitempty"`
}

// Cluster records facts about the cluster at collection time.
type Cluster struct {
	Name          string `json:"name,omitempty"`
	Server        string `json:"server,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// ClockSkewSeconds is the API server's clock minus the collector's clock.
	ClockSkewSeconds float64 `json:"clockSkewSeconds,omitempty"`
}

// Source is one collection step and how it went.
type Source struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Error      string   `json:"error,omitempty"`
	DurationMS int64    `json:"durationMs"`
	Files      []string `json:"files,omitempty"`
}

// File is one file of the bundle with its size and checksum.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Redaction records what the redaction policy removed; it never holds a value.
type Redaction struct {
	Policy  string         `json:"policy"`
	Version string         `json:"version,omitempty"`
	Enabled bool           `json:"enabled"`
	Total   int            `json:"total"`
	ByRule  map[string]int `json:"byRule,omitempty"`
	// ByFile maps a bundle path to counts per rule.
	ByFile map[string]map[string]int `json:"byFile,omitempty"`
}

// Add records n redactions of rule in file.
func (r *Redaction) Add(file, rule string, n int) {
	if n == 0 {
		return
	}
	if r.ByRule == nil {
		r.ByRule = map[string]int{}
	}
	if r.ByFile == nil {
		r.ByFile = map[string]map[string]int{}
	}
	if r.ByFile[file] == nil {
		r.ByFile[file] = map[string]int{}
	}
	r.Total += n
	r.ByRule[rule] += n
	r.ByFile[file][rule] += n
}

// ParseManifest decodes podflow.json and checks that its format version is readable.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ManifestPath, err)
	}
	if err := CheckFormatVersion(m.FormatVersion); err != nil {
		return nil, err
	}
	return &m, nil
}

// CheckFormatVersion refuses format versions whose major this podflow cannot read.
func CheckFormatVersion(v string) error {
	if v == "" {
		return &FormatVersionError{Version: v}
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n != FormatMajor {
		return &FormatVersionError{Version: v}
	}
	return nil
}

// Source returns the named source, or nil.
func (m *Manifest) Source(name string) *Source {
	for i := range m.Sources {
		if m.Sources[i].Name == name {
			return &m.Sources[i]
		}
	}
	return nil
}

// Incomplete lists the sources that failed or were only partly collected: what a
// collector reports, and what makes it exit with its partial status.
func (m *Manifest) Incomplete() []Source {
	var out []Source
	for _, s := range m.Sources {
		if s.Status == StatusFailed || s.Status == StatusPartial {
			out = append(out, s)
		}
	}
	return out
}
