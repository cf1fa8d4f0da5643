package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Bundle types recorded in Manifest.Type that merging tells apart.
const (
	typeCluster = "cluster"
	typeNode    = "node"
	typeMerged  = "merged"
)

// MergeConflictError reports a path two inputs hold with different bytes.
type MergeConflictError struct {
	Path   string
	First  string // input that supplied the path first
	Second string // input whose copy differs
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("merge conflict: %s differs between %s and %s", e.Path, e.First, e.Second)
}

// MergeOptions configure Merge.
type MergeOptions struct {
	// Force replaces an existing target.
	Force bool
	// PodflowVersion is recorded in the merged manifest.
	PodflowVersion string
	// ModTime is stamped on archive entries; zero means now.
	ModTime time.Time
}

// Merge joins bundles (typically one cluster bundle and node bundles) into a new bundle at
// target and returns its manifest. Every file is copied once; a path held by two inputs
// with different bytes is a *MergeConflictError and nothing is written. Inputs with a
// manifest must verify cleanly first, because the merged bundle gets fresh checksums that
// would otherwise hide damage. Manifests and the layout marker are not copied: the merged
// bundle gets its own.
func Merge(target string, inputs []*Bundle, opts MergeOptions) (*Manifest, error) {
	return MergeContext(context.Background(), target, inputs, opts)
}

// MergeContext is Merge that stops once ctx is done, leaving nothing at target.
func MergeContext(ctx context.Context, target string, inputs []*Bundle, opts MergeOptions) (*Manifest, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("merge needs at least two bundles, got %d", len(inputs))
	}
	for _, in := range inputs {
		if in.Manifest == nil {
			continue
		}
		problems, err := VerifyContext(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("merge: verify %s: %w", in.Source, err)
		}
		if len(problems) > 0 {
			return nil, fmt.Errorf("merge: %s does not verify (%d problems, first: %s); run podflow verify on it", in.Source, len(problems), problems[0])
		}
	}
	owner, err := mergeFiles(inputs)
	if err != nil {
		return nil, err
	}
	m, err := mergeManifests(inputs, owner)
	if err != nil {
		return nil, err
	}
	m.PodflowVersion = opts.PodflowVersion
	sources := make([]string, 0, len(inputs))
	for _, in := range inputs {
		sources = append(sources, in.Source)
	}
	w, err := Create(target, WriterOptions{Force: opts.Force, Inputs: sources, ModTime: opts.ModTime})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(owner))
	for n := range owner {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return nil, fmt.Errorf("merge into %q: %w", target, err)
		}
		// Written without a filter: the inputs were redacted when collected, and the
		// bytes must stay identical to what their manifests vouched for.
		data, err := owner[n].ReadFile(n)
		if err == nil {
			err = w.write(n, data, false)
		}
		if err != nil {
			w.Abort()
			return nil, fmt.Errorf("merge into %q: %w", target, err)
		}
	}
	if err := w.Close(m); err != nil {
		return nil, err
	}
	return m, nil
}

// mergeFiles decides which input supplies each path, and finds conflicts.
func mergeFiles(inputs []*Bundle) (map[string]*Bundle, error) {
	owner := map[string]*Bundle{}
	var conflicts []error
	for _, in := range inputs {
		for _, n := range in.Names() {
			if n == ManifestPath || n == VersionMarkerPath {
				continue
			}
			first, ok := owner[n]
			if !ok {
				owner[n] = in
				continue
			}
			kept, err := first.ReadFile(n)
			if err != nil {
				return nil, fmt.Errorf("merge: %s: %w", first.Source, err)
			}
			other, err := in.ReadFile(n)
			if err != nil {
				return nil, fmt.Errorf("merge: %s: %w", in.Source, err)
			}
			if !bytes.Equal(kept, other) {
				conflicts = append(conflicts, &MergeConflictError{Path: n, First: first.Source, Second: in.Source})
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, errors.Join(conflicts...)
	}
	return owner, nil
}

// mergeManifests builds the merged manifest: the cluster bundle's scope and cluster facts,
// the latest collection time, every source with its origin, redaction counts summed.
func mergeManifests(inputs []*Bundle, owner map[string]*Bundle) (*Manifest, error) {
	m := &Manifest{Type: typeMerged, Sources: []Source{}}
	var scopeFrom *Manifest
	policies, versions := []string{}, []string{}
	enabled := true
	seen := map[string]bool{}
	for _, in := range inputs {
		im := in.Manifest
		if im == nil {
			// A bundle from another tool: its files are merged, and a source says where from.
			m.Sources = append(m.Sources, Source{Name: "import:" + filepath.Base(in.Source), Status: StatusOK, Files: ownedBy(in, owner)})
			enabled = false
			continue
		}
		if im.CollectedAt.After(m.CollectedAt) {
			m.CollectedAt = im.CollectedAt
		}
		if im.Type == typeCluster || (im.Type == typeMerged && im.Cluster != (Cluster{})) {
			if scopeFrom != nil && scopeFrom.Cluster.Server != "" && im.Cluster.Server != "" && scopeFrom.Cluster.Server != im.Cluster.Server {
				return nil, fmt.Errorf("merge: bundles come from different clusters (%s and %s)", scopeFrom.Cluster.Server, im.Cluster.Server)
			}
			if scopeFrom == nil {
				scopeFrom = im
			}
		}
		prefix := originPrefix(in)
		for _, s := range im.Sources {
			if prefix != "" && !strings.HasPrefix(s.Name, prefix) {
				s.Name = prefix + s.Name
			}
			key := fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%s", s.Name, s.Status, s.Error, s.DurationMS, strings.Join(s.Files, "\x00"))
			if seen[key] {
				continue // the same bundle given twice
			}
			seen[key] = true
			m.Sources = append(m.Sources, s)
		}
		mergeRedaction(&m.Redaction, im.Redaction, in, owner)
		if im.Redaction.Policy != "" && !slices.Contains(policies, im.Redaction.Policy) {
			policies = append(policies, im.Redaction.Policy)
		}
		if im.Redaction.Version != "" && !slices.Contains(versions, im.Redaction.Version) {
			versions = append(versions, im.Redaction.Version)
		}
		enabled = enabled && im.Redaction.Enabled
	}
	if scopeFrom == nil {
		scopeFrom = firstManifest(inputs)
	}
	if scopeFrom != nil {
		m.Scope, m.Cluster, m.Identity = scopeFrom.Scope, scopeFrom.Cluster, scopeFrom.Identity
		if scopeFrom.Type == typeNode {
			// Without a cluster bundle the merge spans several nodes, not one.
			m.Scope.Node = ""
		}
	}
	if m.CollectedAt.IsZero() {
		m.CollectedAt = time.Now().UTC()
	}
	m.Redaction.Policy = strings.Join(policies, "+")
	m.Redaction.Version = strings.Join(versions, "+")
	// The merge is redacted only if every part was.
	m.Redaction.Enabled = enabled
	return m, nil
}

// originPrefix names where a node bundle's sources came from, e.g. "node/worker-1:", so
// they stay apart from the cluster's and from other nodes'.
func originPrefix(in *Bundle) string {
	if in.Manifest.Type != typeNode {
		return ""
	}
	node := in.Manifest.Scope.Node
	if node == "" {
		for _, n := range in.Names() {
			if info := ParsePath(n); info.Area == "node" {
				node = info.Node
				break
			}
		}
	}
	if node == "" {
		node = filepath.Base(in.Source)
	}
	return "node/" + node + ":"
}

// mergeRedaction adds one input's counts. Per-file counts are taken only for files this
// input supplied, so a file present identically in two inputs is not counted twice.
func mergeRedaction(dst *Redaction, src Redaction, in *Bundle, owner map[string]*Bundle) {
	if len(src.ByFile) == 0 {
		dst.Total += src.Total
		for rule, n := range src.ByRule {
			if dst.ByRule == nil {
				dst.ByRule = map[string]int{}
			}
			dst.ByRule[rule] += n
		}
		return
	}
	files := make([]string, 0, len(src.ByFile))
	for f := range src.ByFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if o, ok := owner[f]; ok && o != in {
			continue
		}
		for rule, n := range src.ByFile[f] {
			dst.Add(f, rule, n)
		}
	}
}

func ownedBy(in *Bundle, owner map[string]*Bundle) []string {
	var out []string
	for _, n := range in.Names() {
		if owner[n] == in {
			out = append(out, n)
		}
	}
	return out
}

func firstManifest(inputs []*Bundle) *Manifest {
	for _, in := range inputs {
		if in.Manifest != nil {
			return in.Manifest
		}
	}
	return nil
}
