package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"podflow.dev/podflow/untrusted"
)

// Problem is one way a bundle differs from its manifest.
type Problem struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // manifest, missing, extra, size, checksum
	Detail string `json:"detail"`
}

// String is the problem as one line of text; the path comes from the bundle and is
// escaped, so an entry name cannot forge lines or send terminal escapes.
func (p Problem) String() string {
	if p.Path == "" {
		return fmt.Sprintf("%s: %s", p.Kind, untrusted.Text(p.Detail))
	}
	return fmt.Sprintf("%s: %s: %s", p.Kind, untrusted.Text(p.Path), untrusted.Text(p.Detail))
}

// Verify checks every file against the manifest: presence, size and sha256, and files
// the manifest does not list. An empty result means the bundle is intact.
func Verify(b *Bundle) []Problem {
	problems, _ := VerifyContext(context.Background(), b) // never cancelled
	return problems
}

// VerifyContext is Verify that stops, with ctx's error, once ctx is done.
func VerifyContext(ctx context.Context, b *Bundle) ([]Problem, error) {
	if b.Manifest == nil {
		return []Problem{{Kind: "manifest", Detail: ManifestPath + " is missing: this is not a podflow bundle, or it was truncated"}}, nil
	}
	var problems []Problem
	listed := map[string]bool{ManifestPath: true}
	for _, f := range b.Manifest.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if listed[f.Path] {
			problems = append(problems, Problem{Path: f.Path, Kind: "manifest", Detail: "listed twice"})
			continue
		}
		listed[f.Path] = true
		d, ok := b.digest(f.Path)
		if !ok {
			problems = append(problems, Problem{Path: f.Path, Kind: "missing", Detail: "listed in the manifest but not in the bundle"})
			continue
		}
		if d.Size != f.Size {
			problems = append(problems, Problem{Path: f.Path, Kind: "size", Detail: fmt.Sprintf("manifest says %d bytes, file has %d", f.Size, d.Size)})
			continue
		}
		if got := hex.EncodeToString(d.SHA256[:]); got != f.SHA256 {
			problems = append(problems, Problem{Path: f.Path, Kind: "checksum", Detail: fmt.Sprintf("sha256 %s, manifest says %s", got, f.SHA256)})
		}
	}
	for _, n := range b.names {
		if !listed[n] {
			problems = append(problems, Problem{Path: n, Kind: "extra", Detail: "not listed in the manifest"})
		}
	}
	return problems, nil
}

// digest is a file's size and checksum: recorded by Scan, or by OpenReadOnce for a
// file it keeps compressed, or computed from the file's bytes.
func (b *Bundle) digest(name string) (Digest, bool) {
	if d, ok := b.digests[name]; ok {
		return d, true
	}
	if _, packed := b.packed[name]; packed {
		d, ok := b.sums[name]
		return d, ok
	}
	data, ok := b.files[name]
	if !ok {
		return Digest{}, false
	}
	return Digest{Size: int64(len(data)), SHA256: sha256.Sum256(data)}, true
}
