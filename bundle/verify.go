package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Problem is one way a bundle differs from its manifest.
type Problem struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // manifest, missing, extra, size, checksum
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return fmt.Sprintf("%s: %s", p.Kind, p.Detail)
	}
	return fmt.Sprintf("%s: %s: %s", p.Kind, p.Path, p.Detail)
}

// Verify checks every file against the manifest: presence, size and sha256, and files
// the manifest does not list. An empty result means the bundle is intact.
func Verify(b *Bundle) []Problem {
	if b.Manifest == nil {
		return []Problem{{Kind: "manifest", Detail: ManifestPath + " is missing: this is not a podflow bundle, or it was truncated"}}
	}
	var problems []Problem
	listed := map[string]bool{ManifestPath: true}
	for _, f := range b.Manifest.Files {
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
	return problems
}

// digest is a file's size and checksum: recorded by Scan, or computed from its bytes.
func (b *Bundle) digest(name string) (Digest, bool) {
	if d, ok := b.digests[name]; ok {
		return d, true
	}
	data, ok := b.files[name]
	if !ok {
		return Digest{}, false
	}
	return Digest{Size: int64(len(data)), SHA256: sha256.Sum256(data)}, true
}
